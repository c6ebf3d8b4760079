// The transcript of one run, built event by event. Events are deduplicated by
// `seq` (a reconnect replays the run from the start), consecutive text
// deltas of a turn stream into one message, and each tool_result joins the
// card of its call_id. The view follows new output only while the reader is
// already at the bottom. The safety events join their tool card too (how the
// gate decided, hooks), an approval request puts a card under its call, and
// notices and the verify command's result are drawn in the flow.

import { ApprovalCard } from "./approval.js";
import { h, logo } from "./dom.js";
import { renderRichText } from "./richtext.js";
import { foldable, hookLine, ToolCard } from "./toolcard.js";
import { absoluteTime, formatDuration } from "./format.js";

const STICKY_PX = 48;

export class Transcript {
  constructor(el, jumpButton) {
    this.el = el;
    this.jump = jumpButton;
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

  /** Empty the log for run `runId` (or for none). */
  reset(runId) {
    this.runId = runId;
    this.clear();
    this.sticky = true;
    this.restoreTop = null;
    this.jump.hidden = true;
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
    for (const approval of this.approvals?.values() ?? []) approval.stop();
    this.approvals = new Map();
    this.lastSeq = 0;
    this.message = null; // the assistant message being streamed: {turn, el, textEl, text}
    this.cards = new Map();
    this.sawAssistant = false;
    this.startedAt = null;
    this.el.replaceChildren();
  }

  /** Apply one event; returns false when it was a duplicate or another run's. */
  apply(event) {
    if (event.run_id !== this.runId || event.seq <= this.lastSeq) return false;
    this.lastSeq = event.seq;
    const wasAtEnd = this.sticky;
    switch (event.type) {
      case "run_started":
        this.addTask(event);
        break;
      case "text_delta":
        this.addText(event);
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
      case "run_finished":
        this.addEnd(event);
        break;
      default:
        return true; // usage_reported and future types: not drawn here
    }
    if (this.restoreTop !== null) this.restoreScroll();
    else if (wasAtEnd) this.scheduleScroll();
    else this.jump.hidden = false;
    return true;
  }

  /** A notice inside the log (e.g. an error from the server). */
  notice(text, kind = "info") {
    this.endMessage();
    this.el.append(h("p", { class: "notice", "data-kind": kind, "data-testid": "transcript-notice" }, text));
    if (this.sticky) this.scheduleScroll();
  }

  addTask(event) {
    this.endMessage();
    this.startedAt = event.ts;
    const body = h("div", { class: "entry-body entry-text" }, event.task);
    this.el.append(
      h(
        "div",
        { class: "entry entry-task", "data-testid": "task-entry" },
        h("div", { class: "entry-avatar", "aria-hidden": "true" }, "You"),
        h(
          "div",
          {},
          h("p", { class: "entry-label" }, h("strong", {}, "Task"), " · ",
            h("time", { datetime: new Date(event.ts * 1000).toISOString() }, absoluteTime(event.ts))),
          body,
        ),
      ),
    );
  }

  addText(event) {
    const text = typeof event.text === "string" ? event.text : "";
    if (this.message === null || this.message.turn !== event.turn) {
      this.endMessage();
      const textEl = h("div", { class: "message-text entry-text" });
      const first = !this.sawAssistant;
      this.sawAssistant = true;
      const el = h(
        "div",
        {
          class: "entry message",
          "data-testid": "assistant-message",
          dataset: { turn: String(event.turn), streaming: "true" },
        },
        first ? h("div", { class: "entry-avatar" }, logo()) : h("div", { "aria-hidden": "true" }),
        h("div", {}, first ? h("p", { class: "entry-label" }, h("strong", {}, "Sparrow")) : null, textEl),
      );
      this.el.append(el);
      this.message = { turn: event.turn, el, textEl, text: "" };
    }
    this.message.text += text;
    renderRichText(this.message.textEl, this.message.text);
  }

  endMessage() {
    if (this.message) this.message.el.dataset.streaming = "false";
    this.message = null;
  }

  addTool(event) {
    const existing = this.cards.get(event.call_id);
    if (existing) {
      existing.setRequest(event); // made earlier by a safety event of the same call
      return;
    }
    this.endMessage();
    const card = new ToolCard(event);
    this.cards.set(event.call_id, card);
    this.el.append(card.el);
  }

  /** The card of a call, made from what this event knows if none is shown yet. */
  cardFor(event) {
    let card = this.cards.get(event.call_id);
    if (!card) {
      this.endMessage();
      card = new ToolCard({ call_id: event.call_id, tool: event.tool, risk: event.risk || "", args: event.args });
      this.cards.set(event.call_id, card);
      this.el.append(card.el);
    }
    return card;
  }

  addResult(event) {
    this.cardFor({ call_id: event.call_id, tool: event.tool }).setResult(event);
  }

  addApproval(event) {
    const card = this.cardFor(event);
    this.approvals.get(event.call_id)?.stop();
    const approval = new ApprovalCard(event, this.runId);
    this.approvals.set(event.call_id, approval);
    // Under its call (after any earlier approval card of the same call).
    let anchor = card.el;
    while (anchor.nextElementSibling?.classList.contains("approval-card")) anchor = anchor.nextElementSibling;
    anchor.after(approval.el);
    if (card.gate.hidden) card.setGate({ decision: "ask", reason: event.reason });
    if (card.el.dataset.state === "pending") card.setState("waiting", "?", "waiting for you");
  }

  resolveApproval(event) {
    this.approvals.get(event.call_id)?.resolve(event);
    this.cards.get(event.call_id)?.setApproval(event);
  }

  addHook(event) {
    const card = event.call_id ? this.cards.get(event.call_id) : null;
    if (card) {
      card.addHook(event);
      return;
    }
    this.endMessage();
    this.el.append(h("ul", { class: "hook-list hook-list-flow" }, hookLine(event)));
  }

  addNotice(event) {
    this.endMessage();
    this.el.append(
      h(
        "p",
        { class: "notice", "data-kind": "safety", "data-testid": "safety-notice", dataset: { callId: event.call_id || "" } },
        String(event.text || ""),
      ),
    );
  }

  addVerify(event) {
    this.endMessage();
    const ok = event.ok === true;
    const exit = event.exit_code === null || event.exit_code === undefined ? "" : `exit ${event.exit_code}`;
    const output = typeof event.output === "string" ? event.output : "";
    this.el.append(
      h(
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
      ),
    );
  }

  addEnd(event) {
    this.endMessage();
    for (const card of this.cards.values()) card.abandon();
    for (const approval of this.approvals.values()) approval.end();
    const status = String(event.status || "");
    const turns = Number(event.turns) || 0;
    const parts = [`${turns} ${turns === 1 ? "turn" : "turns"}`];
    if (this.startedAt !== null) parts.push(formatDuration((event.ts - this.startedAt) * 1000));
    this.el.append(
      h(
        "div",
        { class: "run-end", "data-status": status, "data-testid": "run-end", role: "status" },
        h("span", { class: "run-end-label" }, status.charAt(0).toUpperCase() + status.slice(1)),
        h("span", {}, parts.join(" · ")),
      ),
    );
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
