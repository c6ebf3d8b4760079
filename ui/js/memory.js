// The Memory view (#memory): the facts (searched as you type, added, forgotten)
// and the two docs, USER.md and a workspace's MEMORY.md, each editable with
// its size against its limit. The server's guards decide every write: a
// rejection's reason is shown where the text was typed (docs/api.md, "Memory").

import { memoryApi } from "./api.js";
import { byId, h, showText } from "./dom.js";
import { absoluteTime, relativeTime } from "./format.js";

const SEARCH_DELAY_MS = 150;
const DOCS = [
  ["user", "USER.md", "About you, for every workspace."],
  ["memory", "MEMORY.md", "Durable notes of this workspace."],
];

function count(n) {
  return n.toLocaleString("en-US");
}

export class MemoryView {
  /** `context()` -> {workspace}: the open run's, or the form's workspace. */
  constructor({ context = () => ({}) } = {}) {
    this.context = context;
    this.section = byId("memory-view");
    this.where = byId("memory-where");
    this.workspaceInput = byId("memory-workspace");
    this.search = byId("memory-search");
    this.form = byId("memory-add");
    this.key = byId("fact-key");
    this.value = byId("fact-value");
    this.scope = byId("fact-scope");
    this.error = byId("memory-error");
    this.list = byId("fact-list");
    this.empty = byId("memory-empty");
    this.count = byId("memory-count");
    this.docGrid = byId("doc-grid");
    this.facts = [];
    this.loaded = "";
    this.searchTimer = null;
    this.searchSeq = 0;
    this.editors = new Map(DOCS.map(([kind, name, what]) => [kind, this.docEditor(kind, name, what)]));
    this.docGrid.replaceChildren(...[...this.editors.values()].map((e) => e.root));

    this.where.addEventListener("submit", (event) => {
      event.preventDefault();
      this.load();
    });
    this.form.addEventListener("submit", (event) => {
      event.preventDefault();
      this.add();
    });
    for (const input of [this.key, this.value]) {
      input.addEventListener("input", () => input.removeAttribute("aria-invalid"));
    }
    this.search.addEventListener("input", () => {
      clearTimeout(this.searchTimer);
      this.searchTimer = setTimeout(() => this.loadFacts(), SEARCH_DELAY_MS);
    });
  }

  get workspace() {
    return this.workspaceInput.value.trim();
  }

  // A fragment link fires popstate and hashchange, so routing shows a view twice:
  // only the first loads, or a late answer would overwrite what was typed since.
  show() {
    if (!this.section.hidden) return;
    this.section.hidden = false;
    const { workspace } = this.context();
    if (workspace && !this.workspace) this.workspaceInput.value = workspace;
    this.load();
  }

  hide() {
    this.section.hidden = true;
  }

  // Facts of "this workspace" are of the workspace shown, not of one half typed.
  syncScope() {
    const option = this.scope.querySelector('option[value="workspace"]');
    option.disabled = !this.loaded;
    option.textContent = this.loaded ? "this workspace" : "this workspace (choose one above)";
    if (!this.loaded) this.scope.value = "global";
  }

  async load() {
    const workspace = this.workspace;
    const seq = ++this.searchSeq;
    try {
      const data = await memoryApi.get(workspace);
      if (workspace !== this.workspace) return;
      const moved = workspace !== this.loaded;
      this.loaded = workspace;
      this.syncScope();
      this.hideError();
      this.renderDocs(data.docs, moved);
      if (this.search.value.trim()) await this.loadFacts();
      else if (seq === this.searchSeq) this.renderFacts(data.facts ?? []);
    } catch (error) {
      this.showError(`Could not read the memory: ${error.message}`);
    }
  }

  // Only the answer to the latest request is shown: an earlier one may come last.
  async loadFacts() {
    const seq = ++this.searchSeq;
    const term = this.search.value.trim();
    try {
      const facts = term
        ? await memoryApi.search(term, this.loaded)
        : (await memoryApi.get(this.loaded)).facts ?? [];
      if (seq === this.searchSeq) this.renderFacts(facts, term);
    } catch (error) {
      if (seq === this.searchSeq) this.showError(error.message);
    }
  }

  renderFacts(facts, term = "") {
    this.facts = facts;
    this.count.textContent = facts.length ? `(${facts.length})` : "";
    this.empty.hidden = facts.length > 0;
    this.empty.textContent = term ? `No fact matches “${term}”.` : "No facts yet.";
    this.list.replaceChildren(...facts.map((fact) => this.factRow(fact)));
  }

  factRow(fact) {
    const scope = fact.workspace
      ? h("span", { class: "fact-scope", dataset: { scope: "workspace" }, title: fact.workspace }, "workspace")
      : h("span", { class: "fact-scope", dataset: { scope: "global" } }, "global");
    const when = h(
      "time",
      { class: "fact-when", datetime: new Date(fact.updated_at * 1000).toISOString(), title: absoluteTime(fact.updated_at) },
      relativeTime(fact.updated_at),
    );
    return h(
      "li",
      { class: "fact", dataset: { testid: "fact", factId: String(fact.id) } },
      h("div", { class: "fact-head" },
        h("code", { class: "fact-key", dataset: { testid: "fact-key-text" } }, fact.key),
        scope,
        when,
        h("button", {
          type: "button",
          class: "btn btn-danger-ghost btn-small fact-forget",
          dataset: { testid: "fact-forget" },
          "aria-label": `Forget ${fact.key}`,
          on: { click: (event) => this.forget(fact, event.currentTarget) },
        }, "Forget"),
      ),
      h("p", { class: "fact-value", dataset: { testid: "fact-value-text" } }, fact.value),
    );
  }

