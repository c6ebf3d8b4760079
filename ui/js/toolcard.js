// One tool call as a card: name, risk badge, arguments, how the safety gate
// decided it (gate_decided, and the answer to an approval), the hooks that ran
// for it, and (joined later by call_id) its result.

import { h } from "./dom.js";
import { describeSize, formatDuration, isLong } from "./format.js";

const RISKS = new Set(["ReadOnly", "Mutating", "Exec", "Destructive", "Network"]);
const SUMMARY_KEYS = ["path", "command", "url", "pattern", "query", "file", "name"];

function summaryOf(args) {
  for (const key of SUMMARY_KEYS) {
    const value = args[key];
    if (typeof value === "string" && value && !value.includes("\n")) return value;
  }
  return "";
}

const VERBS = { allow: "allowed", ask: "asked", deny: "denied" };
const ANSWERS = {
  allow_once: "allowed once",
  allow_always: "allowed always",
  deny: "denied",
  timeout: "no answer in time: denied",
};

/** How the gate decided, in words: "allowed by rule Bash(npm test:*)", "asked: Supervised · Mutating". */
export function gateText(event, risk) {
  const verb = VERBS[event.decision] || String(event.decision || "");
  if (event.rule) return `${verb} by rule ${event.rule}`;
  if (event.decided_by === "autonomy" && event.band) {
    return `${verb}: ${[event.band, risk && risk !== "Unknown" ? risk : ""].filter(Boolean).join(" · ")}`;
  }
  if (event.decided_by === "hook") return `${verb} by a hook${event.reason ? `: ${event.reason}` : ""}`;
  return event.reason ? `${verb}: ${event.reason}` : verb;
}

export function answerText(event) {
  return ANSWERS[event.decision] || String(event.decision || "");
}

/** A <pre>, behind a <details> when the text is long. */
export function foldable(text, { label, testid, forceFold = false }) {
  const pre = h("pre", { class: "code-block", "data-testid": testid }, text);
  if (!text) {
    pre.classList.add("is-empty");
    pre.textContent = "(empty)";
    return pre;
  }
  if (!forceFold && !isLong(text)) return pre;
  return h(
    "details",
    { class: "fold", "data-testid": testid ? `${testid}-fold` : undefined },
    h("summary", {}, label, h("span", { class: "fold-meta" }, describeSize(text))),
    pre,
  );
}

function argValue(key, value) {
  if (typeof value === "string") {
    if (key === "content" || value.includes("\n") || isLong(value)) {
      return foldable(value, { label: `Show ${key}`, testid: "tool-arg-block" });
    }
    return h("span", { class: "arg-inline" }, value);
  }
  const json = JSON.stringify(value, null, 2) ?? String(value);
  if (!json.includes("\n")) return h("span", { class: "arg-inline" }, json);
  return foldable(json, { label: `Show ${key}`, testid: "tool-arg-block" });
}

export function argsList(args) {
  const entries = Object.entries(args || {});
  if (entries.length === 0) return h("p", { class: "fold-meta" }, "No arguments");
  return h(
    "dl",
    { class: "tool-args", "data-testid": "tool-args" },
    entries.map(([key, value]) => [h("dt", {}, key), h("dd", {}, argValue(key, value))]),
  );
}

