// One tool call as a card: name, risk badge, arguments, and (joined later by
// call_id) its result.

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

function argsList(args) {
  const entries = Object.entries(args || {});
  if (entries.length === 0) return h("p", { class: "fold-meta" }, "No arguments");
  return h(
    "dl",
    { class: "tool-args", "data-testid": "tool-args" },
    entries.map(([key, value]) => [h("dt", {}, key), h("dd", {}, argValue(key, value))]),
  );
}

export class ToolCard {
  /** `request` is a tool_requested event (or a stand-in built from a result). */
  constructor(request) {
    const risk = RISKS.has(request.risk) ? request.risk : "Unknown";
    const args = request.args && typeof request.args === "object" ? request.args : {};
    this.stateLabel = h("span", { class: "tool-state-label" }, "running…");
    this.state = h(
      "span",
      { class: "tool-state", "data-testid": "tool-state" },
      h("span", { class: "tool-state-icon", "aria-hidden": "true" }),
      this.stateLabel,
    );
    this.result = h("div", { class: "tool-result", "data-testid": "tool-result", hidden: true });
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
        h(
          "span",
          { class: "risk-badge", "data-risk": risk, "data-testid": "risk-badge", title: `Risk level: ${risk}` },
          risk,
        ),
        this.state,
      ),
      h(
        "div",
        { class: "tool-body" },
        request.args === undefined ? null : argsList(args),
        this.result,
      ),
    );
  }

  /** The run ended before this call reported a result. */
  abandon() {
    if (this.el.dataset.state !== "pending") return;
    this.el.dataset.state = "abandoned";
    this.state.querySelector(".tool-state-icon").textContent = "–";
    this.stateLabel.textContent = "no result";
  }

  /** Attach a tool_result event. */
  setResult(result) {
    const ok = result.ok === true;
    this.el.dataset.state = ok ? "ok" : "failed";
    this.state.querySelector(".tool-state-icon").textContent = ok ? "✓" : "✕";
    const duration = formatDuration(Number(result.duration_ms));
    this.stateLabel.textContent = ok ? duration : ["failed", duration].filter(Boolean).join(" · ");
    const output = typeof result.output === "string" ? result.output : JSON.stringify(result.output);
    this.result.replaceChildren(
      h(
        "div",
        { class: "tool-section-label" },
        "Output",
        h(
          "span",
          { class: "result-marker", "data-ok": String(ok), "data-testid": "result-marker" },
          ok ? "ok" : "failed",
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
