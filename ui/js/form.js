// The "new conversation" form: workspace (with recent workspaces, and
// Browse… in the desktop window), model (Auto routes by the task; the last
// choice is remembered), task. The server decides what is valid; its message
// is shown inline and the typed task is never lost.

import { api } from "./api.js";
import { AttachmentTray, pastedFiles } from "./attachments.js";
import { byId, h, showText } from "./dom.js";
import { chooseFolder, onDesktop } from "./bridge.js";
import { attachMention } from "./mention.js";
import { fillModelSelect, hasRealModels, loadModels } from "./models.js";

const LAST_MODEL = "sparrow.model";

export class RunForm {
  constructor({ onCreated }) {
    this.onCreated = onCreated;
    this.form = byId("run-form");
    this.workspace = byId("workspace");
    this.recent = byId("recent-workspaces");
    this.model = byId("model");
    this.prompt = byId("prompt");
    this.button = byId("run-button");
    this.error = byId("form-error");
    this.browse = byId("browse");
    this.busy = false;

    if (/Mac|iPhone|iPad/.test(navigator.platform || navigator.userAgent)) {
      for (const kbd of document.querySelectorAll(".kbd-mod")) kbd.textContent = "⌘";
    }
    this.form.addEventListener("submit", (event) => {
      event.preventDefault();
      this.submit();
    });
    for (const field of [this.prompt, this.workspace]) {
      field.addEventListener("keydown", (event) => {
        if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
          event.preventDefault();
          this.form.requestSubmit();
        }
      });
    }
    this.workspace.addEventListener("input", () => this.workspace.removeAttribute("aria-invalid"));
    attachMention(this.prompt, () => this.workspace.value);
    onDesktop(() => {
      this.browse.hidden = false;
    });
    this.browse.addEventListener("click", () => this.pickFolder());
    this.attachments = new AttachmentTray({
      list: byId("run-attachments"),
      context: () => ({ model: this.model.value || null }),
      onError: (message) => this.showError(message),
    });
    this.prompt.addEventListener("paste", (event) => {
      const files = pastedFiles(event);
      if (!files.length) return;
      event.preventDefault();
      this.attachments.addFiles(files);
    });
    this.model.addEventListener("change", () => {
      this.attachments.describe();
      try {
        localStorage.setItem(LAST_MODEL, this.model.value);
      } catch {
        /* private windows may refuse storage: the choice is just not remembered */
      }
    });
  }

  /** The models to choose from; the remembered choice, else the default, else Auto (or the demo). */
  async loadModels({ refresh = false } = {}) {
    // A choice made while the list loads (Try the demo, say) stands when it comes.
    const before = this.model.value;
    let overview;
    try {
      overview = await loadModels({ refresh });
    } catch {
      // The demo and Auto stay; the connection indicator says what is wrong.
      this.model.querySelector("[data-loading]")?.remove();
      return;
    }
    let remembered = null;
    try {
      remembered = localStorage.getItem(LAST_MODEL);
    } catch {
      remembered = null;
    }
    const fallback = overview.default || (hasRealModels(overview) ? "auto" : "demo");
    const wanted = (this.model.value !== before ? this.model.value : null) || remembered;
    fillModelSelect(this.model, overview, {
      first: [["auto", "Auto (route by task)"]],
      chosen: wanted || fallback,
    });
    if (wanted && this.model.value !== wanted) this.model.value = fallback;
  }

  /** Fill the form for a try of the demo. */
  tryDemo() {
    this.model.value = "demo";
    if (!this.prompt.value.trim()) this.prompt.value = "Show me what you can do in this folder.";
    (this.workspace.value.trim() ? this.prompt : this.workspace).focus();
  }

  async loadRecent() {
    let workspaces = [];
    try {
      workspaces = await api.recentWorkspaces();
    } catch {
      return; // the list is a convenience; the runs list reports connection problems
    }
    this.setRecent(workspaces);
    if (!this.workspace.value && workspaces.length > 0) this.workspace.value = workspaces[0];
  }

  setRecent(workspaces) {
    this.recent.replaceChildren(...workspaces.map((path) => h("option", { value: path })));
  }

  rememberWorkspace(path) {
    const paths = [...this.recent.options].map((option) => option.value).filter((p) => p !== path);
    this.setRecent([path, ...paths]);
  }

  /** Start a new conversation in `path` (ask for a folder when none is given); the
   *  workspace now in the field. */
  openWorkspace(path) {
    if (!path) {
      if (!this.browse.hidden) this.pickFolder();
      else this.workspace.focus();
      return this.workspace.value;
    }
    this.workspace.value = path;
    this.workspace.removeAttribute("aria-invalid");
    this.prompt.focus();
    return this.workspace.value;
  }

  async pickFolder() {
    this.browse.disabled = true;
    try {
      const path = await chooseFolder();
      if (path) {
        this.workspace.value = path;
        this.workspace.removeAttribute("aria-invalid");
        this.prompt.focus();
      }
    } catch (error) {
      this.showError(`Could not open the folder picker: ${error?.message ?? error}`);
    } finally {
      this.browse.disabled = false;
    }
  }

  showError(message) {
    showText(this.error, message);
  }

  clearError() {
    showText(this.error, "");
  }

  async submit() {
    if (this.busy) return;
    const refused = this.attachments.refused();
    if (refused.length) {
      this.showError(`Remove what cannot be sent first (×): ${refused.map((i) => i.chip.name).join(", ")}`);
      return;
    }
    const request = {
      workspace: this.workspace.value.trim(),
      task: this.prompt.value,
      model: this.model.value,
      attachments: this.attachments.refs(),
    };
    this.busy = true;
    this.button.disabled = true;
    this.form.setAttribute("aria-busy", "true");
    this.button.textContent = "Starting…";
    try {
      const run = await api.createRun(request);
      this.clearError();
      this.workspace.removeAttribute("aria-invalid");
      // Cleared only once the server has the task; on any error it stays.
      if (this.prompt.value === request.task) this.prompt.value = "";
      this.attachments.clear();
      this.rememberWorkspace(request.workspace);
      this.onCreated(run);
    } catch (error) {
      this.showError(error.message);
      if (/workspace/i.test(error.message)) this.workspace.setAttribute("aria-invalid", "true");
    } finally {
      this.busy = false;
      this.button.disabled = false;
      this.button.textContent = "Run";
      this.form.removeAttribute("aria-busy");
    }
  }
}
