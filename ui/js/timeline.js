// The conversation's checkpoint timeline: one entry per checkpoint (time, tool,
// files changed), from its runs' `checkpoint_created` events as they come and
// from the API for runs already over. Selecting one previews its diff to the
// workspace now; Rewind asks first (showing what will change), then shows what
// was restored and removed, and offers to undo through the checkpoint the
// rewind took first. Every decision is the server's (docs/api.md).

import { api } from "./api.js";
import { byId, h } from "./dom.js";
import { diffView, rewindPlan } from "./diffview.js";

function clock(seconds) {
  return new Date(seconds * 1000).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit", second: "2-digit" });
}

function filesLabel(entry) {
  const n = entry.count;
  if (entry.baseline) return n === 0 ? "baseline · the workspace was empty" : `baseline · ${n} file${n === 1 ? "" : "s"} as they were`;
  if (n === 0) return "no files changed";
  const names = entry.files.slice(0, 2).join(", ");
  const more = n > 2 ? ` +${n - 2}` : "";
  return `${n} file${n === 1 ? "" : "s"} · ${names}${more}`;
}

export class CheckpointTimeline {
  constructor() {
    this.panel = byId("checkpoints");
    this.count = byId("checkpoints-count");
    this.list = byId("checkpoint-list");
    this.preview = byId("checkpoint-preview");
    this.dialog = byId("rewind-dialog");
    this.dialogBody = byId("rewind-body");
    this.dialogTitle = byId("rewind-title");
    this.confirmButton = byId("rewind-confirm");
    this.cancelButton = byId("rewind-cancel");
    this.cancelButton.addEventListener("click", () => this.dialog.close());
    this.confirmButton.addEventListener("click", () => this.onConfirm());
    this.reset(null);
  }

  reset(runId) {
    this.runId = runId;
    this.entries = new Map();
    this.selected = null;
    this.pending = null;
    this.list.replaceChildren();
    this.preview.replaceChildren();
    this.preview.hidden = true;
    this.panel.hidden = true;
    if (this.dialog.open) this.dialog.close();
  }

  /** A `checkpoint_created` event of the run. */
  addEvent(event) {
    this.put({
      id: event.checkpoint_id,
      created_at: event.ts,
      turn: event.turn,
      tool: event.tool,
      files: event.files_changed ?? [],
      count: event.files_changed_count ?? (event.files_changed ?? []).length,
      baseline: Boolean(event.baseline),
    });
  }

  /** Fill from `GET /api/runs/{id}/checkpoints` of each of `runIds` (finished runs, reconnects). */
  async load(runIds = [this.runId]) {
    const opened = this.runId;
    for (const runId of runIds) {
      if (!runId) continue;
      try {
        const checkpoints = await api.runCheckpoints(runId);
        if (this.runId !== opened) return;
        for (const c of checkpoints) {
          this.put({ id: c.id, created_at: c.created_at, turn: c.turn, tool: c.tool, files: c.files_changed, count: c.files_changed.length, baseline: Boolean(c.baseline) });
        }
      } catch {
        // The events still fill the timeline; a failed list is not worth a banner.
      }
    }
  }

  put(entry) {
    if (!entry.id || this.entries.has(entry.id)) return;
    this.entries.set(entry.id, entry);
    this.render();
  }

  render() {
    const entries = [...this.entries.values()].sort((a, b) => b.created_at - a.created_at);
    this.panel.hidden = entries.length === 0;
    this.count.textContent = String(entries.length);
    this.list.replaceChildren(
      ...entries.map((entry) =>
        h(
          "li",
          { class: "checkpoint-item" },
          h(
            "button",
            {
              type: "button",
              class: "checkpoint-button",
              "aria-pressed": entry.id === this.selected ? "true" : "false",
              dataset: { testid: "checkpoint", id: entry.id },
              title: `Checkpoint ${entry.id}, before ${entry.tool} (turn ${entry.turn})`,
              on: { click: () => this.select(entry.id) },
            },
            h("span", { class: "checkpoint-time" }, clock(entry.created_at)),
            h("span", { class: "checkpoint-tool" }, entry.tool),
            h("span", { class: "checkpoint-files" }, filesLabel(entry)),
          ),
        ),
      ),
    );
  }

