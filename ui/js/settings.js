// The Settings view (#settings): each provider with its key state (set in the
// keyring "…a1b2", from an environment variable, not set), Set / Replace /
// Remove a key (typed into a password field, never shown back), Test
// connection; the default model and the routes. Every decision is the
// server's (docs/api.md, "Models, providers and keys").

import { api } from "./api.js";
import { byId, h, showText } from "./dom.js";
import { fillModelSelect, forgetModels, loadModels } from "./models.js";

const CLASSES = [
  ["question", "Questions"],
  ["small_edit", "Small edits"],
  ["large_change", "Large changes"],
  ["long_running", "Long-running tasks"],
];

function keyWords(provider) {
  const key = provider.key || {};
  if (key.state === "keyring") return `Key in the keyring ${key.masked}`;
  if (key.state === "env") return `Key from ${key.env} ${key.masked}`;
  return provider.needs_key ? "No key" : "No key needed";
}

function reachWords(provider) {
  if (provider.reachable === true) {
    const n = provider.models.length;
    return `answers · ${n} model${n === 1 ? "" : "s"}`;
  }
  if (provider.reachable === false) return provider.error || "does not answer";
  return provider.local ? "" : "not asked (no key)";
}

export class SettingsView {
  constructor({ onChanged = () => {} } = {}) {
    this.onChanged = onChanged;
    this.view = byId("settings-view");
    this.list = byId("provider-list");
    this.keyring = byId("settings-keyring");
    this.defaultModel = byId("default-model");
    this.routing = byId("routing-grid");
    this.error = byId("settings-error");
    this.saved = byId("settings-saved");
    this.rows = new Map();
    this.routeSelects = new Map();
    for (const [name, label] of CLASSES) {
      const select = h("select", { class: "input select", id: `route-${name}`, "data-testid": `route-${name}` });
      this.routeSelects.set(name, select);
      this.routing.append(h("label", { for: `route-${name}` }, label), select);
      select.addEventListener("change", () => this.save({ routing: { [name]: select.value || null } }));
    }
    this.defaultModel.addEventListener("change", () =>
      this.save({ default_model: this.defaultModel.value || null }));
  }

  show() {
    this.view.hidden = false;
    this.refresh(false);
  }

  hide() {
    this.view.hidden = true;
  }

  async refresh(fresh = true) {
    let overview;
    try {
      overview = await loadModels({ refresh: fresh });
    } catch (error) {
      showText(this.error, `Could not load the providers: ${error.message}`);
      return;
    }
    this.render(overview);
  }

  render(overview) {
    const keyring = overview.keyring || { ok: true };
    this.keyring.hidden = keyring.ok;
    this.keyring.textContent = keyring.ok
      ? ""
      : `${keyring.reason.charAt(0).toUpperCase()}${keyring.reason.slice(1)}. Sparrow never ` +
        "writes a key to a file: set the provider's environment variable instead " +
        "(ANTHROPIC_API_KEY, OPENAI_API_KEY, …).";
    this.list.replaceChildren(...overview.providers.map((p) => this.providerRow(p, keyring.ok)));
    const none = [["", "None (the demo)"]];
    fillModelSelect(this.defaultModel, overview, { first: none, chosen: overview.default || "" });
    for (const [name, select] of this.routeSelects) {
      fillModelSelect(select, overview, {
        first: [["", "The default model"]],
        chosen: overview.routing?.[name] || "",
      });
    }
  }

  providerRow(provider, keyringOk) {
    const status = h("p", { class: "provider-status", "data-testid": "provider-status" },
      reachWords(provider));
    const result = h("p", { class: "provider-test", "data-testid": "provider-test-result", hidden: true });
    const keyState = h("span", { class: "provider-key", "data-testid": "provider-key",
      dataset: { state: provider.key?.state || "none" } }, keyWords(provider));
    const input = h("input", {
      type: "password", class: "input input-mono input-small", autocomplete: "off",
      spellcheck: "false", placeholder: "Paste the key", "aria-label": `${provider.label} API key`,
      "data-testid": "provider-key-input",
    });
    const save = h("button", { type: "button", class: "btn btn-primary btn-small",
      "data-testid": "provider-key-save" }, "Save key");
    const form = h("div", { class: "provider-key-form", hidden: true }, input, save);
    const hasStored = provider.key?.state === "keyring";
    const setButton = h("button", {
      type: "button", class: "btn btn-secondary btn-small", "data-testid": "provider-key-set",
      disabled: !keyringOk, title: keyringOk ? undefined : "No keyring: use the environment variable",
    }, hasStored ? "Replace key" : "Set key");
    const removeButton = h("button", { type: "button", class: "btn btn-danger-ghost btn-small",
      "data-testid": "provider-key-remove", hidden: !hasStored }, "Remove");
    const testButton = h("button", { type: "button", class: "btn btn-ghost btn-small",
      "data-testid": "provider-test" }, "Test connection");

    setButton.addEventListener("click", () => {
      form.hidden = !form.hidden;
      if (!form.hidden) input.focus();
    });
    const submit = async () => {
      const key = input.value;
      input.value = ""; // never kept in the page longer than the request
      await this.change(() => api.setKey(provider.name, key), result);
    };
    save.addEventListener("click", submit);
    input.addEventListener("keydown", (event) => {
      if (event.key === "Enter") {
        event.preventDefault();
        submit();
      }
    });
    removeButton.addEventListener("click", () => this.change(() => api.removeKey(provider.name), result));
    testButton.addEventListener("click", async () => {
      testButton.disabled = true;
      showText(result, "Testing…");
      try {
        const answer = await api.testProvider(provider.name);
        result.dataset.ok = String(answer.ok);
        showText(result, answer.message);
      } catch (error) {
        result.dataset.ok = "false";
        showText(result, error.message);
      } finally {
        testButton.disabled = false;
      }
    });

    return h(
      "li",
      { class: "provider", "data-testid": "provider", dataset: { provider: provider.name,
        local: String(provider.local) } },
      h("div", { class: "provider-head" },
        h("strong", { class: "provider-label" }, provider.label),
        h("span", { class: "provider-kind" }, provider.local ? "on this computer" : "cloud"),
        h("code", { class: "provider-url", title: provider.url }, provider.url)),
      h("div", { class: "provider-actions" }, keyState, setButton, removeButton, testButton),
      form,
      status,
      result,
    );
  }

  async change(call, result) {
    try {
      await call();
      forgetModels();
      await this.refresh(false);
      this.onChanged();
    } catch (error) {
      result.dataset.ok = "false";
      showText(result, error.message);
    }
  }

  async save(change) {
    try {
      const overview = await api.setPreferences(change);
      forgetModels();
      this.render(overview);
      showText(this.error, "");
      showText(this.saved, "Saved.");
      setTimeout(() => showText(this.saved, ""), 1500);
      this.onChanged();
    } catch (error) {
      showText(this.error, error.message);
    }
  }
}
