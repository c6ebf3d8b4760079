// The sessions sidebar: the conversations list (runs.js's live state), paged and grouped.
// Pages come from GET /api/sessions (`next` is the cursor of the following
// one) as the reader scrolls near the end, so a long history is never loaded
// whole. Rows are grouped by day of last activity, and within a day by
// workspace; each shows its title, status, the agent that started it (if
// one did), models, tokens and cost (an unknown cost says so, never $0). Live
// updates stay runs.js's: this only fetches, lays out and fills rows.

import { sessionsApi } from "./api.js";
import { h } from "./dom.js";
import { absoluteTime, baseName, firstLine, formatTokens, relativeTime } from "./format.js";
import { RunsList } from "./runs.js";
import { showStatus } from "./status.js";

const PAGE_SIZE = 40;
// Load the next page this close to the end of the list, before the reader gets there.
const NEAR_END_PX = 160;

const DAY_MS = 86_400_000;

function dayKey(epochSeconds) {
  const d = new Date((epochSeconds ?? 0) * 1000);
  const two = (v) => String(v).padStart(2, "0");
  return `${d.getFullYear()}-${two(d.getMonth() + 1)}-${two(d.getDate())}`;
}

/** "Today", "Yesterday", a weekday this week, else the date. */
export function dayLabel(epochSeconds, now = Date.now()) {
  const key = dayKey(epochSeconds);
  if (key === dayKey(now / 1000)) return "Today";
  if (key === dayKey((now - DAY_MS) / 1000)) return "Yesterday";
  const date = new Date(epochSeconds * 1000);
  if (now - date.getTime() < 6 * DAY_MS) return date.toLocaleDateString(undefined, { weekday: "long" });
  return date.toLocaleDateString(undefined, { year: "numeric", month: "short", day: "numeric" });
}

/** What a session cost: "$0.0123", or "cost unknown" when a price was missing (null). */
export function costWords(cost) {
  if (cost === null) return "cost unknown";
  if (typeof cost !== "number" || !Number.isFinite(cost)) return "";
  return `$${cost.toFixed(cost >= 1 ? 2 : 4)}`;
}

const lastActive = (session) => session.last_run?.created_at ?? session.started_at ?? 0;

export class SessionSidebar extends RunsList {
  constructor({ list, empty, error, onSelect }) {
    super({ list, empty, error, onSelect });
    this.next = null; // the cursor of the next page; null once the last is loaded
    this.loading = null;
    this.pagesLoaded = 0;
    this.headers = new Map(); // group key -> its <li>
    this.more = h("li", { class: "session-more", "data-testid": "sessions-more", hidden: true }, "Loading more…");
    list.addEventListener("scroll", () => this.maybeLoadMore(), { passive: true });
  }

  /** The first page again (new sessions, changed ones); the pages below it stay. */
  async refresh() {
    try {
      const page = await sessionsApi.page({ limit: PAGE_SIZE });
      this.error.hidden = true;
      for (const session of page.sessions ?? []) this.putSession(session);
      // A refresh must not forget a cursor already past the first page.
      if (this.pagesLoaded <= 1) this.next = page.next ?? null;
      this.pagesLoaded = Math.max(this.pagesLoaded, 1);
      this.render();
    } catch (error) {
      this.error.textContent = `Could not load conversations: ${error.message}`;
      this.error.hidden = false;
      this.render();
    }
  }

  async loadMore() {
    if (this.loading || !this.next) return this.loading;
    const cursor = this.next;
    this.more.hidden = false;
    this.loading = (async () => {
      try {
        const page = await sessionsApi.page({ cursor, limit: PAGE_SIZE });
        for (const session of page.sessions ?? []) this.putSession(session);
        this.next = page.next ?? null;
        this.pagesLoaded += 1;
        this.render();
      } catch (error) {
        this.error.textContent = `Could not load more conversations: ${error.message}`;
        this.error.hidden = false;
        this.next = null;
      } finally {
        this.loading = null;
        this.more.hidden = !this.next;
      }
    })();
    return this.loading;
  }

  /** Near the end of the list (or the list does not fill its box yet): the next page. */
  maybeLoadMore() {
    const el = this.list;
    if (!this.next || this.loading || el.offsetParent === null) return;
    if (el.scrollHeight - el.scrollTop - el.clientHeight <= NEAR_END_PX) {
      this.loadMore().then(() => requestAnimationFrame(() => this.maybeLoadMore()));
    }
  }

  /** As runs.js does, and a run that ends brings its session's new figures (tokens, cost). */
  applyEvent(event) {
    const known = this.sessions.has(event.session_id || this.sessionOf.get(event.run_id));
    super.applyEvent(event);
    // A new session's row is made from the event, which does not say which agent
    // (if any) started it: the server's row does.
    if (event.type === "run_finished" || (event.type === "run_started" && !known)) this.refreshSoon();
  }

  /** Forget a deleted session. */
  remove(sessionId) {
    const session = this.sessions.get(sessionId);
    if (!session) return;
    this.sessions.delete(sessionId);
    for (const [runId, owner] of this.sessionOf) if (owner === sessionId) this.sessionOf.delete(runId);
    if (this.selected === sessionId) this.selected = null;
    this.render();
  }

  sorted() {
    return [...this.sessions.values()].sort((a, b) => lastActive(b) - lastActive(a));
  }

