// The Agents view (#agents): the agents defined as files, each with its
// schedule, next and last run and a Run now button; the invalid files with
// their reasons; and an editor of one file's whole text. The server checks a
// file before it writes it: a refused save shows the reason and loses nothing
// typed (docs/api.md, "Agents"). Delete asks first, and the server refuses it
// while the agent's run goes: the dialog then says why.

import { agentsApi } from "./api.js";
import { byId, h, showText } from "./dom.js";
import { absoluteTime, relativeTime } from "./format.js";

const NAME = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;

function template(workspace) {
  return [
    "---",
    `workspace: ${workspace || "/path/to/your/project"}`,
    "model: auto",
    "mode: supervised",
    "# A cron expression, quoted; leave out to run by hand only.",
    '# schedule: "0 9 * * 1-5"',
    "missed: run-once",
    "---",
    "Say here what the agent should do each time it runs.",
    "",
  ].join("\n");
}

function nextRun(agent) {
  if (!agent.schedule) return "by hand only";
  const when = new Date(agent.next_run * 1000);
  const soon = agent.next_run - Date.now() / 1000 < 86400;
  return `next ${soon ? when.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" }) : when.toLocaleString()}`;
}

export class AgentsView {
  /** `context()` -> {workspace}: the workspace a new agent starts with. */
  constructor({ context = () => ({}), onStarted = () => {} } = {}) {
    this.context = context;
    this.onStarted = onStarted;
    this.section = byId("agents-view");
    this.folder = byId("agents-folder");
    this.list = byId("agent-list");
    this.invalidList = byId("agent-invalid");
    this.empty = byId("agents-empty");
    this.error = byId("agents-error");
    this.notice = byId("agents-notice");
    this.editor = byId("agent-editor");
    this.nameInput = byId("agent-name");
    this.text = byId("agent-text");
    this.editorError = byId("agent-editor-error");
    this.editing = null; // the name of the file open in the editor; null: a new one
    byId("agent-new").addEventListener("click", () => this.openEditor(null));
    byId("agent-cancel").addEventListener("click", () => this.closeEditor());
    this.editor.addEventListener("submit", (event) => {
      event.preventDefault();
      this.save();
    });
    this.deleting = null; // the name the delete dialog is about
    this.dialog = this.makeDialog();
    this.text.addEventListener("input", () => this.text.removeAttribute("aria-invalid"));
    this.nameInput.addEventListener("input", () => this.nameInput.removeAttribute("aria-invalid"));
  }

  makeDialog() {
    this.dialogText = h("p", { class: "confirm-text" });
    this.dialogError = h("p", { class: "form-error", role: "alert", dataset: { testid: "agent-delete-error" }, hidden: true });
    this.confirm = h("button", { type: "button", class: "btn btn-danger", dataset: { testid: "agent-delete-confirm" },
      on: { click: () => this.doDelete() } }, "Delete");
    const dialog = h("dialog", { class: "dialog-box confirm-dialog", dataset: { testid: "agent-delete-dialog" },
                                 "aria-labelledby": "agent-delete-title" },
      h("h2", { class: "dialog-title", id: "agent-delete-title" }, "Delete this agent?"),
      this.dialogText,
      this.dialogError,
      h("div", { class: "confirm-actions" },
        h("button", { type: "button", class: "btn btn-ghost", dataset: { testid: "agent-delete-cancel" },
          on: { click: () => dialog.close() } }, "Cancel"),
        this.confirm));
    document.body.append(dialog);
    return dialog;
  }

  show() {
    if (!this.section.hidden) return;
    this.section.hidden = false;
    this.load();
  }

  hide() {
    this.section.hidden = true;
  }

  refresh() {
    if (!this.section.hidden) this.load();
  }

  async load() {
    try {
      const data = await agentsApi.list();
      showText(this.error, "");
      this.folder.textContent = data.folder;
      this.render(data.agents ?? [], data.invalid ?? []);
    } catch (error) {
      showText(this.error, `Could not list the agents: ${error.message}`);
    }
  }

  render(agents, invalid) {
    this.list.replaceChildren(...agents.map((agent) => this.agentRow(agent)));
    this.invalidList.replaceChildren(...invalid.map((bad) => this.invalidRow(bad)));
    this.empty.hidden = agents.length + invalid.length > 0;
  }

