// The Rules view: the permission rules that apply to a workspace (the
// built-in defaults, the global rules, those of the workspace and of the
// current run's session), with their hits. Add, edit, delete (not the
// defaults), and import from the workspace's .claude/settings.json. The server
// parses every rule: its 400 message is shown where the rule was typed.
// A delete is done at once (a rule the user no longer wants must stop
// applying), and a notice offers to undo it for a few seconds: the server puts
// the rule back as it was, in its place (POST /api/rules/restore).

import { byId, h, showText } from "./dom.js";
import { absoluteTime, relativeTime } from "./format.js";
import { safetyApi } from "./api.js";

const EFFECTS = ["allow", "ask", "deny"];
const SCOPES = [
  ["session", "this session"],
  ["workspace", "this workspace"],
  ["global", "global"],
];
const SOURCES = { user: "you", default: "built in", "claude-settings": ".claude/settings.json" };
// How long the Undo of a delete is offered; the time stops while the pointer or the focus is on it.
const UNDO_MS = 8000;

function select(options, value, props) {
  return h(
    "select",
    { class: "input select input-small", ...props },
    options.map(([v, label]) => h("option", { value: v, selected: v === value }, label)),
  );
}

export class RulesView {
  /** `context()` -> {workspace, sessionId}: the current run's, or the form's workspace. */
  constructor({ context = () => ({}) } = {}) {
    this.context = context;
    this.section = byId("rules-view");
    this.where = byId("rules-where");
    this.workspaceInput = byId("rules-workspace");
    this.importButton = byId("rules-import");
    this.importResult = byId("rules-import-result");
    this.form = byId("rule-add");
    this.effect = byId("rule-effect");
    this.spec = byId("rule-spec");
    this.scope = byId("rule-scope");
    this.error = byId("rules-error");
    this.list = byId("rule-list");
    this.empty = byId("rules-empty");
    this.undoSlot = byId("rule-undo-slot");
    this.undoTimer = 0;
    this.rules = [];
    this.editing = null;
    this.sessionId = null;

    this.where.addEventListener("submit", (event) => {
      event.preventDefault();
      this.load();
    });
    this.form.addEventListener("submit", (event) => {
      event.preventDefault();
      this.add();
    });
    this.spec.addEventListener("input", () => this.spec.removeAttribute("aria-invalid"));
    this.importButton.addEventListener("click", () => this.importClaude());
    this.workspaceInput.addEventListener("input", () => {
      this.importButton.disabled = !this.workspace;
    });
  }

  get workspace() {
    return this.workspaceInput.value.trim();
  }

  show() {
    this.section.hidden = false;
    const { workspace, sessionId } = this.context();
    this.sessionId = sessionId || null;
    if (workspace) this.workspaceInput.value = workspace;
    this.load();
  }

  hide() {
    this.section.hidden = true;
  }

  async load() {
    const workspace = this.workspace;
    this.importButton.disabled = !workspace;
    try {
      const rules = await safetyApi.rules({ workspace, sessionId: this.sessionId });
      if (workspace !== this.workspace) return;
      this.rules = rules;
      this.editing = null;
      this.hideError();
      this.render();
    } catch (error) {
      this.showError(error.message);
      this.empty.hidden = this.rules.length > 0;
      this.empty.textContent = "The rules could not be read.";
    }
  }

  render() {
    this.empty.hidden = this.rules.length > 0;
    this.empty.textContent = "No rules.";
    this.list.replaceChildren(
      ...this.rules.map((rule) => (rule.id === this.editing ? this.editRow(rule) : this.row(rule))),
    );
  }