  /** Headers and rows, in order: a day, its workspaces (most recent first), their sessions. */
  layout() {
    const days = new Map();
    for (const session of this.sorted()) {
      const day = dayKey(lastActive(session));
      if (!days.has(day)) days.set(day, { at: lastActive(session), workspaces: new Map() });
      const workspaces = days.get(day).workspaces;
      const ws = session.workspace || session.last_run?.workspace || "";
      if (!workspaces.has(ws)) workspaces.set(ws, []);
      workspaces.get(ws).push(session);
    }
    const items = [];
    for (const [day, { at, workspaces }] of days) {
      items.push({ key: `day\u0000${day}`, header: "day", label: dayLabel(at) });
      for (const [ws, sessions] of workspaces) {
        items.push({ key: `ws\u0000${day}\u0000${ws}`, header: "workspace", label: baseName(ws), title: ws });
        for (const session of sessions) items.push({ key: session.id, session });
      }
    }
    return items;
  }

  render() {
    const items = this.layout();
    this.empty.hidden = items.length > 0 || !this.error.hidden;
    const keepRows = new Set();
    const keepHeaders = new Set();
    const wanted = [];
    for (const item of items) {
      if (item.session) {
        keepRows.add(item.key);
        let row = this.rows.get(item.key);
        if (!row) {
          row = this.createRow(item.key);
          this.rows.set(item.key, row);
        }
        this.fillRow(row, item.session);
        wanted.push(row);
      } else {
        keepHeaders.add(item.key);
        let header = this.headers.get(item.key);
        if (!header) {
          header = this.createHeader(item);
          this.headers.set(item.key, header);
        }
        header.firstElementChild.textContent = item.label;
        wanted.push(header);
      }
    }
    for (const [id, row] of this.rows) if (!keepRows.has(id)) { row.remove(); this.rows.delete(id); }
    for (const [id, el] of this.headers) if (!keepHeaders.has(id)) { el.remove(); this.headers.delete(id); }
    wanted.push(this.more);
    // Move only what is out of place: a row that stays put keeps its focus.
    wanted.forEach((el, index) => {
      const current = this.list.children[index];
      if (current !== el) this.list.insertBefore(el, current ?? null);
    });
    this.more.hidden = !this.next;
    requestAnimationFrame(() => this.maybeLoadMore());
  }

  createHeader(item) {
    const day = item.header === "day";
    return h(
      "li",
      { class: day ? "session-day" : "session-ws", "data-testid": day ? "session-day" : "session-workspace", role: "presentation" },
      h(day ? "h3" : "p", { class: day ? "session-day-label" : "session-ws-label", title: item.title || null }),
    );
  }

  createRow(id) {
    const button = h(
      "button",
      {
        type: "button",
        class: "run-item session-item",
        "data-testid": "run-item",
        "data-session-id": id,
        on: { click: () => this.onSelect(this.sessions.get(id)?.last_run.id) },
      },
      h("span", { class: "status-dot", "data-testid": "run-item-status" }),
      h("span", { class: "run-item-task", "data-testid": "session-title" }),
      h("span", { class: "run-item-waiting", "data-testid": "run-item-waiting", hidden: true }, "waits for you"),
      h(
        "span",
        { class: "run-item-meta session-figures" },
        h("span", { class: "session-agent", "data-testid": "session-agent" }),
        h("span", { class: "session-models", "data-testid": "session-models" }),
        h("span", { class: "session-tokens", "data-testid": "session-tokens" }),
        h("span", { class: "session-cost", "data-testid": "session-cost" }),
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
    const [dot, title, waiting, figures] = button.children;
    waiting.hidden = !(run.waiting > 0);
    // The last run's status is kept live by the socket; the session's may be older.
    const status = run.status || session.status;
    showStatus(dot, status);
    button.dataset.status = status || "running";
    const text = session.title || run.task;
    title.textContent = firstLine(text) || "(no task)";

    const [agent, models, tokens, cost, count, time] = figures.children;
    agent.textContent = session.agent ? `agent ${session.agent}` : "";
    agent.hidden = !session.agent;
    agent.title = session.agent ? `Started by the agent ${session.agent}` : "";
    const listed = (session.models ?? []).filter(Boolean);
    const names = listed.length ? listed : [run.model].filter(Boolean);
    models.textContent = names.join(", ");
    models.title = names.join(", ");
    // A model that reported no usage (a script) has no figures to show: "0 tok"
    // would contradict the context bar's count of what the conversation holds.
    const hasTokens = typeof session.tokens === "number" && session.tokens > 0;
    tokens.textContent = hasTokens ? `${formatTokens(session.tokens)} tok` : "";
    tokens.hidden = !hasTokens;
    const priced = typeof session.cost === "number" && session.cost > 0;
    const spent = "cost" in session && (hasTokens || priced) ? costWords(session.cost) : "";
    cost.textContent = spent;
    cost.hidden = !spent;
    cost.dataset.known = String(session.cost !== null);

    count.textContent = session.runs > 1 ? `${session.runs} exchanges` : "";
    count.hidden = session.runs <= 1;
    const at = lastActive(session);
    time.dataset.ts = String(at || "");
    time.textContent = relativeTime(at);
    time.title = absoluteTime(at);
    const asks = run.waiting > 0 ? ", waits for your approval" : "";
    const exchanges = session.runs > 1 ? `, ${session.runs} exchanges` : "";
    const ws = baseName(session.workspace || run.workspace);
    const by = session.agent ? `, started by the agent ${session.agent}` : "";
    button.setAttribute("aria-label",
      `${firstLine(text, 80)}, ${status}${asks}${exchanges}${by}, in ${ws}${spent ? `, ${spent}` : ""}`);
  }
}
