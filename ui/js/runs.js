// The conversations list: loaded from GET /api/sessions (each with its last
// run), kept current by the all-runs WebSocket subscription ("*"): a new run
// of a conversation moves it to the top. Rows are keyed so that updates never
// rebuild them (no focus loss, no jumps). A click opens the conversation at
// its last run.

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
    this.sessions = new Map(); // session id -> {id, title, workspace, runs, last_run}
    this.sessionOf = new Map(); // run id -> session id
    this.rows = new Map();
    this.selected = null; // a session id
    this.refreshTimer = null;
    setInterval(() => this.updateTimes(), 30_000);
  }

  get size() {
    return this.sessions.size;
  }

  /** The last known RunInfo of run `id`, when it is a conversation's last run. */
  get(id) {
    const session = this.sessions.get(this.sessionOf.get(id));
    return session && session.last_run.id === id ? session.last_run : null;
  }

  async refresh() {
    try {
      const sessions = await api.sessions();
      this.error.hidden = true;
      for (const session of sessions) this.putSession(session);
      this.render();
    } catch (error) {
      this.error.textContent = `Could not load conversations: ${error.message}`;
      this.error.hidden = false;
      this.render();
    }
  }

  putSession(session) {
    const known = this.sessions.get(session.id);
    const last = known && (known.last_run.created_at ?? 0) > (session.last_run.created_at ?? 0)
      ? known.last_run
      : { ...known?.last_run, ...session.last_run };
    this.sessions.set(session.id, { ...known, ...session, last_run: last });
    this.sessionOf.set(last.id, session.id);
  }

  /** Refresh soon, once, however many callers ask. */
  refreshSoon() {
    if (this.refreshTimer) return;
    this.refreshTimer = setTimeout(() => {
      this.refreshTimer = null;
      this.refresh();
    }, 250);
  }

  /** Merge a RunInfo (or part of one, with its id) and redraw. */
  upsert(run) {
    if (!run || !run.id) return;
    const sessionId = run.session_id || this.sessionOf.get(run.id);
    if (!sessionId) {
      this.refreshSoon();
      return;
    }
    this.sessionOf.set(run.id, sessionId);
    const session = this.sessions.get(sessionId);
    if (!session) {
      this.sessions.set(sessionId, {
        id: sessionId,
        title: run.task || "",
        workspace: run.workspace || "",
        runs: 1,
        last_run: { ...run },
      });
    } else if (session.last_run.id === run.id) {
      session.last_run = { ...session.last_run, ...run };
    } else if ((run.created_at ?? Infinity) >= (session.last_run.created_at ?? 0)) {
      session.last_run = { ...run };
      session.runs += 1;
    }
    this.render();
  }

  /** An event from the all-runs subscription. */
  applyEvent(event) {
    const sessionId = event.session_id || this.sessionOf.get(event.run_id);
    const session = this.sessions.get(sessionId);
    if (event.type === "run_started") {
      if (!session && event.continues) {
        this.refreshSoon(); // a follow-up of a conversation not loaded yet
        return;
      }
      this.upsert({
        id: event.run_id,
        session_id: event.session_id,
        task: event.task,
        workspace: event.workspace,
        model: event.model,
        status: "running",
        created_at: event.ts,
        waiting: 0,
      });
    } else if (!session) {
      if (event.type === "run_finished") this.refreshSoon(); // missed while reconnecting
    } else if (session.last_run.id !== event.run_id) {
      // an older run of the conversation: its row shows the last one
    } else if (event.type === "run_finished") {
      this.upsert({ id: event.run_id, status: event.status, reason: event.reason,
        turns: event.turns, finished_at: event.ts, waiting: 0 });
    } else if (event.type === "approval_requested") {
      this.upsert({ id: event.run_id, waiting: (session.last_run.waiting ?? 0) + 1 });
    } else if (event.type === "approval_resolved") {
      this.upsert({ id: event.run_id, waiting: Math.max(0, (session.last_run.waiting ?? 0) - 1) });
    }
  }

  /** Mark the conversation of run `runId` (or session `sessionId`) as the open one. */
  select(runId, sessionId = null) {
    const id = sessionId || this.sessionOf.get(runId) || null;
    this.selected = id;
    for (const [key, row] of this.rows) {
      const button = row.firstElementChild;
      if (key === id) button.setAttribute("aria-current", "true");
      else button.removeAttribute("aria-current");
    }
  }

  sorted() {
    return [...this.sessions.values()]
      .sort((a, b) => (b.last_run.created_at ?? 0) - (a.last_run.created_at ?? 0))
      .slice(0, MAX_ROWS);
  }

  render() {
    const sessions = this.sorted();
    this.empty.hidden = sessions.length > 0 || !this.error.hidden;
    const keep = new Set(sessions.map((s) => s.id));
    for (const [id, row] of this.rows) {
      if (!keep.has(id)) {
        row.remove();
        this.rows.delete(id);
      }
    }
    sessions.forEach((session, index) => {
      let row = this.rows.get(session.id);
      if (!row) {
        row = this.createRow(session.id);
        this.rows.set(session.id, row);
      }
      this.fillRow(row, session);
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
        "data-session-id": id,
        on: { click: () => this.onSelect(this.sessions.get(id)?.last_run.id) },
      },
      h("span", { class: "status-dot", "data-testid": "run-item-status" }),
      h("span", { class: "run-item-task" }),
      // A run paused on an approval, shown wherever the user is looking.
      h("span", { class: "run-item-waiting", "data-testid": "run-item-waiting", hidden: true }, "waits for you"),
      h(
        "span",
        { class: "run-item-meta" },
        h("span", { class: "run-item-ws" }),
        h("span", { class: "run-item-count", "data-testid": "run-item-count" }),
        h("time", { class: "run-item-time" }),
      ),
    );
    if (id === this.selected) button.setAttribute("aria-current", "true");
    return h("li", {}, button);
  }

  fillRow(row, session) {
    const run = session.last_run;
    const button = row.firstElementChild;
    button.dataset.runId = run.id;
    const [dot, task, waiting, meta] = button.children;
    waiting.hidden = !(run.waiting > 0);
    showStatus(dot, run.status);
    button.dataset.status = run.status || "running";
    const title = session.title || run.task;
    task.textContent = firstLine(title) || "(no task)";
    const [ws, count, time] = meta.children;
    ws.textContent = baseName(session.workspace || run.workspace);
    ws.title = session.workspace || run.workspace || "";
    count.textContent = session.runs > 1 ? `${session.runs} exchanges` : "";
    count.hidden = session.runs <= 1;
    time.dataset.ts = String(run.created_at ?? "");
    time.textContent = relativeTime(run.created_at);
    time.title = absoluteTime(run.created_at);
    const asks = run.waiting > 0 ? ", waits for your approval" : "";
    const exchanges = session.runs > 1 ? `, ${session.runs} exchanges` : "";
    button.setAttribute("aria-label",
      `${firstLine(title, 80)}, ${run.status}${asks}${exchanges}, in ${baseName(session.workspace || run.workspace)}`);
  }

  updateTimes() {
    for (const time of this.list.querySelectorAll("time[data-ts]")) {
      const ts = Number(time.dataset.ts);
      if (Number.isFinite(ts) && time.dataset.ts !== "") time.textContent = relativeTime(ts);
    }
  }
}
