// A session's context over time as a small inline SVG: the samples of its
// reading (`trend`: [[epoch seconds, tokens], ...], oldest first) on a scale
// of 0 to the window, the warning and critical thresholds as dashed lines.
// Without a known window, the scale is the highest sample: the line still
// shows how the context moved, and no threshold is drawn.
// Built once per meter; an update only rewrites the paths' `d`.

const NS = "http://www.w3.org/2000/svg";
export const TREND_WIDTH = 192;
export const TREND_HEIGHT = 48;
const PAD = 3; // room for the end dot and the stroke

function svg(tag, attrs = {}) {
  const el = document.createElementNS(NS, tag);
  for (const [key, value] of Object.entries(attrs)) el.setAttribute(key, String(value));
  return el;
}

export function createTrend() {
  const root = svg("svg", {
    class: "trend",
    viewBox: `0 0 ${TREND_WIDTH} ${TREND_HEIGHT}`,
    width: TREND_WIDTH,
    height: TREND_HEIGHT,
    "aria-hidden": "true",
    focusable: "false",
  });
  const parts = {
    critical: svg("line", { class: "trend-threshold", "data-kind": "critical" }),
    warning: svg("line", { class: "trend-threshold", "data-kind": "warning" }),
    area: svg("path", { class: "trend-area" }),
    line: svg("path", { class: "trend-line" }),
    end: svg("circle", { class: "trend-end", r: 2.75 }),
  };
  root.append(parts.critical, parts.warning, parts.area, parts.line, parts.end);
  return { root, parts };
}

/** The points of the line, in SVG coordinates. */
export function trendPoints(samples, window) {
  const valid = (samples || []).filter(
    (s) => Array.isArray(s) && Number.isFinite(s[0]) && Number.isFinite(s[1]),
  );
  if (valid.length === 0 || !(window > 0)) return [];
  const first = valid[0][0];
  const span = valid[valid.length - 1][0] - first;
  const innerW = TREND_WIDTH - 2 * PAD;
  const innerH = TREND_HEIGHT - 2 * PAD;
  return valid.map(([when, tokens], index) => {
    // Spread by time; by order when the samples share a timestamp.
    const share = span > 0 ? (when - first) / span : valid.length > 1 ? index / (valid.length - 1) : 1;
    const fill = Math.min(1, Math.max(0, tokens / window));
    return [PAD + share * innerW, PAD + (1 - fill) * innerH];
  });
}

function yOf(tokens, window) {
  const fill = Math.min(1, Math.max(0, tokens / window));
  return PAD + (1 - fill) * (TREND_HEIGHT - 2 * PAD);
}

const round = (n) => Math.round(n * 10) / 10;

/** Redraw `trend` (from createTrend) for a reading; returns whether it has points. */
export function fillTrend(trend, reading) {
  const { parts } = trend;
  const known = reading.window > 0;
  const window = known ? reading.window : highest(reading.trend);
  const points = trendPoints(reading.trend, window);
  for (const kind of ["warning", "critical"]) {
    const at = kind === "warning" ? reading.warning_at : reading.critical_at;
    const line = parts[kind];
    if (known && Number.isFinite(at) && at < window) {
      const y = round(yOf(at, window));
      setAttr(line, "x1", 0);
      setAttr(line, "x2", TREND_WIDTH);
      setAttr(line, "y1", y);
      setAttr(line, "y2", y);
      line.style.display = "";
    } else {
      line.style.display = "none";
    }
  }
  if (points.length === 0) {
    for (const name of ["area", "line"]) setAttr(parts[name], "d", "");
    parts.end.style.display = "none";
    return false;
  }
  // One sample: a short level line up to now, so that it reads as a level.
  const drawn = points.length === 1 ? [[PAD, points[0][1]], points[0]] : points;
  const line = drawn.map(([x, y], i) => `${i ? "L" : "M"}${round(x)} ${round(y)}`).join(" ");
  const base = TREND_HEIGHT - PAD;
  const area = `${line} L${round(drawn[drawn.length - 1][0])} ${base} L${round(drawn[0][0])} ${base} Z`;
  setAttr(parts.line, "d", line);
  setAttr(parts.area, "d", area);
  const [x, y] = drawn[drawn.length - 1];
  setAttr(parts.end, "cx", round(x));
  setAttr(parts.end, "cy", round(y));
  parts.end.style.display = "";
  return true;
}

function highest(samples) {
  let top = 0;
  for (const s of samples || []) if (Array.isArray(s) && Number.isFinite(s[1])) top = Math.max(top, s[1]);
  return top;
}

function setAttr(el, name, value) {
  const text = String(value);
  if (el.getAttribute(name) !== text) el.setAttribute(name, text);
}