  agentRow(agent) {
    const last = agent.last_run;
    const lastText = last
      ? h("a", { class: "agent-last", href: `#run=${encodeURIComponent(last.id)}`, dataset: { status: last.status },
                 title: absoluteTime(last.created_at) },
          `last run ${last.status}, ${relativeTime(last.created_at)}`)
      : h("span", { class: "agent-last" }, "never run");
    const run = h("button", { type: "button", class: "btn btn-primary btn-small", dataset: { testid: "agent-run" },
                              disabled: agent.running }, agent.running ? "Running…" : "Run now");
    run.addEventListener("click", () => this.run(agent.name, run));
    const edit = h("button", { type: "button", class: "btn btn-secondary btn-small", dataset: { testid: "agent-edit" } }, "Edit");
    edit.addEventListener("click", () => this.openEditor(agent.name));
    const remove = this.deleteButton(agent.name);
    return h(
      "li",
      { class: "agent", dataset: { testid: "agent", name: agent.name } },
      h("div", { class: "agent-head" },
        h("span", { class: "agent-name" }, agent.name),
        h("span", { class: "agent-schedule", dataset: { testid: "agent-schedule" } }, agent.schedule || "manual"),
        h("span", { class: "agent-next", dataset: { testid: "agent-next" },
                    title: agent.next_run ? absoluteTime(agent.next_run) : null }, nextRun(agent)),
        h("span", { class: "agent-actions" }, run, edit, remove)),
      h("div", { class: "agent-meta" },
        h("span", { class: "agent-workspace", title: agent.workspace }, agent.workspace),
        h("span", {}, agent.model || "default model"),
        lastText),
      h("p", { class: "agent-task" }, agent.task),
    );
  }

  invalidRow(bad) {
    const edit = h("button", { type: "button", class: "btn btn-secondary btn-small", dataset: { testid: "agent-edit" } }, "Edit");
    edit.addEventListener("click", () => this.openEditor(bad.name));
    return h(
      "li",
      { class: "agent agent-invalid", dataset: { testid: "agent-invalid", name: bad.name } },
      h("div", { class: "agent-head" },
        h("span", { class: "agent-name" }, bad.name),
        h("span", { class: "agent-flag" }, "invalid"),
        h("span", { class: "agent-actions" }, edit, this.deleteButton(bad.name))),
      h("p", { class: "agent-reason", dataset: { testid: "agent-reason" } }, bad.reason),
    );
  }

  async run(name, button) {
    button.disabled = true;
    try {
      const run = await agentsApi.run(name);
      showText(this.error, "");
      this.notice.replaceChildren(`Started ${name}: `,
        h("a", { href: `#run=${encodeURIComponent(run.id)}`, dataset: { testid: "agent-started" } }, run.id));
      this.notice.hidden = false;
      this.onStarted(run);
    } catch (error) {
      showText(this.error, error.message);
    }
    await this.load();
  }

  deleteButton(name) {
    return h("button", { type: "button", class: "btn btn-danger-ghost btn-small", dataset: { testid: "agent-delete" },
                         on: { click: () => this.confirmDelete(name) } }, "Delete");
  }

  confirmDelete(name) {
    this.deleting = name;
    this.dialogText.textContent = `“${name}”: its file goes (its past runs stay in the sessions). ` +
      "A schedule it had no longer starts it. This cannot be undone.";
    showText(this.dialogError, "");
    this.confirm.disabled = false;
    this.dialog.showModal();
    this.confirm.focus();
  }

  async doDelete() {
    const name = this.deleting;
    this.confirm.disabled = true;
    try {
      await agentsApi.remove(name);
    } catch (error) {
      // Refused while its run goes: the reason says so; the dialog stays to be read.
      showText(this.dialogError, `Could not delete: ${error.message}`);
      this.confirm.disabled = false;
      return;
    }
    this.dialog.close();
    if (this.editing === name) this.closeEditor();
    this.notice.replaceChildren(`Deleted ${name}.`);
    this.notice.hidden = false;
    await this.load();
  }

  async openEditor(name) {
    this.editing = name;
    showText(this.editorError, "");
    this.nameInput.value = name ?? "";
    this.nameInput.readOnly = name !== null;
    byId("agent-editor-title").textContent = name === null ? "New agent" : `Edit ${name}`;
    this.text.value = name === null ? template(this.context().workspace) : "";
    this.editor.hidden = false;
    if (name === null) {
      this.nameInput.focus();
      return;
    }
    try {
      const file = await agentsApi.get(name);
      this.text.value = file.text;
      if (!file.valid) this.showInvalid(file.reason);
      this.text.focus();
    } catch (error) {
      this.showInvalid(error.message);
    }
  }

  closeEditor() {
    this.editor.hidden = true;
    this.editing = null;
  }

  showInvalid(reason) {
    showText(this.editorError, reason);
    this.text.setAttribute("aria-invalid", "true");
  }

  async save() {
    const name = this.nameInput.value.trim();
    if (!NAME.test(name)) {
      showText(this.editorError, "Name it with letters, digits, - and _ (up to 64), starting with a letter or digit.");
      this.nameInput.setAttribute("aria-invalid", "true");
      this.nameInput.focus();
      return;
    }
    try {
      await agentsApi.put(name, this.text.value);
    } catch (error) {
      this.showInvalid(error.message);
      return;
    }
    this.closeEditor();
    this.notice.replaceChildren(`Saved ${name}.`);
    this.notice.hidden = false;
    await this.load();
  }
}
