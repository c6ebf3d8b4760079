// The transcript of one conversation: the events of each of its runs, in
// order, built event by event. Events are deduplicated by `seq` per run (a
// reconnect replays each run from the start), consecutive text deltas of a
// turn stream into one message (its thinking folded above it), and each
// tool call's card appears with its first streamed arguments and is joined by
// call id (per run: two runs reuse ids) by its request, gate, hooks and
// result. A discarded turn stays, marked. The view follows new output only
// while the reader is already at the bottom. An approval request puts a card
// under its call; notices and the verify command's result are in the flow.
// Each drawn element carries the seq of the event that made it (data-seq),
// and every event's element is remembered, so that a search hit can be shown.
// This is the log's bookkeeping; the entries themselves are drawn by entries.js.

import { ApprovalCard } from "./approval.js";
import {
  attachmentList,
  compactionEntry,
  discardedNote,
  hookEntry,
  messageEntry,
  noticeEntry,
  runEndEntry,
  safetyNotice,
  taskEntry,
  thinkingFold,
  verifyEntry,
} from "./entries.js";
import { EventMarks } from "./marks.js";
import { renderRichText } from "./richtext.js";
import { ToolCard } from "./toolcard.js";

const STICKY_PX = 48;

const key = (runId, callId) => `${runId}\u0000${callId}`;

export class Transcript {
  constructor(el, jumpButton, { onRequest = () => {} } = {}) {
    this.el = el;
    this.jump = jumpButton;
    this.onRequest = onRequest;
    this.sticky = true;
    this.lastTop = 0;
    this.frame = 0;
    el.addEventListener("scroll", () => this.onScroll(), { passive: true });
    // The log's box changes size (window resized, an error shown above it):
    // a reader at the bottom stays there.
    new ResizeObserver(() => {
      if (this.sticky) this.scrollToEnd();
    }).observe(el);
    jumpButton.addEventListener("click", () => {
      this.sticky = true;
      this.scrollToEnd();
    });
    this.reset(null);
  }

  /** Empty the log, for the runs in `runIds` (none: the log is closed). */
  reset(runIds = []) {
    this.runs = new Set(runIds);
    this.clear();
    this.sticky = true;
    this.restoreTop = null;
    this.jump.hidden = true;
  }

  /** Draw the events of `runId` too (a follow-up joined the conversation). */
  accept(runId) {
    this.runs.add(runId);
  }

  get lastSeq() {
    return Math.max(0, ...this.seqs.values());
  }

  /**
   * Rebuild the same run from scratch: the server is replaying it from the
   * start (after a reconnect). Merged text deltas cannot be deduplicated
   * against what was already drawn, so the log is redrawn; a reader who had
   * scrolled up gets their position back once the log is long enough again.
   */
  restart() {
    const top = this.el.scrollTop;
    this.clear();
    this.restoreTop = this.sticky ? null : top;
  }

  clear() {
    this.elsewhere ??= new Map(); // run id -> where another process runs it (set by the run view)
    for (const approval of this.approvals?.values() ?? []) approval.stop();
    this.approvals = new Map();
    this.seqs = new Map(); // run id -> the last seq drawn
    this.message = null; // the assistant message being streamed: {run, turn, el, textEl, text, …}
    this.cards = new Map();
    this.requested = new Set(); // run+turn whose request can be shown
    this.sawAssistant = false;
    this.startedAt = new Map();
    this.marks = new EventMarks(this);
    this.el.replaceChildren();
  }

  /** Remember which element `event` drew into; the first event of an element gives its data-seq. */
  place(event) {
    const id = key(event.run_id, event.call_id);
    let el;
    if (event.type === "text_delta" || event.type === "thinking_delta") el = this.message?.el;
    else if (event.type === "approval_requested") el = this.approvals.get(id)?.el;
    else if (event.call_id && this.cards.has(id) && event.type !== "notice") el = this.cards.get(id).el;
    this.marks.place(event, el || this.el.lastElementChild);
  }