  row(rule) {
    const isDefault = rule.source === "default";
    const scope =
      rule.scope === "workspace" && rule.workspace
        ? h("span", { title: rule.workspace }, "workspace")
        : rule.scope === "session" && rule.session_id
          ? h("span", { title: rule.session_id }, "session")
          : h("span", {}, rule.scope || "global");
    const used = Number.isFinite(rule.last_used_at)
      ? h("time", { datetime: new Date(rule.last_used_at * 1000).toISOString(), title: absoluteTime(rule.last_used_at) }, relativeTime(rule.last_used_at))
      : h("span", { class: "rule-never" }, "never");
    const extra = [rule.provider && `provider ${rule.provider}`, rule.surface && `surface ${rule.surface}`].filter(Boolean);
    return h(
      "tr",
      { class: "rule-row", dataset: { testid: "rule", ruleId: rule.id, effect: rule.effect, source: rule.source } },
      h("td", {}, h("span", { class: "effect-chip", dataset: { effect: rule.effect } }, rule.effect)),
      h(
        "td",
        { class: "rule-spec-cell" },
        h("code", { class: "rule-spec", dataset: { testid: "rule-text" } }, rule.spec),
        extra.length ? h("span", { class: "rule-extra" }, extra.join(" · ")) : null,
      ),
      h("td", { class: "rule-scope" }, scope),
      h("td", { class: "rule-source" }, SOURCES[rule.source] || rule.source || ""),
      h("td", { class: "num", dataset: { testid: "rule-hits" } }, String(rule.hits ?? 0)),
      h("td", { class: "rule-used" }, used),
      h(
        "td",
        { class: "rule-actions" },
        isDefault
          ? h("span", { class: "rule-locked", title: "Built-in rules protect secrets and cannot be changed" }, "built in")
          : [
              h(
                "button",
                {
                  type: "button",
                  class: "btn btn-ghost btn-small",
                  dataset: { testid: "rule-edit" },
                  "aria-label": `Edit ${rule.effect} ${rule.spec}`,
                  on: { click: () => this.edit(rule.id) },
                },
                "Edit",
              ),
              h(
                "button",
                {
                  type: "button",
                  class: "btn btn-danger-ghost btn-small",
                  dataset: { testid: "rule-delete" },
                  "aria-label": `Delete ${rule.effect} ${rule.spec}`,
                  on: { click: (event) => this.remove(rule, event.currentTarget) },
                },
                "Delete",
              ),
            ],
      ),
    );
  }

  editRow(rule) {
    const effect = select(EFFECTS.map((e) => [e, e]), rule.effect, { "aria-label": "Effect", dataset: { testid: "edit-effect" } });
    const spec = h("input", {
      class: "input input-mono input-small",
      type: "text",
      value: rule.spec,
      spellcheck: "false",
      "aria-label": "Rule",
      dataset: { testid: "edit-spec" },
    });
    const scope = select(SCOPES, rule.scope, { "aria-label": "Scope", dataset: { testid: "edit-scope" } });
    const error = h("p", { class: "rule-row-error", role: "alert", dataset: { testid: "edit-error" }, hidden: true });
    const save = async () => {
      try {
        await safetyApi.updateRule(rule.id, this.body(effect.value, spec.value, scope.value));
        this.editing = null;
        await this.load();
      } catch (err) {
        error.textContent = err.message;
        error.hidden = false;
        spec.setAttribute("aria-invalid", "true");
      }
    };
    const cancel = () => {
      this.editing = null;
      this.render();
    };
    const keys = (event) => {
      if (event.key === "Enter") {
        event.preventDefault();
        save();
      } else if (event.key === "Escape") {
        event.preventDefault();
        cancel();
      }
    };
    spec.addEventListener("keydown", keys);
    queueMicrotask(() => spec.focus());
    return h(
      "tr",
      { class: "rule-row rule-editing", dataset: { testid: "rule", ruleId: rule.id, effect: rule.effect, source: rule.source } },
      h("td", {}, effect),
      h("td", { colspan: "4" }, spec, error),
      h("td", {}, scope),
      h(
        "td",
        { class: "rule-actions" },
        h("button", { type: "button", class: "btn btn-primary btn-small", dataset: { testid: "rule-save" }, on: { click: save } }, "Save"),
        h("button", { type: "button", class: "btn btn-ghost btn-small", on: { click: cancel } }, "Cancel"),
      ),
    );
  }

