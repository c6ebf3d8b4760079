// Replay of a finished session from its recorded events: a bar with play /
// pause, a scrubber over the events (dragging it shows the conversation as
// it stood at that point) and the speed (1×, 2×, 5×, instant). The events
// are one session's (GET /api/runs/{id}/events for each of its runs); going
// back redraws from the first event, going forward only draws what is new.
// Playing keeps the recorded pauses between events, divided by the speed,
// and shortens long waits (a model thinking, a slow command) to a moment.

import { h } from "./dom.js";
import { formatDuration } from "./format.js";

const SPEEDS = [["1", "1×"], ["2", "2×"], ["5", "5×"], ["instant", "Instant"]];
const LONGEST_WAIT_MS = 1200; // at 1×; a recorded pause longer than this is cut to it
const FRAME_MS = 16;

export class ReplayBar {
  /**
   * apply(event): draw one event; reset(): empty the view before drawing from the start;
   * moved(position): after any change of position.
   */
  constructor({ apply, reset, moved = () => {} }) {
    this.applyEvent = apply;
    this.resetView = reset;
    this.moved = moved;
    this.events = [];
    this.position = 0; // how many events are drawn
    this.timer = null;
    this.pending = null; // a scrubber position waiting for the next frame
    this.playButton = h("button", {
      type: "button", class: "btn btn-secondary btn-small replay-play", "data-testid": "replay-play",
      "aria-label": "Play", on: { click: () => (this.playing ? this.pause() : this.play()) },
    }, h("span", { class: "replay-play-icon", "aria-hidden": "true" }));
    this.range = h("input", {
      type: "range", class: "replay-range", min: "0", max: "0", step: "1", value: "0",
      "data-testid": "replay-scrubber", "aria-label": "Replay position",
      on: { input: () => this.scrubTo(Number(this.range.value)) },
    });
    this.label = h("span", { class: "replay-position", "data-testid": "replay-position", "aria-live": "off" });
    this.speed = h("select", {
      class: "input select input-small replay-speed", "data-testid": "replay-speed", "aria-label": "Replay speed",
      on: { change: () => this.speedChanged() },
    }, SPEEDS.map(([value, text]) => h("option", { value }, text)));
    this.el = h("div", { class: "replay-bar", "data-testid": "replay-bar", role: "group", "aria-label": "Replay", hidden: true },
      h("span", { class: "replay-tag" }, "Replay"),
      this.playButton, this.range, this.label, this.speed);
    this.showPlaying(false);
  }

  get active() {
    return !this.el.hidden;
  }

  get playing() {
    return this.timer !== null;
  }

  /** Replay `events` (in the order they were recorded), drawn to the end at once. */
  load(events) {
    this.pause();
    this.events = events;
    this.range.max = String(events.length);
    this.el.hidden = false;
    this.seek(events.length);
  }

  /** Leave replay (a follow-up goes live): everything drawn, the bar hidden. */
  stop() {
    this.pause();
    if (this.position < this.events.length) this.seek(this.events.length);
    this.el.hidden = true;
    this.events = [];
  }

  /** Draw the first `target` events. */
  seek(target) {
    const to = Math.max(0, Math.min(this.events.length, target));
    if (to < this.position) {
      this.resetView();
      this.position = 0;
    }
    while (this.position < to) this.applyEvent(this.events[this.position++]);
    this.showPosition();
    this.moved(this.position);
  }

  /** The scrubber moved: at most one redraw a frame, however fast it is dragged. */
  scrubTo(target) {
    this.pause();
    const first = this.pending === null;
    this.pending = target;
    if (first) {
      requestAnimationFrame(() => {
        const to = this.pending;
        this.pending = null;
        this.seek(to);
      });
    }
  }

  play() {
    if (!this.events.length) return;
    if (this.position >= this.events.length) this.seek(0); // from the start again
    if (this.speed.value === "instant") {
      this.seek(this.events.length);
      return;
    }
    this.showPlaying(true);
    this.tick();
  }

  pause() {
    clearTimeout(this.timer);
    this.timer = null;
    this.showPlaying(false);
  }

  speedChanged() {
    if (!this.playing) return;
    this.pause();
    this.play();
  }

  /** Draw what is due, then wait for the next event's moment. */
  tick() {
    const speed = Number(this.speed.value) || 1;
    let wait = 0;
    do {
      this.applyEvent(this.events[this.position++]);
      if (this.position >= this.events.length) break;
      wait = this.gap(this.position) / speed;
    } while (wait < FRAME_MS);
    this.showPosition();
    this.moved(this.position);
    if (this.position >= this.events.length) {
      this.pause();
      return;
    }
    this.timer = setTimeout(() => this.tick(), wait);
  }

  /** The recorded pause before event `index`, in ms, long ones cut short. */
  gap(index) {
    const before = Number(this.events[index - 1]?.ts);
    const at = Number(this.events[index]?.ts);
    if (!Number.isFinite(before) || !Number.isFinite(at)) return 0;
    return Math.min(LONGEST_WAIT_MS, Math.max(0, (at - before) * 1000));
  }

  showPlaying(playing) {
    this.playButton.dataset.playing = String(playing);
    this.playButton.setAttribute("aria-label", playing ? "Pause" : "Play");
    this.playButton.title = playing ? "Pause" : "Play the session from here";
  }

  showPosition() {
    const total = this.events.length;
    this.range.value = String(this.position);
    this.range.setAttribute("aria-valuetext", `event ${this.position} of ${total}`);
    const first = Number(this.events[0]?.ts);
    const here = Number(this.events[Math.max(0, this.position - 1)]?.ts);
    const elapsed = Number.isFinite(first) && Number.isFinite(here) && this.position > 0
      ? ` · ${formatDuration((here - first) * 1000) || "0 ms"}` : "";
    this.label.textContent = `${this.position} / ${total}${elapsed}`;
    this.el.dataset.atEnd = String(this.position >= total);
  }
}