  /** Apply one event; returns false when it was a duplicate or another conversation's. */
  apply(event) {
    if (!this.runs.has(event.run_id) || event.seq <= (this.seqs.get(event.run_id) ?? 0)) return false;
    this.seqs.set(event.run_id, event.seq);
    const wasAtEnd = this.sticky;
    switch (event.type) {
      case "run_started":
        this.addTask(event);
        break;
      case "text_delta":
        this.addText(event);
        break;
      case "thinking_delta":
        this.addThinking(event);
        break;
      case "tool_call_delta":
        this.cardFor(event).streamArgs(String(event.text || ""));
        break;
      case "turn_discarded":
        this.discardTurn(event);
        break;
      case "model_requested":
        this.requested.add(key(event.run_id, event.turn));
        break;
      case "tool_requested":
        this.addTool(event);
        break;
      case "tool_result":
        this.addResult(event);
        break;
      case "gate_decided":
        this.cardFor(event).setGate(event);
        break;
      case "approval_requested":
        this.addApproval(event);
        break;
      case "approval_resolved":
        this.resolveApproval(event);
        break;
      case "hook_ran":
        this.addHook(event);
        break;
      case "notice":
        this.addNotice(event);
        break;
      case "verify_finished":
        this.addVerify(event);
        break;
      case "compacted":
        this.addCompaction(event);
        break;
      case "run_finished":
        this.addEnd(event);
        break;
      case "message_added":
        if (!this.addAttached(event)) return true;
        break;
      default:
        return true; // usage_reported, message_added and future types: not drawn here
    }
    this.place(event);
    if (this.restoreTop !== null) this.restoreScroll();
    else if (wasAtEnd) this.scheduleScroll();
    else this.jump.hidden = false;
    return true;
  }

  /** A compaction: folded, with what was summarised and where the handoff doc is. */
  addCompaction(event) {
    this.endMessage();
    this.el.append(compactionEntry(event));
  }

  /** A notice inside the log (e.g. an error from the server). */
  notice(text, kind = "info") {
    this.endMessage();
    this.el.append(noticeEntry(text, kind));
    if (this.sticky) this.scheduleScroll();
  }

  addTask(event) {
    this.endMessage();
    this.startedAt.set(event.run_id, event.ts);
    this.el.append(taskEntry(event));
  }

  /** What went with a task: its attachments, under the task (by path and size; the transcript keeps no content). */
  addAttached(event) {
    const attached = event.message?.role === "user" ? event.message.attachments || [] : [];
    const task = [...this.el.querySelectorAll("[data-testid=task-entry]")].find(
      (entry) => entry.dataset.runId === event.run_id,
    );
    if (!attached.length || !task || task.querySelector(".task-attachments")) return false;
    task.lastElementChild.append(attachmentList(attached));
    return true;
  }

  /** The assistant message of this event's run and turn, made when it is the first word of it. */
  messageFor(event) {
    if (this.message && this.message.run === event.run_id && this.message.turn === event.turn) {
      return this.message;
    }
    this.endMessage();
    const first = !this.sawAssistant;
    this.sawAssistant = true;
    const onRequest = this.requested.has(key(event.run_id, event.turn))
      ? () => this.onRequest(event.run_id, event.turn)
      : null;
    const { el, body, textEl } = messageEntry(event, first, onRequest);
    this.el.append(el);
    this.message = { run: event.run_id, turn: event.turn, el, body, textEl, text: "", thinking: null };
    return this.message;
  }

  addText(event) {
    const message = this.messageFor(event);
    message.text += typeof event.text === "string" ? event.text : "";
    renderRichText(message.textEl, message.text);
  }

  addThinking(event) {
    const message = this.messageFor(event);
    if (!message.thinking) {
      const { fold, pre } = thinkingFold();
      message.textEl.before(fold);
      message.thinking = { fold, pre, text: "" };
    }
    message.thinking.text += typeof event.text === "string" ? event.text : "";
    message.thinking.pre.textContent = message.thinking.text;
  }

  /** What streamed of a turn is void (the connection dropped): kept, marked, closed. */
  discardTurn(event) {
    const message = this.message;
    if (message && message.run === event.run_id && message.turn === event.turn) {
      message.el.dataset.discarded = "true";
      message.body.append(discardedNote(event.reason));
      this.endMessage();
    }
    for (const card of this.cards.values()) {
      if (card.runId === event.run_id && card.turn === event.turn && card.streaming) card.discard();
    }
  }