  async add() {
    const body = { key: this.key.value.trim(), value: this.value.value.trim() };
    if (this.scope.value === "workspace" && this.loaded) body.workspace = this.loaded;
    try {
      await memoryApi.addFact(body);
      // Cleared only if still what was sent: the next fact may be typed meanwhile.
      if (this.key.value.trim() === body.key) this.key.value = "";
      if (this.value.value.trim() === body.value) this.value.value = "";
      this.hideError();
      await this.loadFacts();
      this.key.focus();
    } catch (error) {
      this.showError(error.message);
      (body.key ? this.value : this.key).setAttribute("aria-invalid", "true");
    }
  }

  async forget(fact, button) {
    button.disabled = true;
    try {
      await memoryApi.forgetFact(fact.id);
      this.hideError();
      await this.loadFacts();
    } catch (error) {
      button.disabled = false;
      this.showError(`Could not forget ${fact.key}: ${error.message}`);
    }
  }

  docEditor(kind, name, what) {
    const ids = { text: `doc-${kind}`, size: `doc-${kind}-size` };
    const size = h("span", { class: "doc-size", id: ids.size, dataset: { testid: `doc-size-${kind}` } });
    const text = h("textarea", {
      id: ids.text,
      class: "input textarea doc-text",
      rows: "8",
      spellcheck: "true",
      "aria-describedby": ids.size,
      dataset: { testid: `doc-text-${kind}` },
    });
    const save = h("button", { type: "button", class: "btn btn-primary btn-small", dataset: { testid: `doc-save-${kind}` } }, "Save");
    const error = h("p", { class: "form-error doc-error", role: "alert", dataset: { testid: `doc-error-${kind}` }, hidden: true });
    const saved = h("p", { class: "doc-saved", role: "status", dataset: { testid: `doc-saved-${kind}` }, hidden: true });
    const where = h("p", { class: "doc-where" }, what);
    const editor = { root: null, text, size, save, error, saved, where, limit: 0, name, edited: false };
    editor.root = h(
      "article",
      { class: "doc", dataset: { testid: `doc-${kind}`, kind } },
      h("header", { class: "doc-head" }, h("label", { class: "doc-name", for: ids.text }, name), size),
      where,
      text,
      h("div", { class: "doc-actions" }, save, saved),
      error,
    );
    text.addEventListener("input", () => {
      editor.edited = true;
      this.showSize(editor);
      showText(saved, "");
      text.removeAttribute("aria-invalid");
    });
    save.addEventListener("click", () => this.saveDoc(kind, editor));
    return editor;
  }

  showSize(editor) {
    const n = editor.text.value.trim().length;
    editor.size.textContent = `${count(n)} / ${count(editor.limit)}`;
    editor.size.dataset.over = String(n > editor.limit);
  }

  /** `moved`: another workspace is shown; otherwise a doc being edited keeps its text. */
  renderDocs(docs, moved = true) {
    for (const [kind, editor] of this.editors) {
      const doc = docs?.[kind];
      if (editor.edited && !moved && (kind === "user" || doc)) continue;
      editor.edited = false;
      const missing = !doc;
      editor.text.disabled = missing;
      editor.save.disabled = missing;
      editor.text.value = doc?.text ?? "";
      editor.limit = doc?.limit ?? (kind === "user" ? 1400 : 2200);
      editor.text.placeholder = missing ? "Choose a workspace above to see its MEMORY.md." : "Nothing yet.";
      editor.where.textContent = doc?.workspace ? `Durable notes of ${doc.workspace}.` : DOCS.find(([k]) => k === kind)[2];
      editor.where.title = doc?.path ?? "";
      showText(editor.error, "");
      showText(editor.saved, "");
      editor.text.removeAttribute("aria-invalid");
      this.showSize(editor);
    }
  }

  async saveDoc(kind, editor) {
    editor.save.disabled = true;
    try {
      const doc = await memoryApi.putDoc(kind, editor.text.value, kind === "memory" ? this.loaded : undefined);
      editor.text.value = doc.text;
      editor.edited = false;
      editor.text.removeAttribute("aria-invalid");
      this.showSize(editor);
      showText(editor.error, "");
      showText(editor.saved, `Saved, ${count(doc.size)} characters.`);
    } catch (error) {
      showText(editor.saved, "");
      showText(editor.error, error.message);
      editor.text.setAttribute("aria-invalid", "true");
    } finally {
      editor.save.disabled = false;
    }
  }

  showError(message) {
    showText(this.error, message);
  }

  hideError() {
    showText(this.error, "");
  }
}