export class ToolCard {
  /** `request` is a tool_requested event (or a stand-in built from a delta or a result). */
  constructor(request) {
    const risk = RISKS.has(request.risk) ? request.risk : "Unknown";
    const args = request.args && typeof request.args === "object" ? request.args : {};
    this.runId = request.run_id;
    this.turn = request.turn;
    this.streaming = false; // its arguments are arriving (tool_call_delta)
    this.discarded = false;
    this.streamed = "";
    this.stateLabel = h("span", { class: "tool-state-label" }, "running…");
    this.state = h(
      "span",
      { class: "tool-state", "data-testid": "tool-state" },
      h("span", { class: "tool-state-icon", "aria-hidden": "true" }),
      this.stateLabel,
    );
    this.risk = risk;
    this.denied = false;
    this.result = h("div", { class: "tool-result", "data-testid": "tool-result", hidden: true });
    this.gate = h("p", { class: "gate-line", "data-testid": "gate-decision", hidden: true });
    this.hooks = h("ul", { class: "hook-list", "data-testid": "tool-hooks", hidden: true });
    this.el = h(
      "article",
      {
        class: "tool-card",
        "data-testid": "tool-card",
        "aria-label": `Tool call ${request.tool}`,
        dataset: { callId: request.call_id, tool: request.tool, risk, state: "pending" },
      },
      h(
        "header",
        { class: "tool-head" },
        h("span", { class: "tool-name", "data-testid": "tool-name" }, request.tool),
        h("span", { class: "tool-summary", title: summaryOf(args) || undefined }, summaryOf(args)),
        (this.badge = h(
          "span",
          { class: "risk-badge", "data-risk": risk, "data-testid": "risk-badge", title: `Risk level: ${risk}` },
          risk,
        )),
        this.state,
      ),
      h(
        "div",
        { class: "tool-body" },
        this.gate,
        request.args === undefined ? null : argsList(args),
        this.hooks,
        this.result,
      ),
    );
  }

  /** Arguments as the model writes them (JSON text, growing), before the call is whole. */
  streamArgs(text) {
    if (!this.streaming) {
      this.streaming = true;
      this.argsStream = h("pre", { class: "code-block args-stream", "data-testid": "args-stream" });
      this.gate.after(this.argsStream);
      this.setState("streaming", "…", "receiving arguments…");
      if (this.risk === "Unknown") this.badge.hidden = true; // the call says it when whole
    }
    this.streamed += text;
    this.argsStream.textContent = this.streamed;
  }

  /** Fill in the arguments (and the risk) when the card was made before its tool_requested. */
  setRequest(request) {
    const risk = RISKS.has(request.risk) ? request.risk : null;
    if (risk) {
      this.badge.hidden = false;
      this.risk = risk;
      this.el.dataset.risk = risk;
      this.badge.dataset.risk = risk;
      this.badge.textContent = risk;
      this.badge.title = `Risk level: ${risk}`;
    }
    if (this.streaming) {
      this.streaming = false;
      this.argsStream.remove();
      if (this.el.dataset.state === "streaming") this.setState("pending", "", "running…");
    }
    if (request.args === undefined || this.el.querySelector(".tool-args")) return;
    const summary = summaryOf(request.args || {});
    const summaryEl = this.el.querySelector(".tool-summary");
    if (summary && summaryEl && !summaryEl.textContent) {
      summaryEl.textContent = summary;
      summaryEl.title = summary;
    }
    this.gate.after(argsList(request.args && typeof request.args === "object" ? request.args : {}));
  }

  /** The arguments streamed into a turn that was then discarded. */
  discard() {
    this.discarded = true;
    this.streaming = false;
    this.setState("discarded", "–", "discarded");
  }

  setState(state, icon, label) {
    this.el.dataset.state = state;
    this.state.querySelector(".tool-state-icon").textContent = icon;
    this.stateLabel.textContent = label;
  }

  /** A gate_decided event: which rule, mode or autonomy band decided this call. */
  setGate(event) {
    const decision = String(event.decision || "");
    const text = gateText(event, this.risk);
    const extra = [event.needs_checkpoint ? "checkpoint first" : "", event.notify ? "with a notice" : ""].filter(Boolean);
    this.gate.dataset.decision = decision;
    this.gate.dataset.decidedBy = String(event.decided_by || "");
    this.gate.dataset.rule = String(event.rule || "");
    this.gate.title = [event.reason, event.mode ? `mode ${event.mode}` : "", Number.isFinite(event.level) ? `dial ${Number(event.level).toFixed(2)}` : ""]
      .filter(Boolean)
      .join(" · ");
    this.gate.replaceChildren(
      h("span", { class: "gate-icon", "aria-hidden": "true" }, decision === "allow" ? "✓" : decision === "deny" ? "⊘" : "?"),
      h("span", { class: "gate-label" }, "Gate"),
      h("span", { class: "gate-text", "data-testid": "gate-text" }, text),
      ...(extra.length ? [h("span", { class: "gate-extra" }, extra.join(", "))] : []),
    );
    this.gate.hidden = false;
    if (decision === "deny") {
      this.denied = true;
      if (this.el.dataset.state === "pending") this.setState("denied", "⊘", "denied");
    } else if (decision === "ask" && this.el.dataset.state === "pending") {
      this.setState("waiting", "?", "waiting for you");
    }
  }

