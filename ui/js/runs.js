// The conversations list's live state: sessions from GET /api/sessions (each
// with its last run), kept current by the all-runs WebSocket subscription
// ("*"): a new run of a conversation moves it up, an approval marks it. The
// sidebar (sessions.js) fetches the pages, lays the rows out and fills them;
// rows are keyed so that updates never rebuild them (no focus loss, no jumps).
// A click opens the conversation at its last run.

import { relativeTime } from "./format.js";

/** The state and its live updates; a subclass fetches (`refresh()`) and draws
 * (`render()`, with `createRow` and `fillRow`). */
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

  updateTimes() {
    for (const time of this.list.querySelectorAll("time[data-ts]")) {
      const ts = Number(time.dataset.ts);
      if (Number.isFinite(ts) && time.dataset.ts !== "") time.textContent = relativeTime(ts);
    }
  }
}
