// One session's context meter: tool, project, model, tokens / window on a bar
// coloured by level with the warning and critical thresholds marked, the
// trend over the session, and the last compaction. Built once per session
// (createMeter) and filled in place on every update (fillMeter): nothing is
// rebuilt, so live updates never flicker.

import { StackedBar } from "./bar.js";
import { h } from "./dom.js";
import { absoluteTime, baseName, formatTokens, relativeTime } from "./format.js";
import { createTrend, fillTrend } from "./trend.js";

export const TOOL_NAMES = { "claude-code": "Claude Code", codex: "Codex" };
export const LEVEL_NAMES = { ok: "OK", warning: "Warning", critical: "Critical", unknown: "No data" };

/** A model's name without its date: claude-sonnet-4-5-20250929 -> claude-sonnet-4-5. */
export function shortModel(name) {
  if (!name) return "";
  const match = /^(.*)-(\d{8})$/.exec(name);
  return match ? match[1] : name;
}

/** The project's folder name (Claude's escaped folder name until the cwd is known). */
export function projectName(project) {
  if (!project) return "(unknown project)";
  if (!project.includes("/") && !project.includes("\\") && project.startsWith("-")) {
    const parts = project.split("-").filter(Boolean);
    return parts[parts.length - 1] || project;
  }
  return baseName(project);
}

function setText(el, text) {
  const value = String(text ?? "");
  if (el.textContent !== value) el.textContent = value;
}

function setData(el, name, value) {
  const text = String(value ?? "");
  if (el.dataset[name] !== text) el.dataset[name] = text;
}

function setTitle(el, text) {
  if (el.title !== text) el.title = text;
}

const pct = (part, whole) => (whole > 0 ? Math.min(100, Math.max(0, (100 * part) / whole)) : 0);

export function createMeter(key) {
  const trend = createTrend();
  const parts = {
    tool: h("span", { class: "tool-tag", "data-testid": "meter-tool" }),
    project: h("h3", { class: "meter-project", "data-testid": "meter-project" }),
    path: h("span", { class: "meter-path", "data-testid": "meter-path" }, h("bdi")),
    subagent: h("span", { class: "meter-chip", "data-testid": "meter-subagent", hidden: true }),
    level: h("span", { class: "level-pill", "data-testid": "meter-level" }),
    tokens: h("span", { class: "meter-tokens", "data-testid": "meter-tokens" }),
    percent: h("span", { class: "meter-percent", "data-testid": "meter-percent" }),
    source: h("span", { class: "meter-source", "data-testid": "meter-source" }),
    warnLabel: h("span", { class: "meter-mark-label", "data-kind": "warning" }),
    critLabel: h("span", { class: "meter-mark-label", "data-kind": "critical" }),
    model: h("span", { class: "meter-model", "data-testid": "meter-model" }),
    session: h("span", { class: "meter-session", "data-testid": "meter-session" }),
    activity: h("time", { class: "meter-activity", "data-testid": "meter-activity" }),
    compaction: h("span", { class: "meter-compaction", "data-testid": "meter-compaction" }),
    trendBox: h("div", { class: "meter-trend", "data-testid": "meter-trend" }, trend.root),
    trendNote: h("span", { class: "meter-trend-note" }),
    handoff: h(
      "button",
      {
        class: "btn btn-small btn-secondary meter-handoff-button",
        type: "button",
        "data-testid": "meter-handoff",
        title: "Write a handoff doc of this session into its folder (.sparrow/handoff/)",
      },
      "Write handoff doc",
    ),
    handoffNote: h("span", {
      class: "meter-handoff-note",
      "data-testid": "meter-handoff-note",
      role: "status",
    }),
  };
  parts.actions = h(
    "div",
    { class: "meter-actions", "data-testid": "meter-actions", hidden: true },
    parts.handoff,
    parts.handoffNote,
  );
  // The same bar as a run's context bar: here one fill, and the two thresholds.
  const stacked = new StackedBar({
    attrs: { class: "meter-bar", "data-testid": "meter-bar" },
    segments: [{ key: "fill", attrs: { class: "meter-fill", "data-testid": "meter-fill" } }],
    marks: [
      { key: "warning", attrs: { class: "meter-mark", "data-kind": "warning", "data-testid": "meter-threshold" } },
      { key: "critical", attrs: { class: "meter-mark", "data-kind": "critical", "data-testid": "meter-threshold" } },
    ],
  });
  parts.fill = stacked.segments.fill;
  parts.warnMark = stacked.marks.warning;
  parts.critMark = stacked.marks.critical;
  const bar = stacked.el;
  parts.bar = bar;
  parts.trend = trend;
  const el = h(
    "article",
    { class: "meter", "data-testid": "session-meter", "data-key": key },
    h(
      "header",
      { class: "meter-head" },
      parts.tool,
      h("div", { class: "meter-title" }, parts.project, parts.path),
      parts.subagent,
      parts.level,
    ),
    h(
      "div",
      { class: "meter-gauge" },
      h("div", { class: "meter-figures" }, parts.tokens, parts.percent, parts.source),
      bar,
      h("div", { class: "meter-scale", "aria-hidden": "true" }, parts.warnLabel, parts.critLabel),
      parts.actions,
    ),
    h("div", { class: "meter-side" }, parts.trendBox, parts.trendNote),
    h(
      "footer",
      { class: "meter-foot" },
      parts.model,
      h("span", { class: "meta-sep", "aria-hidden": "true" }, "·"),
      parts.session,
      h("span", { class: "meta-sep", "aria-hidden": "true" }, "·"),
      parts.activity,
      parts.compaction,
    ),
  );
  el.meterParts = parts;
  return el;
}

