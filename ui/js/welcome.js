// The first-run screen: shown in an empty run view while there is no
// conversation yet and nothing but the demo can run. Three ways in: add an
// API key (Settings), use a local model found on this computer (made the
// default with one click), or try the demo.

import { api } from "./api.js";
import { byId, h } from "./dom.js";
import { forgetModels, hasRealModels, loadModels } from "./models.js";

export class Welcome {
  constructor({ onAddKey, onTryDemo, onChosen }) {
    this.el = byId("welcome");
    this.placeholder = byId("run-placeholder");
    this.localText = byId("welcome-local-text");
    this.localList = byId("welcome-local-list");
    this.onChosen = onChosen;
    byId("welcome-key").addEventListener("click", onAddKey);
    byId("welcome-demo").addEventListener("click", onTryDemo);
    byId("welcome-look").addEventListener("click", () => this.update({ refresh: true }));
  }

  /** Before the models are known: with no conversation yet, it shows, still
   * looking for local servers (`update` decides once they are known). */
  looking({ noConversations }) {
    this.noConversations = noConversations;
    this.el.hidden = !noConversations;
    this.placeholder.hidden = noConversations;
  }

  /** Show it when `noConversations` and nothing real is set up; hide it otherwise. */
  async update({ noConversations = this.noConversations, refresh = false } = {}) {
    this.noConversations = noConversations;
    let overview = null;
    try {
      overview = await loadModels({ refresh });
    } catch {
      overview = null;
    }
    const show = Boolean(noConversations && overview && !overview.default && !hasRealModels(overview));
    this.el.hidden = !show;
    this.placeholder.hidden = show;
    if (!show) return;
    const local = overview.models.filter((m) => m.local && m.provider !== "demo");
    if (local.length === 0) {
      this.localText.replaceChildren(
        "No local model server answers. Start one and look again: ",
        h("code", {}, "ollama serve"), " (then ", h("code", {}, "ollama pull qwen3:8b"), "), or llama.cpp's ",
        h("code", {}, "llama-server -m model.gguf"), ".",
      );
      this.localList.replaceChildren();
      return;
    }
    this.localText.textContent = "Found on this computer; choose one to make it the default:";
    this.localList.replaceChildren(
      ...local.map((model) =>
        h("li", {}, h("button", {
          type: "button", class: "btn btn-secondary btn-small", "data-testid": "welcome-local-model",
          on: { click: () => this.choose(model.id) },
        }, model.id)),
      ),
    );
  }

  async choose(modelId) {
    await api.setPreferences({ default_model: modelId });
    forgetModels();
    this.el.hidden = true;
    this.placeholder.hidden = false;
    this.onChosen(modelId);
  }
}
