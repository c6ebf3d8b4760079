// The recent runs list: loaded from GET /api/runs, kept current by the
// all-runs WebSocket subscription ("*"), keyed so that updates never rebuild
// rows (no focus loss, no jumps).

import { api } from "./api.js";
import { h } from "./dom.js";
import { absoluteTime, baseName, firstLine, relativeTime } from "./format.js";
import { showStatus } from "./status.js";

const MAX_ROWS = 100;

export class RunsList {
  constructor({ list, empty, error, onSelect }) {
    this.list = list;
    this.empty = empty;
    this.error = error;
    this.onSelect = onSelect;
    this.runs = new Map();
    this.rows = new Map();
    this.selected = null;
    this.refreshTimer = null;
    setInterval(() => this.updateTimes(), 30_000);
  }

  get(id) {
    return this.runs.get(id) ?? null;
  }

  async refresh() {
    try {
      const runs = await api.listRuns();
      this.error.hidden = true;
      for (const run of runs) this.runs.set(run.id, { ...this.runs.get(run.id), ...run });
      this.render();
    } catch (error) {
      this.error.textContent = `Could not load runs: ${error.message}`;
      this.error.hidden = false;
      this.render();
    }
  }

  /** Refresh soon, once, however many callers ask. */
  refreshSoon() {
    if (this.refreshTimer) return;
    this.refreshTimer = setTimeout(() => {
      this.refreshTimer = null;
      this.refresh();
    }, 250);
  }

  /** Merge a RunInfo (or part of one) and redraw. */
  upsert(run) {
    if (!run || !run.id) return;
    this.runs.set(run.id, { ...this.runs.get(run.id), ...run });
    this.render();
  }

  /** An event from the all-runs subscription. */
  applyEvent(event) {
    const known = this.runs.get(event.run_id);
    if (event.type === "run_started") {
      this.upsert({
        id: event.run_id,
        session_id: event.session_id,
        task: event.task,
        workspace: event.workspace,
        model: event.model,
        status: known?.status ?? "running",
        created_at: known?.created_at ?? event.ts,
      });
    } else if (event.type === "run_finished") {
      this.upsert({
        id: event.run_id,
        status: event.status,
        reason: event.reason,
        turns: event.turns,
        finished_at: event.ts,
        waiting: 0,
      });
      if (!known) this.refreshSoon();
    } else if (event.type === "approval_requested" && known) {
      this.upsert({ id: event.run_id, waiting: (known.waiting ?? 0) + 1 });
    } else if (event.type === "approval_resolved" && known) {
      this.upsert({ id: event.run_id, waiting: Math.max(0, (known.waiting ?? 0) - 1) });
    } else if (!known) {
      this.refreshSoon(); // a run we missed the start of (e.g. while reconnecting)
    }
  }

  select(id) {
    this.selected = id;
    for (const [runId, row] of this.rows) {
      const button = row.firstElementChild;
      if (runId === id) button.setAttribute("aria-current", "true");
      else button.removeAttribute("aria-current");
    }
  }

  sorted() {
    return [...this.runs.values()]
      .sort((a, b) => (b.created_at ?? 0) - (a.created_at ?? 0))
      .slice(0, MAX_ROWS);
  }

  render() {
    const runs = this.sorted();
    this.empty.hidden = runs.length > 0 || !this.error.hidden;
    const keep = new Set(runs.map((run) => run.id));
    for (const [id, row] of this.rows) {
      if (!keep.has(id)) {
        row.remove();
        this.rows.delete(id);
      }
    }
    runs.forEach((run, index) => {
      let row = this.rows.get(run.id);
      if (!row) {
        row = this.createRow(run.id);
        this.rows.set(run.id, row);
      }
      this.fillRow(row, run);
      const current = this.list.children[index];
      if (current !== row) this.list.insertBefore(row, current ?? null);
    });
  }

  createRow(id) {
    const button = h(
      "button",
      {
        type: "button",
        class: "run-item",
        "data-testid": "run-item",
        "data-run-id": id,
        on: { click: () => this.onSelect(id) },
      },
      h("span", { class: "status-dot", "data-testid": "run-item-status" }),
      h("span", { class: "run-item-task" }),
      // A run paused on an approval, shown wherever the user is looking.
      h("span", { class: "run-item-waiting", "data-testid": "run-item-waiting", hidden: true }, "waits for you"),
      h(
        "span",
        { class: "run-item-meta" },
        h("span", { class: "run-item-ws" }),
        h("time", { class: "run-item-time" }),
      ),
    );
    if (id === this.selected) button.setAttribute("aria-current", "true");
    return h("li", {}, button);
  }

  fillRow(row, run) {
    const button = row.firstElementChild;
    const [dot, task, waiting, meta] = button.children;
    waiting.hidden = !(run.waiting > 0);
    showStatus(dot, run.status);
    button.dataset.status = run.status || "running";
    task.textContent = firstLine(run.task) || "(no task)";
    const [ws, time] = meta.children;
    ws.textContent = baseName(run.workspace);
    ws.title = run.workspace || "";
    time.dataset.ts = String(run.created_at ?? "");
    time.textContent = relativeTime(run.created_at);
    time.title = absoluteTime(run.created_at);
    const asks = run.waiting > 0 ? ", waits for your approval" : "";
    button.setAttribute("aria-label", `${firstLine(run.task, 80)}, ${run.status}${asks}, in ${baseName(run.workspace)}`);
  }

  updateTimes() {
    for (const time of this.list.querySelectorAll("time[data-ts]")) {
      const ts = Number(time.dataset.ts);
      if (Number.isFinite(ts) && time.dataset.ts !== "") time.textContent = relativeTime(ts);
    }
  }
}