export function fillMeter(el, r, now = Date.now() / 1000) {
  const p = el.meterParts;
  const level = r.level || "unknown";
  const tool = TOOL_NAMES[r.tool] || r.tool;
  setData(el, "level", level);
  setData(el, "tool", r.tool);
  setData(el, "sessionId", r.session_id);

  setText(p.tool, tool);
  setData(p.tool, "tool", r.tool);
  setText(p.project, projectName(r.project));
  setTitle(p.project, r.project || "");
  // Until a line says the working folder, Claude's escaped folder name stands in: not a path.
  const isPath = /[\\/]/.test(r.project || "");
  p.path.hidden = !isPath;
  setText(p.path.firstChild, isPath ? r.project : "");
  setTitle(p.path, isPath ? r.project : "");
  p.subagent.hidden = !r.parent_session;
  setText(p.subagent, r.parent_session ? "subagent" : "");
  setTitle(p.subagent, r.parent_session ? `A subagent of session ${r.parent_session}` : "");
  setText(p.level, LEVEL_NAMES[level] || level);
  setData(p.level, "level", level);

  // Figures. Without a known window there is no percentage and nothing to fill:
  // the meter says so rather than draw against a guessed denominator.
  const tokens = r.context_tokens;
  const window = Number.isFinite(r.window) && r.window > 0 ? r.window : null;
  const known = Number.isFinite(tokens);
  const windowText = window ? formatTokens(window) : "window unknown";
  setData(el, "window", window ? "known" : "unknown");
  if (known) {
    setText(p.tokens, `${formatTokens(tokens)} / ${windowText}`);
    setTitle(
      p.tokens,
      window
        ? `${tokens.toLocaleString()} of ${window.toLocaleString()} tokens in the context window`
        : `${tokens.toLocaleString()} tokens in the context; the model's window is not known`,
    );
    setText(p.percent, window ? `${Math.round(r.percent ?? pct(tokens, window))}%` : "");
  } else {
    setText(p.tokens, `— / ${windowText}`);
    setTitle(
      p.tokens,
      window
        ? `Window of ${window.toLocaleString()} tokens; the context is not known yet`
        : "Neither the context nor the model's window is known yet",
    );
    setText(p.percent, "");
  }
  setTitle(p.percent, window && r.window_source ? `Window from the ${r.window_source}` : "");
  setText(p.source, sourceNote(r));

  // The bar and its thresholds.
  const filled = known && window ? pct(tokens, window) : 0;
  const width = `${filled.toFixed(2)}%`;
  if (p.fill.style.width !== width) p.fill.style.width = width;
  const warnAt = window && Number.isFinite(r.warning_at) ? pct(r.warning_at, window) : 0;
  const critAt = window && Number.isFinite(r.critical_at) ? pct(r.critical_at, window) : 0;
  p.bar.style.setProperty("--warn", `${(window ? warnAt : 100).toFixed(2)}%`);
  p.bar.style.setProperty("--crit", `${(window ? critAt : 100).toFixed(2)}%`);
  if (window) p.bar.setAttribute("aria-valuemax", String(window));
  else p.bar.removeAttribute("aria-valuemax");
  p.bar.setAttribute("aria-valuenow", String(known ? tokens : 0));
  const levelName = LEVEL_NAMES[level] || level;
  p.bar.setAttribute(
    "aria-valuetext",
    known
      ? window
        ? `${formatTokens(tokens)} of ${formatTokens(window)} tokens, ${levelName}`
        : `${formatTokens(tokens)} tokens, window unknown, ${levelName}`
      : "context not known yet",
  );
  p.bar.setAttribute("aria-label", `Context of ${projectName(r.project)} (${tool})`);
  placeMark(p.warnMark, p.warnLabel, warnAt, r.warning_at, "Warning");
  placeMark(p.critMark, p.critLabel, critAt, r.critical_at, "Critical");
  // Labels point away from each other, and stay inside the bar.
  setData(p.warnLabel, "anchor", warnAt < 6 ? "start" : "end");
  setData(p.critLabel, "anchor", critAt > 90 ? "end" : "start");

  // At the critical level, the handoff doc is one click away (and what was
  // written stays said, whatever the level does next).
  p.actions.hidden = level !== "critical" && !p.handoffNote.textContent;

  // Trend.
  fillTrend(p.trend, r);
  setText(p.trendNote, trendSpan(r.trend || []));

  // Foot: model, session, activity, compaction.
  setText(p.model, shortModel(r.model) || "model not known yet");
  setTitle(p.model, r.model || "");
  setData(p.model, "known", Boolean(r.model));
  setText(p.session, String(r.session_id || "").slice(0, 8));
  setTitle(p.session, `Session ${r.session_id}\n${r.path}`);
  setData(p.activity, "ts", r.last_activity);
  setText(p.activity, r.last_activity ? `active ${relativeTime(r.last_activity, now)}` : "");
  setTitle(p.activity, absoluteTime(r.last_activity));
  fillCompaction(p.compaction, r, now);
}