  edit(id) {
    this.editing = id;
    this.render();
  }

  body(effect, spec, scope) {
    const body = { effect, spec: spec.trim(), scope };
    if (scope === "workspace") body.workspace = this.workspace;
    if (scope === "session" && this.sessionId) body.session_id = this.sessionId;
    return body;
  }

  async add() {
    try {
      await safetyApi.createRule(this.body(this.effect.value, this.spec.value, this.scope.value));
      this.spec.value = "";
      this.spec.removeAttribute("aria-invalid");
      this.hideError();
      await this.load();
    } catch (error) {
      this.showError(error.message);
      this.spec.setAttribute("aria-invalid", "true");
    }
  }

  async remove(rule, button) {
    const fromKeyboard = button.matches(":focus-visible");
    button.disabled = true;
    try {
      await safetyApi.deleteRule(rule.id);
      this.hideError();
      this.offerUndo(rule, { focus: fromKeyboard });
      await this.load();
    } catch (error) {
      button.disabled = false;
      this.showError(`Could not delete ${rule.spec}: ${error.message}`);
    }
  }

  /** The notice after a delete: only the last one can be undone. */
  offerUndo(rule, { focus = false } = {}) {
    const undo = h(
      "button",
      {
        type: "button",
        class: "btn btn-secondary btn-small",
        dataset: { testid: "rule-undo" },
        "aria-label": `Undo: restore ${rule.effect} ${rule.spec}`,
        on: { click: () => this.undo(rule, undo) },
      },
      "Undo",
    );
    const notice = h(
      "div",
      { class: "rule-undo", dataset: { testid: "rule-undo-toast" } },
      h("span", { class: "rule-undo-text" }, "Rule deleted ", h("code", {}, `${rule.effect} ${rule.spec}`)),
      undo,
    );
    const wait = () => {
      clearTimeout(this.undoTimer);
      this.undoTimer = setTimeout(() => this.dropUndo(), UNDO_MS);
    };
    const hold = () => clearTimeout(this.undoTimer);
    notice.addEventListener("pointerenter", hold);
    notice.addEventListener("pointerleave", wait);
    notice.addEventListener("focusin", hold);
    notice.addEventListener("focusout", wait);
    this.undoSlot.replaceChildren(notice);
    wait();
    // The row and its Delete button are gone: a keyboard user lands on Undo.
    if (focus) undo.focus();
  }

  dropUndo() {
    clearTimeout(this.undoTimer);
    this.undoTimer = 0;
    this.undoSlot.replaceChildren();
  }

  async undo(rule, button) {
    button.disabled = true;
    try {
      await safetyApi.restoreRule(rule);
      this.dropUndo();
      this.hideError();
      await this.load();
    } catch (error) {
      button.disabled = false;
      this.showError(`Could not restore ${rule.spec}: ${error.message}`);
    }
  }

  async importClaude() {
    const workspace = this.workspace;
    if (!workspace) return;
    this.importButton.disabled = true;
    try {
      const result = await safetyApi.importRules(workspace);
      const imported = result.imported ?? [];
      const skipped = result.skipped ?? [];
      this.hideError();
      this.importResult.replaceChildren(
        h(
          "p",
          { class: "import-summary" },
          `Imported ${imported.length} ${imported.length === 1 ? "rule" : "rules"}` +
            (skipped.length ? `, skipped ${skipped.length}:` : "."),
        ),
        skipped.length
          ? h(
              "ul",
              { class: "import-skipped", dataset: { testid: "import-skipped" } },
              skipped.map((s) => h("li", {}, h("code", {}, s.text), " — ", s.reason)),
            )
          : null,
      );
      this.importResult.hidden = false;
      await this.load();
    } catch (error) {
      this.showError(error.message);
    } finally {
      this.importButton.disabled = !this.workspace;
    }
  }

  showError(message) {
    showText(this.error, message);
  }

  hideError() {
    showText(this.error, "");
  }
}
