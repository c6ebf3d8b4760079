// What can be done to the open session, in its header: Resume (a finished
// one: the follow-up box, which then resumes it), Export as Markdown or JSON
// (downloads from GET /api/sessions/{id}/export) and Delete, after a
// confirmation that says what goes with it. The desktop window cannot
// download: there the export's text goes to the shell's save dialog.

import { sessionsApi } from "./api.js";
import { inDesktop, saveFile } from "./bridge.js";
import { h, showText } from "./dom.js";

export class SessionActions {
  constructor({ onResume, onDeleted, onNotice = () => {} }) {
    this.onResume = onResume;
    this.onNotice = onNotice;
    this.onDeleted = onDeleted;
    this.sessionId = "";
    this.resume = h("button", {
      type: "button", class: "btn btn-secondary btn-small", "data-testid": "session-resume", hidden: true,
      title: "Continue this session with a follow-up", on: { click: () => this.onResume() },
    }, "Resume");
    this.markdown = h("a", { class: "menu-item", "data-testid": "export-markdown", role: "menuitem" }, "Markdown (.md)");
    this.json = h("a", { class: "menu-item", "data-testid": "export-json", role: "menuitem" }, "JSON (.json)");
    this.exportMenu = h("details", { class: "menu session-export" },
      h("summary", { class: "btn btn-ghost btn-small", "data-testid": "session-export" }, "Export"),
      h("div", { class: "menu-list", role: "menu" }, this.markdown, this.json));
    for (const link of [this.markdown, this.json]) {
      link.addEventListener("click", (event) => {
        this.exportMenu.open = false;
        if (!inDesktop()) return; // the browser downloads it
        event.preventDefault();
        this.saveInDesktop(link);
      });
    }
    this.remove = h("button", {
      type: "button", class: "btn btn-danger-ghost btn-small", "data-testid": "session-delete",
      on: { click: () => this.confirmDelete() },
    }, "Delete");
    this.el = h("div", { class: "session-actions", "data-testid": "session-actions", hidden: true },
      this.resume, this.exportMenu, this.remove);
    this.dialog = this.makeDialog();
    document.addEventListener("click", (event) => {
      if (this.exportMenu.open && !this.exportMenu.contains(event.target)) this.exportMenu.open = false;
    });
  }

  makeDialog() {
    this.dialogText = h("p", { class: "confirm-text" });
    this.dialogError = h("p", { class: "form-error", role: "alert", hidden: true });
    this.confirm = h("button", { type: "button", class: "btn btn-danger", "data-testid": "delete-confirm",
      on: { click: () => this.doDelete() } }, "Delete");
    const dialog = h("dialog", { class: "dialog-box confirm-dialog", "data-testid": "delete-dialog", "aria-labelledby": "delete-title" },
      h("h2", { class: "dialog-title", id: "delete-title" }, "Delete this session?"),
      this.dialogText,
      this.dialogError,
      h("div", { class: "confirm-actions" },
        h("button", { type: "button", class: "btn btn-ghost", "data-testid": "delete-cancel",
          on: { click: () => dialog.close() } }, "Cancel"),
        this.confirm));
    document.body.append(dialog);
    return dialog;
  }

  /** The open session (none: hidden); `finished`: whether its last run has ended. */
  show(sessionId, { finished = false, title = "" } = {}) {
    this.sessionId = sessionId || "";
    this.title = title;
    this.el.hidden = !sessionId;
    if (!sessionId) return;
    this.setFinished(finished);
    for (const [link, format, ext] of [[this.markdown, "md", "md"], [this.json, "json", "json"]]) {
      link.href = sessionsApi.exportUrl(sessionId, format);
      link.setAttribute("download", `${sessionId}.${ext}`);
    }
  }

  /** Resume and Delete are for a session whose last run has ended. */
  setFinished(finished) {
    this.resume.hidden = !finished;
    this.remove.disabled = !finished;
    this.remove.title = finished ? "Delete this session, its transcripts and its index entries"
      : "A session can be deleted once its run has ended";
  }

  async saveInDesktop(link) {
    try {
      const response = await fetch(link.href, { credentials: "same-origin" });
      if (!response.ok) throw new Error(`the server answered ${response.status}`);
      const path = await saveFile(link.getAttribute("download"), await response.text());
      if (path) this.onNotice(`Exported to ${path}`);
    } catch (error) {
      this.onNotice(`Could not export: ${error.message || error}`, "error");
    }
  }

  confirmDelete() {
    if (!this.sessionId) return;
    this.dialogText.textContent = `“${this.title || this.sessionId}”: its transcripts, its search entries and the ` +
      "checkpoints only it refers to are deleted. This cannot be undone.";
    showText(this.dialogError, "");
    this.confirm.disabled = false;
    this.dialog.showModal();
    this.confirm.focus();
  }

  async doDelete() {
    const id = this.sessionId;
    this.confirm.disabled = true;
    try {
      await sessionsApi.remove(id);
    } catch (error) {
      showText(this.dialogError, `Could not delete: ${error.message}`);
      this.confirm.disabled = false;
      return;
    }
    this.dialog.close();
    this.onDeleted(id);
  }
}