function placeMark(mark, label, at, tokens, name) {
  const left = `${at.toFixed(2)}%`;
  if (mark.style.left !== left) mark.style.left = left;
  if (label.style.left !== left) label.style.left = left;
  const shown = at > 0 && at < 100;
  mark.hidden = !shown;
  label.hidden = !shown;
  const known = Number.isFinite(tokens);
  setText(label, known ? formatTokens(tokens) : "");
  const title = known ? `${name} at ${Number(tokens).toLocaleString()} tokens` : "";
  setTitle(mark, title);
  setTitle(label, title);
}

/** What the trend line covers: "over 1 h 30 min", "1 reading", "no trend yet". */
export function trendSpan(samples) {
  if (samples.length === 0) return "no trend yet";
  if (samples.length === 1) return "1 reading";
  const minutes = Math.round((samples[samples.length - 1][0] - samples[0][0]) / 60);
  if (minutes < 1) return `${samples.length} readings`;
  if (minutes < 60) return `over ${minutes} min`;
  const hours = Math.floor(minutes / 60);
  const rest = minutes % 60;
  return `over ${hours} h${rest ? ` ${rest} min` : ""}`;
}

function sourceNote(r) {
  switch (r.level_source) {
    case "compaction":
      return "compacted: the new size shows at the next reply";
    case "tool_calls":
      return `no usage readable: ${r.tool_calls} tool calls`;
    case "none":
      return "no usage yet";
    case "no_window":
      return "no level: the thresholds are shares of a window not known";
    default:
      return "";
  }
}

export function describeCompaction(c, count, now) {
  if (!c) return "No compaction yet";
  const when = c.at ? relativeTime(c.at, now) : "";
  const sizes =
    Number.isFinite(c.pre_tokens) && Number.isFinite(c.post_tokens)
      ? `${formatTokens(c.pre_tokens)} → ${formatTokens(c.post_tokens)}`
      : Number.isFinite(c.pre_tokens)
        ? `from ${formatTokens(c.pre_tokens)}`
        : "";
  const bits = [`Compacted${when ? ` ${when}` : ""}`, sizes, c.trigger || ""].filter(Boolean);
  const text = bits.join(" · ");
  return count > 1 ? `${text} (${count}×)` : text;
}

function fillCompaction(el, r, now) {
  const last = r.last_compaction;
  const count = (r.compactions || []).length;
  setData(el, "state", last ? "compacted" : "none");
  setText(el, describeCompaction(last, count, now));
  setTitle(
    el,
    last
      ? `Last compaction: ${absoluteTime(last.at)}${last.trigger ? ` (${last.trigger})` : ""}; ` +
          `${count} seen in this session`
      : "No compaction seen in this session",
  );
}

/** Refresh the relative times only (called every half minute). */
export function refreshTimes(el, r, now = Date.now() / 1000) {
  const p = el.meterParts;
  setText(p.activity, r.last_activity ? `active ${relativeTime(r.last_activity, now)}` : "");
  fillCompaction(p.compaction, r, now);
}

/** The handoff button's states: busy while the doc is written, then its path or the error. */
export function showHandoff(el, state, text = "") {
  const p = el.meterParts;
  p.handoff.disabled = state === "busy";
  setText(p.handoff, state === "busy" ? "Writing handoff doc…" : "Write handoff doc");
  setData(p.handoffNote, "state", state);
  setText(p.handoffNote, state === "done" ? `Written to ${text}` : state === "error" ? text : "");
  setTitle(p.handoffNote, state === "done" ? text : "");
  if (text) p.actions.hidden = false;
}