  endMessage() {
    if (this.message) this.message.el.dataset.streaming = "false";
    this.message = null;
  }

  addTool(event) {
    const existing = this.cards.get(key(event.run_id, event.call_id));
    if (existing && !existing.discarded) {
      existing.setRequest(event); // made earlier by its streamed arguments or a safety event
      return;
    }
    this.endMessage();
    const card = new ToolCard(event);
    this.cards.set(key(event.run_id, event.call_id), card);
    this.el.append(card.el);
  }

  /** The card of a call, made from what this event knows if none is shown yet. */
  cardFor(event) {
    let card = this.cards.get(key(event.run_id, event.call_id));
    if (!card || card.discarded) {
      this.endMessage();
      card = new ToolCard({
        run_id: event.run_id,
        turn: event.turn,
        call_id: event.call_id,
        tool: event.tool,
        risk: event.risk || "",
        args: event.args,
      });
      this.cards.set(key(event.run_id, event.call_id), card);
      this.el.append(card.el);
    }
    return card;
  }

  addResult(event) {
    this.cardFor(event).setResult(event);
  }

  addApproval(event) {
    const card = this.cardFor(event);
    const id = key(event.run_id, event.call_id);
    this.approvals.get(id)?.stop();
    const approval = new ApprovalCard(event, event.run_id, this.elsewhere.get(event.run_id));
    this.approvals.set(id, approval);
    // Under its call (after any earlier approval card of the same call).
    let anchor = card.el;
    while (anchor.nextElementSibling?.classList.contains("approval-card")) anchor = anchor.nextElementSibling;
    anchor.after(approval.el);
    if (card.gate.hidden) card.setGate({ decision: "ask", reason: event.reason });
    if (card.el.dataset.state === "pending") card.setState("waiting", "?", "waiting for you");
  }

  resolveApproval(event) {
    this.approvals.get(key(event.run_id, event.call_id))?.resolve(event);
    this.cards.get(key(event.run_id, event.call_id))?.setApproval(event);
  }

  addHook(event) {
    const card = event.call_id ? this.cards.get(key(event.run_id, event.call_id)) : null;
    if (card) {
      card.addHook(event);
      return;
    }
    this.endMessage();
    this.el.append(hookEntry(event));
  }

  addNotice(event) {
    this.endMessage();
    this.el.append(safetyNotice(event));
  }

  addVerify(event) {
    this.endMessage();
    this.el.append(verifyEntry(event));
  }

  addEnd(event) {
    this.endMessage();
    for (const card of this.cards.values()) if (card.runId === event.run_id) card.abandon();
    for (const [id, approval] of this.approvals) if (id.startsWith(`${event.run_id}\u0000`)) approval.end();
    this.el.append(runEndEntry(event, this.startedAt.get(event.run_id)));
  }

  restoreScroll() {
    const el = this.el;
    if (el.scrollHeight - el.clientHeight < this.restoreTop) return;
    el.scrollTop = this.restoreTop;
    this.restoreTop = null;
  }

  onScroll() {
    const el = this.el;
    const top = el.scrollTop;
    const movedUp = top < this.lastTop - 1;
    this.lastTop = top;
    if (this.restoreTop !== null) return; // the log is being rebuilt under the reader
    // Growth never fires "scroll", and our own scrolls only go down: only the
    // reader scrolling up unsticks the view; reaching the bottom sticks it again.
    if (el.scrollHeight - top - el.clientHeight <= STICKY_PX) {
      this.sticky = true;
      this.jump.hidden = true;
    } else if (movedUp) {
      this.sticky = false;
    }
  }

  scheduleScroll() {
    if (this.frame) return;
    this.frame = requestAnimationFrame(() => {
      this.frame = 0;
      if (this.sticky) this.scrollToEnd();
    });
  }

  scrollToEnd() {
    this.el.scrollTop = this.el.scrollHeight;
    this.jump.hidden = true;
  }
}
