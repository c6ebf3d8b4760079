// Pure formatting helpers shared by the views. Tokens, sizes and ages are said
// exactly as server/core/formatting.py says them in the CLI (a test holds the
// two together).

/** A value is folded behind <details> past this many lines or characters. */
export const FOLD_LINES = 10;
export const FOLD_CHARS = 600;

export function lineCount(text) {
  if (!text) return 0;
  let n = 1;
  for (let i = 0; i < text.length; i += 1) if (text.charCodeAt(i) === 10) n += 1;
  return text.endsWith("\n") ? n - 1 : n;
}

export function isLong(text) {
  return text.length > FOLD_CHARS || lineCount(text) > FOLD_LINES;
}

const oneDecimal = (value) => (Math.round(value * 10) / 10).toFixed(1);

export function formatBytes(n) {
  if (n < 1024) return `${n} B`;
  if (n < 1024 ** 2) return `${oneDecimal(n / 1024)} KB`;
  if (n < 1024 ** 3) return `${oneDecimal(n / 1024 ** 2)} MB`;
  return `${oneDecimal(n / 1024 ** 3)} GB`;
}

export function describeSize(text) {
  const lines = lineCount(text);
  const bytes = new TextEncoder().encode(text).length;
  return `${lines} ${lines === 1 ? "line" : "lines"} · ${formatBytes(bytes)}`;
}

export function formatTokens(n) {
  if (n < 1000) return String(n);
  if (n < 100_000) return `${(Math.round(n / 100) / 10).toFixed(1)}k`;
  if (n < 999_500) return `${Math.round(n / 1000)}k`;
  return `${(Math.round(n / 10_000) / 100).toFixed(2).replace(/\.?0+$/, "")}M`;
}

export function formatDuration(ms) {
  if (!Number.isFinite(ms) || ms < 0) return "";
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  const minutes = Math.floor(ms / 60_000);
  return `${minutes} min ${Math.round((ms % 60_000) / 1000)} s`;
}

export function relativeTime(epochSeconds, now = Date.now() / 1000) {
  if (!Number.isFinite(epochSeconds)) return "";
  const delta = Math.max(0, now - epochSeconds);
  if (delta < 45) return "just now";
  if (delta < 3600) return `${Math.max(1, Math.floor(delta / 60))} min ago`;
  if (delta < 86400) return `${Math.floor(delta / 3600)} h ago`;
  if (delta < 7 * 86400) return `${Math.floor(delta / 86400)} d ago`;
  const d = new Date(epochSeconds * 1000);
  const two = (v) => String(v).padStart(2, "0");
  return `${d.getFullYear()}-${two(d.getMonth() + 1)}-${two(d.getDate())}`;
}

export function absoluteTime(epochSeconds) {
  return Number.isFinite(epochSeconds) ? new Date(epochSeconds * 1000).toLocaleString() : "";
}

/** The last path component, for compact display of a workspace. */
export function baseName(path) {
  const trimmed = String(path || "").replace(/[\\/]+$/, "");
  const parts = trimmed.split(/[\\/]/);
  return parts[parts.length - 1] || trimmed || "/";
}

export function firstLine(text, max = 140) {
  const line = String(text || "").trim().split("\n", 1)[0];
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}