  /** An approval_resolved event: the person's answer, after the gate's "ask". */
  setApproval(event) {
    const allowed = event.decision === "allow_once" || event.decision === "allow_always";
    const answer = h(
      "span",
      { class: "gate-answer", "data-testid": "gate-answer", dataset: { decision: event.decision } },
      `→ ${answerText(event)}${event.by && event.by !== "timeout" ? ` by ${event.by}` : ""}`,
      event.rule ? ` · saved ${event.rule}${event.scope ? ` (${event.scope})` : ""}` : "",
      event.message ? `: “${event.message}”` : "",
    );
    this.gate.querySelector(".gate-answer")?.remove();
    this.gate.append(answer);
    this.gate.hidden = false;
    if (allowed) {
      if (this.el.dataset.state === "waiting") this.setState("pending", "", "running…");
    } else {
      this.denied = true;
      if (this.el.dataset.state === "waiting" || this.el.dataset.state === "pending") this.setState("denied", "⊘", "denied");
    }
  }

  /** A hook_ran event of this call, as one compact line. */
  addHook(event) {
    this.hooks.append(hookLine(event));
    this.hooks.hidden = false;
  }

  /** The run ended before this call reported a result. */
  abandon() {
    if (this.el.dataset.state === "waiting") {
      this.setState("abandoned", "–", "no answer");
      return;
    }
    if (this.el.dataset.state !== "pending" && this.el.dataset.state !== "streaming") return;
    this.el.dataset.state = "abandoned";
    this.state.querySelector(".tool-state-icon").textContent = "–";
    this.stateLabel.textContent = "no result";
  }

  /** Attach a tool_result event. */
  setResult(result) {
    const ok = result.ok === true;
    const duration = formatDuration(Number(result.duration_ms));
    if (this.denied && !ok) this.setState("denied", "⊘", "denied");
    else this.setState(ok ? "ok" : "failed", ok ? "✓" : "✕", ok ? duration : ["failed", duration].filter(Boolean).join(" · "));
    const output = typeof result.output === "string" ? result.output : JSON.stringify(result.output);
    this.result.replaceChildren(
      h(
        "div",
        { class: "tool-section-label" },
        "Output",
        h(
          "span",
          { class: "result-marker", "data-ok": String(ok), "data-testid": "result-marker" },
          ok ? "ok" : this.denied ? "denied" : "failed",
        ),
        result.truncated
          ? h(
              "span",
              { class: "truncated-note", "data-testid": "truncated-note" },
              "truncated by the tool",
            )
          : null,
      ),
      foldable(output, { label: "Show output", testid: "tool-output" }),
    );
    this.result.hidden = false;
  }
}

/** One hook_ran event: "PreToolUse · ./check.sh · exit 0 · 12 ms", or why it blocked. */
export function hookLine(event) {
  const blocked = event.blocked === true;
  const exit = event.timed_out ? "timed out" : event.exit_code === null || event.exit_code === undefined ? "" : `exit ${event.exit_code}`;
  return h(
    "li",
    {
      class: "hook-line",
      "data-testid": "hook-ran",
      dataset: { blocked: String(blocked), hookEvent: String(event.hook_event || "") },
    },
    h("span", { class: "hook-label" }, "hook"),
    h("span", { class: "hook-event" }, String(event.hook_event || "")),
    h("code", { class: "hook-command", title: event.command || undefined }, String(event.command || "")),
    h("span", { class: "hook-exit" }, [exit, formatDuration(Number(event.duration_ms))].filter(Boolean).join(" · ")),
    blocked ? h("span", { class: "hook-blocked" }, `blocked${event.reason ? `: ${event.reason}` : ""}`) : null,
  );
}
