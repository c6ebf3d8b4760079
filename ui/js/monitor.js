// The Monitor view: one meter per live Claude Code / Codex session, most
// urgent first (the server's order), fed by the WebSocket /ws/monitor while
// the view is shown. Each message carries every live session: meters are
// keyed by transcript path, filled in place and moved only when the order
// changes. A level crossing flashes its meter and is announced.

import { api } from "./api.js";
import { byId, h } from "./dom.js";
import {
  createMeter,
  fillMeter,
  LEVEL_NAMES,
  projectName,
  refreshTimes,
  showHandoff,
  TOOL_NAMES,
} from "./meter.js";
import { formatTokens } from "./format.js";
import { LiveSocket } from "./socket.js";

const SUMMARY_LEVELS = ["critical", "warning", "ok", "unknown"];
const SUMMARY_WORDS = { critical: "critical", warning: "warning", ok: "ok", unknown: "no data" };

export class MonitorView {
  constructor({ onConnection = () => {} } = {}) {
    this.onConnection = onConnection;
    this.section = byId("monitor-view");
    this.list = byId("meter-list");
    this.rootsList = byId("monitor-roots");
    this.hours = byId("monitor-hours");
    this.summary = byId("monitor-summary");
    this.notice = byId("monitor-notice");
    this.announcer = byId("monitor-announcer");
    this.meters = new Map(); // key -> { el, reading }
    this.socket = null;
    this.timer = null;
    this.section.dataset.state = "loading";
  }

  get visible() {
    return this.socket !== null;
  }

  show() {
    this.section.hidden = false;
    if (this.socket) return;
    const socket = new LiveSocket({
      path: "/ws/monitor",
      onMessage: (message) => this.apply(message),
      onState: (state, detail) => {
        if (state === "connecting" && detail.attempt === 0) return;
        this.onConnection(state);
      },
    });
    this.socket = socket;
    socket.connect();
    this.timer = setInterval(() => this.refreshTimes(), 30_000);
  }

  hide() {
    this.section.hidden = true;
    if (this.socket) this.socket.close();
    this.socket = null;
    clearInterval(this.timer);
    this.timer = null;
    this.onConnection(null);
  }

  apply(message) {
    if (message.type === "monitor_sessions") this.render(message);
    else if (message.type === "monitor_level") this.crossed(message);
  }

  render(state) {
    const sessions = Array.isArray(state.sessions) ? state.sessions : [];
    const now = Date.now() / 1000;
    const keep = new Set(sessions.map((r) => r.key));
    for (const [key, meter] of this.meters) {
      if (!keep.has(key)) {
        meter.el.remove();
        this.meters.delete(key);
      }
    }
    sessions.forEach((reading, index) => {
      let meter = this.meters.get(reading.key);
      if (!meter) {
        meter = { el: createMeter(reading.key), reading };
        const el = meter.el;
        el.meterParts.handoff.addEventListener("click", () => this.writeHandoff(el, reading.key));
        this.meters.set(reading.key, meter);
      }
      meter.reading = reading;
      fillMeter(meter.el, reading, now);
      const current = this.list.children[index];
      if (current !== meter.el) this.list.insertBefore(meter.el, current ?? null);
    });
    this.section.dataset.state = sessions.length ? "sessions" : "empty";
    this.renderSummary(sessions);
    this.renderRoots(state.roots || [], state.active_within_hours);
    this.notice.hidden = !state.settings_error;
    this.notice.textContent = state.settings_error
      ? `The [monitor] settings could not be used, so the defaults apply: ${state.settings_error}`
      : "";
  }

  async writeHandoff(el, key) {
    showHandoff(el, "busy");
    try {
      showHandoff(el, "done", await api.sessionHandoff(key));
    } catch (err) {
      showHandoff(el, "error", `The handoff doc could not be written: ${err.message}`);
    }
  }

  renderSummary(sessions) {
    const counts = new Map();
    for (const r of sessions) counts.set(r.level, (counts.get(r.level) || 0) + 1);
    const chips = SUMMARY_LEVELS.filter((level) => counts.get(level)).map((level) =>
      h(
        "span",
        { class: "summary-chip", "data-level": level, "data-testid": "summary-count" },
        h("strong", {}, String(counts.get(level))),
        ` ${SUMMARY_WORDS[level]}`,
      ),
    );
    const text = chips.map((chip) => chip.textContent).join("|");
    if (this.summary.dataset.text !== text) {
      this.summary.dataset.text = text;
      this.summary.replaceChildren(...chips);
    }
  }

  renderRoots(roots, hours) {
    const text = roots.map((root) => `${root.tool}:${root.path}`).join("|");
    if (this.rootsList.dataset.text !== text) {
      this.rootsList.dataset.text = text;
      this.rootsList.replaceChildren(
        ...roots.map((root) =>
          h(
            "li",
            { class: "root-item" },
            h("span", { class: "tool-tag", "data-tool": root.tool }, TOOL_NAMES[root.tool] || root.tool),
            h("code", { class: "root-path" }, root.path),
          ),
        ),
      );
    }
    if (Number.isFinite(hours)) this.hours.textContent = `${hours} h`;
  }

  crossed(message) {
    const meter = this.meters.get(message.key);
    const r = message.reading || {};
    if (message.rising && !message.initial && meter) {
      const el = meter.el;
      el.dataset.crossed = message.level;
      el.classList.remove("meter-alert");
      void el.offsetWidth; // restart the animation
      el.classList.add("meter-alert");
    }
    if (message.initial) return;
    const tokens = !Number.isFinite(r.context_tokens)
      ? ""
      : Number.isFinite(r.window) && r.window > 0
        ? `${formatTokens(r.context_tokens)} of ${formatTokens(r.window)} tokens`
        : `${formatTokens(r.context_tokens)} tokens, window unknown`;
    const tool = TOOL_NAMES[r.tool] || r.tool || "";
    const level = (LEVEL_NAMES[message.level] || message.level).toLowerCase();
    this.announcer.textContent =
      `${projectName(r.project)} (${tool}): context ${message.rising ? "rose" : "fell"} to ${level}` +
      (tokens ? `, ${tokens}.` : ".");
  }

  refreshTimes() {
    const now = Date.now() / 1000;
    for (const meter of this.meters.values()) refreshTimes(meter.el, meter.reading, now);
  }
}