  async select(id) {
    if (this.selected === id) {
      this.selected = null;
      this.preview.hidden = true;
      this.render();
      return;
    }
    this.selected = id;
    this.render();
    this.preview.hidden = false;
    this.preview.replaceChildren(h("p", { class: "diff-empty" }, "Loading the diff…"));
    let files;
    try {
      files = await api.checkpointDiff(id);
    } catch (error) {
      if (this.selected === id) this.preview.replaceChildren(h("p", { class: "checkpoint-error", role: "alert" }, error.message));
      return;
    }
    if (this.selected !== id) return;
    this.preview.replaceChildren(
      h(
        "div",
        { class: "checkpoint-preview-head" },
        h("span", { class: "checkpoint-preview-title" }, "Changes since this checkpoint (− then, + now)"),
        h(
          "button",
          {
            type: "button",
            class: "btn btn-danger-ghost btn-small",
            dataset: { testid: "rewind-button" },
            disabled: files.length === 0,
            on: { click: () => this.askRewind(id) },
          },
          "Rewind…",
        ),
      ),
      diffView(files),
    );
  }

  async askRewind(id) {
    // What will change is the diff to the workspace now, asked again: it may have moved on.
    let files;
    try {
      files = await api.checkpointDiff(id);
    } catch (error) {
      this.preview.prepend(h("p", { class: "checkpoint-error", role: "alert" }, error.message));
      return;
    }
    this.pending = id;
    this.dialogTitle.textContent = "Rewind the workspace?";
    const plan = rewindPlan(files);
    this.dialogBody.replaceChildren(
      h("p", {}, `The workspace goes back to checkpoint ${id}. What is there now is checkpointed first, so the rewind can be undone.`),
      h(
        "ul",
        { class: "rewind-plan", dataset: { testid: "rewind-plan" } },
        plan.map((p) => h("li", { dataset: { action: p.action } }, h("span", { class: "rewind-action" }, p.action), h("bdi", {}, p.path))),
      ),
      diffView(files),
    );
    this.confirmButton.hidden = false;
    this.confirmButton.disabled = false;
    this.confirmButton.textContent = "Rewind";
    this.cancelButton.textContent = "Cancel";
    this.dialog.showModal();
  }

  async onConfirm() {
    const id = this.pending;
    if (!id) return;
    this.confirmButton.disabled = true;
    this.confirmButton.textContent = "Rewinding…";
    let result;
    try {
      result = await api.rewindCheckpoint(id);
    } catch (error) {
      this.confirmButton.textContent = "Rewind";
      this.confirmButton.disabled = false;
      this.dialogBody.prepend(h("p", { class: "checkpoint-error", role: "alert", dataset: { testid: "rewind-error" } }, error.message));
      return;
    }
    this.pending = null;
    this.showResult(result);
    // The checkpoint the rewind took first joins this run's timeline: undo from there too.
    await this.load();
    if (this.selected) {
      const selected = this.selected;
      this.selected = null;
      this.select(selected);
    }
  }

  showResult(result) {
    const undoId = result.checkpoint_before.id;
    const lines = [
      ...result.restored.map((p) => h("li", { dataset: { action: "restore" } }, h("span", { class: "rewind-action" }, "restored"), h("bdi", {}, p))),
      ...result.removed.map((p) => h("li", { dataset: { action: "remove" } }, h("span", { class: "rewind-action" }, "removed"), h("bdi", {}, p))),
      ...result.untouched.map((p) => h("li", { dataset: { action: "left" } }, h("span", { class: "rewind-action" }, "left alone"), h("bdi", {}, p))),
    ];
    this.dialogTitle.textContent = "Rewound";
    this.dialogBody.replaceChildren(
      h("ul", { class: "rewind-plan", dataset: { testid: "rewind-result" } }, lines.length ? lines : h("li", {}, "Nothing needed changing.")),
      h(
        "p",
        { class: "rewind-undo" },
        `To undo, rewind to checkpoint ${undoId}, taken just before (`,
        h("code", {}, `sparrow rewind ${undoId}`),
        "), or: ",
        h(
          "button",
          {
            type: "button",
            class: "btn btn-secondary btn-small",
            dataset: { testid: "undo-rewind" },
            on: {
              click: () => {
                this.dialog.close();
                this.askRewind(undoId);
              },
            },
          },
          "Undo this rewind…",
        ),
      ),
    );
    this.confirmButton.hidden = true;
    this.cancelButton.textContent = "Close";
  }
}
