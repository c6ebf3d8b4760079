// The transcript's entries as elements, each from the event that makes it:
// the task, its attachments, an assistant message and its thinking fold, the
// note on a discarded turn, notices, hooks outside any call, the verify
// command's result, a compaction and the end of a run. Drawing only: which
// entry goes where, and what streams into which, is the transcript's (transcript.js).

import { h, logo } from "./dom.js";
import { hookLine, foldable } from "./toolcard.js";
import { absoluteTime, baseName, formatBytes, formatDuration } from "./format.js";

/** A compaction: folded, with what was summarised and where the handoff doc is. */
export function compactionEntry(event) {
  const before = Number(event.before_chars || 0).toLocaleString();
  const after = Number(event.after_chars || 0).toLocaleString();
  const by = event.summarised_by === "extract" ? "an extract (no model call)" : event.summarised_by;
  return h("details", { class: "compaction", "data-testid": "compaction" },
    h("summary", {},
      h("strong", {}, "Compacted"),
      ` · ${event.dropped} message${event.dropped === 1 ? "" : "s"} summarised by ${by} · ${before} → ${after} characters`),
    h("p", { class: "compaction-reason" }, `Why: ${event.reason}`),
    event.handoff_path
      ? h("p", { class: "compaction-handoff" }, "Handoff doc: ", h("code", { "data-testid": "compaction-handoff" }, event.handoff_path))
      : null,
    h("pre", { class: "compaction-summary" }, event.summary || ""));
}

/** A notice of the page's own (e.g. an error from the server). */
export function noticeEntry(text, kind) {
  return h("p", { class: "notice", "data-kind": kind, "data-testid": "transcript-notice" }, text);
}

export function taskEntry(event) {
  const followUp = Boolean(event.continues);
  const body = h("div", { class: "entry-body entry-text" }, event.task);
  return h(
    "div",
    {
      class: "entry entry-task",
      "data-testid": "task-entry",
      dataset: { runId: event.run_id, followUp: String(followUp) },
    },
    h("div", { class: "entry-avatar", "aria-hidden": "true" }, "You"),
    h(
      "div",
      {},
      h("p", { class: "entry-label" }, h("strong", {}, followUp ? "Follow-up" : "Task"), " · ",
        h("time", { datetime: new Date(event.ts * 1000).toISOString() }, absoluteTime(event.ts))),
      body,
    ),
  );
}

/** A task's attachments, by path and size (the transcript keeps no content). */
export function attachmentList(attached) {
  return h("ul", { class: "attach-chips task-attachments", "data-testid": "task-attachments" },
    attached.map((a) =>
      h("li", { class: "attach-chip", "data-how": a.media_type?.startsWith("image/") ? "image" : "inline", title: a.path || a.name },
        h("span", { class: "attach-name" }, baseName(a.path || a.name)),
        a.size ? h("span", { class: "attach-size" }, formatBytes(a.size)) : null)));
}

/**
 * An assistant message of `event`'s turn, empty: `first` (the conversation's
 * first) gets the avatar and the name; `onRequest`, when given, a button that
 * shows what was sent to the model. Returns its parts for the text to stream into.
 */
export function messageEntry(event, first, onRequest) {
  const textEl = h("div", { class: "message-text entry-text" });
  const body = h("div", { class: "message-body" },
    first ? h("p", { class: "entry-label" }, h("strong", {}, "Sparrow")) : null, textEl);
  const el = h(
    "div",
    {
      class: "entry message",
      "data-testid": "assistant-message",
      dataset: { turn: String(event.turn), runId: event.run_id, streaming: "true" },
    },
    first ? h("div", { class: "entry-avatar" }, logo()) : h("div", { "aria-hidden": "true" }),
    body,
  );
  if (onRequest) {
    body.append(
      h(
        "button",
        {
          type: "button",
          class: "message-request",
          "data-testid": "show-request",
          title: "What was sent to the model for this turn",
          on: { click: onRequest },
        },
        "Request",
      ),
    );
  }
  return { el, body, textEl };
}

/** The folded thinking of a message, empty; `pre` is what it streams into. */
export function thinkingFold() {
  const pre = h("div", { class: "thinking-text", "data-testid": "thinking-text" });
  const fold = h(
    "details",
    { class: "thinking", "data-testid": "thinking" },
    h("summary", {}, "Thinking"),
    pre,
  );
  return { fold, pre };
}

export function discardedNote(reason) {
  return h("p", { class: "discarded-note", "data-testid": "discarded-note" }, `Discarded: ${reason}`);
}

/** A hook that ran for no call shown: a line in the flow. */
export function hookEntry(event) {
  return h("ul", { class: "hook-list hook-list-flow" }, hookLine(event));
}

/** A safety notice of the run (a call refused, a limit reached…). */
export function safetyNotice(event) {
  return h(
    "p",
    { class: "notice", "data-kind": "safety", "data-testid": "safety-notice", dataset: { callId: event.call_id || "" } },
    String(event.text || ""),
  );
}

export function verifyEntry(event) {
  const ok = event.ok === true;
  const exit = event.exit_code === null || event.exit_code === undefined ? "" : `exit ${event.exit_code}`;
  const output = typeof event.output === "string" ? event.output : "";
  return h(
    "section",
    { class: "verify", "data-testid": "verify-result", dataset: { ok: String(ok) }, "aria-label": `Verify ${ok ? "passed" : "failed"}` },
    h(
      "header",
      { class: "verify-head" },
      h("span", { class: "verify-icon", "aria-hidden": "true" }, ok ? "✓" : "✕"),
      h("strong", { class: "verify-verdict" }, ok ? "Verify passed" : "Verify failed"),
      h("code", { class: "verify-command" }, String(event.command || "")),
      h("span", { class: "verify-meta" }, [exit, formatDuration(Number(event.duration_ms))].filter(Boolean).join(" · ")),
    ),
    foldable(output, { label: ok ? "Show output" : "Show output (sent back to the model)", testid: "verify-output", forceFold: true }),
  );
}

/** The end of a run: its status, turns and time (from `started`, its start's ts, when known). */
export function runEndEntry(event, started) {
  const status = String(event.status || "");
  const turns = Number(event.turns) || 0;
  const parts = [`${turns} ${turns === 1 ? "turn" : "turns"}`];
  if (started !== undefined) parts.push(formatDuration((event.ts - started) * 1000));
  return h(
    "div",
    { class: "run-end", "data-status": status, "data-testid": "run-end", role: "status" },
    h("span", { class: "run-end-label" }, status.charAt(0).toUpperCase() + status.slice(1)),
    h("span", {}, parts.join(" · ")),
    // Why a run ended otherwise than with an answer, in the flow of the conversation.
    status !== "completed" && event.reason
      ? h("span", { class: "run-end-reason", "data-testid": "run-end-reason" }, String(event.reason))
      : null,
  );
}
