// The search box over every session (GET /api/sessions/search): results as
// the user types, after a short pause, each with its snippet's matched words
// marked. Only the answer to the latest query is ever shown: an older one
// that arrives late is dropped. The snippet comes as segments
// ({text, match}) and is built as text nodes and <mark>s, never parsed as
// HTML. A click opens the session at the matching event.

import { sessionsApi } from "./api.js";
import { h } from "./dom.js";
import { absoluteTime, baseName, firstLine, relativeTime } from "./format.js";

const DEBOUNCE_MS = 180;

const KIND_WORDS = {
  title: "title",
  task: "task",
  message: "reply",
  assistant: "reply",
  user: "task",
  tool: "tool output",
  tool_result: "tool output",
  tool_output: "tool output",
};

/** The snippet as nodes: plain text, and each matched segment in a <mark>. */
export function snippetNodes(segments) {
  return (Array.isArray(segments) ? segments : []).map((segment) =>
    segment && segment.match
      ? h("mark", { class: "search-mark" }, String(segment.text ?? ""))
      : document.createTextNode(String(segment?.text ?? "")));
}

export class SessionSearch {
  constructor({ input, results, status, list, onOpen }) {
    this.input = input;
    this.results = results;
    this.status = status;
    this.list = list; // the sessions list, hidden while results are shown
    this.onOpen = onOpen;
    this.asked = 0; // the number of the latest query sent
    this.timer = null;
    input.addEventListener("input", () => this.schedule());
    input.addEventListener("keydown", (event) => {
      if (event.key === "Escape" && input.value) {
        event.preventDefault();
        this.clear();
      } else if (event.key === "ArrowDown") {
        const first = this.results.querySelector("button");
        if (first) {
          event.preventDefault();
          first.focus();
        }
      }
    });
    // Arrow keys walk the results; Escape goes back to the box.
    results.addEventListener("keydown", (event) => {
      const buttons = [...this.results.querySelectorAll("button")];
      const at = buttons.indexOf(document.activeElement);
      if (at < 0) return;
      if (event.key === "ArrowDown" && at < buttons.length - 1) buttons[at + 1].focus();
      else if (event.key === "ArrowUp") (at > 0 ? buttons[at - 1] : this.input).focus();
      else if (event.key === "Escape") this.input.focus();
      else return;
      event.preventDefault();
    });
  }

  get query() {
    return this.input.value.trim();
  }

  /** Ask again (a session was deleted): the results shown may name it. */
  refresh() {
    if (this.query) this.schedule();
  }

  clear() {
    this.input.value = "";
    this.schedule();
  }

  schedule() {
    clearTimeout(this.timer);
    const q = this.query;
    if (!q) {
      this.asked += 1; // whatever is still on its way is stale now
      this.show(false);
      return;
    }
    this.timer = setTimeout(() => this.run(q), DEBOUNCE_MS);
  }

  async run(q) {
    const asked = ++this.asked;
    this.show(true);
    this.setStatus("Searching…", "busy");
    let results;
    try {
      results = await sessionsApi.search(q);
    } catch (error) {
      if (asked === this.asked) {
        this.results.replaceChildren();
        this.setStatus(error.message, "error");
      }
      return;
    }
    if (asked !== this.asked) return; // a newer query was sent meanwhile
    this.render(results);
    this.setStatus(
      results.length ? `${results.length} match${results.length === 1 ? "" : "es"}` : `Nothing matches “${q}”.`,
      results.length ? "done" : "empty",
    );
  }

  show(searching) {
    this.results.hidden = !searching;
    this.status.hidden = !searching;
    this.list.hidden = searching;
    if (!searching) this.results.replaceChildren();
  }

  setStatus(text, state) {
    this.status.textContent = text;
    this.status.dataset.state = state;
  }

  /** The hit the user opened stays marked among the others. */
  open(button, result) {
    for (const other of this.results.querySelectorAll("[aria-current]")) other.removeAttribute("aria-current");
    button.setAttribute("aria-current", "true");
    this.onOpen(result);
  }

  render(results) {
    this.results.replaceChildren(...results.map((result) => this.row(result)));
  }

  row(result) {
    const kind = KIND_WORDS[result.kind] || String(result.kind || "");
    return h(
      "li",
      {},
      h(
        "button",
        {
          type: "button",
          class: "search-result",
          "data-testid": "search-result",
          dataset: { sessionId: result.session_id, runId: result.run_id, seq: String(result.seq ?? "") },
          on: { click: (event) => this.open(event.currentTarget, result) },
        },
        h("span", { class: "search-result-title" }, firstLine(result.title, 90) || "(no task)"),
        h("span", { class: "search-result-snippet", "data-testid": "search-snippet" }, snippetNodes(result.snippet)),
        h(
          "span",
          { class: "search-result-meta" },
          h("span", { class: "search-result-ws", title: result.workspace || "" }, baseName(result.workspace)),
          kind ? h("span", { class: "search-result-kind" }, kind) : null,
          h("time", { title: absoluteTime(result.started_at) }, relativeTime(result.started_at)),
        ),
      ),
    );
  }
}
