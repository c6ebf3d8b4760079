// The autonomy dial: a rotary control over a 270° arc with the three bands of
// docs/api.md (Supervised, Trusted, Autonomous) drawn in their colours. It is a
// real slider for assistive technology (role="slider", aria-value*), turned
// with the pointer (drag anywhere on it) or the keyboard (arrows ±0.01,
// PageUp/PageDown ±0.1, Home/End). It decides nothing: `onInput` reports each
// new value, `onCommit` the value at the end of a drag.

const NS = "http://www.w3.org/2000/svg";
const START = -135; // degrees, clockwise from 12 o'clock: the value 0
const SWEEP = 270; // the value 1 is at +135°
const GAP = 1.6; // degrees between two bands
const CX = 120;
const CY = 110;
const R_BAND = 80;
const R_NAME = 95;
const R_TICK = 63;
const R_KNOB = 46;

export const DEFAULT_BANDS = [
  { name: "Supervised", from: 0.0, to: 0.33 },
  { name: "Trusted", from: 0.34, to: 0.66 },
  { name: "Autonomous", from: 0.67, to: 1.0 },
];

let instances = 0;

function el(tag, attrs = {}, ...children) {
  const node = document.createElementNS(NS, tag);
  for (const [key, value] of Object.entries(attrs)) node.setAttribute(key, String(value));
  for (const child of children) node.append(child);
  return node;
}

function polar(radius, degrees) {
  const rad = ((degrees - 90) * Math.PI) / 180;
  return [CX + radius * Math.cos(rad), CY + radius * Math.sin(rad)];
}

function arc(radius, from, to) {
  const [x0, y0] = polar(radius, from);
  const [x1, y1] = polar(radius, to);
  const large = to - from > 180 ? 1 : 0;
  return `M ${x0.toFixed(2)} ${y0.toFixed(2)} A ${radius} ${radius} 0 ${large} 1 ${x1.toFixed(2)} ${y1.toFixed(2)}`;
}

const angleOf = (value) => START + SWEEP * value;
const round2 = (value) => Math.round(value * 100) / 100;
const clamp = (value) => Math.min(1, Math.max(0, value));

/** The band a level belongs to, once rounded to two decimals (as the server does). */
export function bandOf(level, bands = DEFAULT_BANDS) {
  const rounded = round2(level);
  return bands.find((band) => rounded <= band.to) ?? bands[bands.length - 1];
}

export function bandKey(name) {
  return String(name || "").toLowerCase();
}

export class Dial {
  constructor({ label = "Autonomy", onInput = () => {}, onCommit = () => {} } = {}) {
    this.onInput = onInput;
    this.onCommit = onCommit;
    this.bands = DEFAULT_BANDS;
    this.value = 0;
    this.dragging = false;
    this.id = `dial-${(instances += 1)}`;

    this.svg = el("svg", { viewBox: "0 0 240 186", class: "dial-svg", "aria-hidden": "true", focusable: "false" });
    this.el = document.createElement("div");
    this.el.className = "dial";
    this.el.tabIndex = 0;
    this.el.setAttribute("role", "slider");
    this.el.setAttribute("aria-label", label);
    this.el.setAttribute("aria-valuemin", "0");
    this.el.setAttribute("aria-valuemax", "1");
    this.el.setAttribute("aria-orientation", "horizontal");
    this.el.dataset.testid = "autonomy-dial";
    this.el.append(this.svg);
    this.draw();

    this.el.addEventListener("keydown", (event) => this.onKey(event));
    this.el.addEventListener("pointerdown", (event) => this.onPointerDown(event));
    this.el.addEventListener("pointermove", (event) => {
      if (this.dragging) this.fromPointer(event);
    });
    const end = (event) => {
      if (!this.dragging) return;
      this.dragging = false;
      this.el.dataset.dragging = "false";
      if (this.el.hasPointerCapture(event.pointerId)) this.el.releasePointerCapture(event.pointerId);
      this.onCommit(this.value);
    };
    this.el.addEventListener("pointerup", end);
    this.el.addEventListener("pointercancel", end);
    this.set(0);
  }

  /** The server's bands (the same numbers as the defaults unless it says otherwise). */
  setBands(bands) {
    if (!Array.isArray(bands) || bands.length === 0) return;
    const same = JSON.stringify(bands) === JSON.stringify(this.bands);
    if (same) return;
    this.bands = bands;
    this.draw();
    this.set(this.value);
  }

  draw() {
    const names = el("g", { class: "dial-names" });
    const tracks = el("g", { class: "dial-tracks" });
    this.fills = [];
    const fills = el("g", { class: "dial-fills" });
    const ticks = el("g", { class: "dial-ticks" });
    this.bands.forEach((band, index) => {
      const key = bandKey(band.name);
      const from = angleOf(band.from) + (index === 0 ? 0 : GAP / 2);
      const to = angleOf(band.to) - (index === this.bands.length - 1 ? 0 : GAP / 2);
      tracks.append(el("path", { d: arc(R_BAND, from, to), class: "dial-track", "data-band": key }));
      const fill = el("path", { class: "dial-fill", "data-band": key });
      fills.append(fill);
      this.fills.push({ band, from, to, fill });
      // The band's name, written along the arc outside it.
      const pathId = `${this.id}-name-${index}`;
      names.append(el("path", { id: pathId, d: arc(R_NAME, from, to), fill: "none", stroke: "none" }));
      const text = el("text", { class: "dial-name", "data-band": key });
      const textPath = el("textPath", { href: `#${pathId}`, startOffset: "50%", "text-anchor": "middle" });
      textPath.textContent = band.name;
      text.append(textPath);
      names.append(text);
    });
    // Tick marks and labels at both ends and at each band boundary.
    const marks = [0, ...this.bands.slice(0, -1).map((b, i) => (b.to + this.bands[i + 1].from) / 2), 1];
    for (const mark of marks) {
      const angle = angleOf(mark);
      const [x0, y0] = polar(R_BAND - 10, angle);
      const [x1, y1] = polar(R_BAND - 6, angle);
      ticks.append(el("line", { x1: x0, y1: y0, x2: x1, y2: y1, class: "dial-tick" }));
      const [tx, ty] = polar(R_TICK, angle);
      const label = el("text", { x: tx.toFixed(1), y: (ty + 3.5).toFixed(1), class: "dial-tick-label", "text-anchor": "middle" });
      label.textContent = mark === 0 ? "0" : mark === 1 ? "1" : String(round2(mark)).replace(/^0/, "");
      ticks.append(label);
    }
    this.thumb = el("circle", { r: 8, class: "dial-thumb" });
    this.pointer = el("line", { class: "dial-pointer" });
    this.valueText = el("text", { x: CX, y: CY, class: "dial-value", "text-anchor": "middle" });
    this.bandText = el("text", { x: CX, y: CY + 16, class: "dial-band", "text-anchor": "middle" });
    const knob = el(
      "g",
      { class: "dial-knob" },
      el("circle", { cx: CX, cy: CY, r: R_KNOB, class: "dial-knob-body" }),
      el("circle", { cx: CX, cy: CY, r: R_KNOB - 6, class: "dial-knob-face" }),
      this.pointer,
      this.valueText,
      this.bandText,
    );
    this.svg.replaceChildren(names, tracks, fills, ticks, knob, this.thumb);
  }

  /** Show `value` (0..1); `emit` reports it through onInput when it changed. */
  set(value, { emit = false } = {}) {
    const next = round2(clamp(Number(value) || 0));
    const changed = next !== this.value;
    this.value = next;
    const band = bandOf(next, this.bands);
    const key = bandKey(band.name);
    const angle = angleOf(next);
    for (const { band: b, from, to, fill } of this.fills) {
      const end = Math.min(to, angle);
      if (end > from + 0.01) {
        fill.setAttribute("d", arc(R_BAND, from, end));
        fill.removeAttribute("display");
      } else {
        fill.setAttribute("display", "none");
      }
      fill.dataset.active = String(b === band);
    }
    const [tx, ty] = polar(R_BAND, angle);
    this.thumb.setAttribute("cx", tx.toFixed(2));
    this.thumb.setAttribute("cy", ty.toFixed(2));
    this.thumb.dataset.band = key;
    const [px0, py0] = polar(R_KNOB - 12, angle);
    const [px1, py1] = polar(R_KNOB - 4, angle);
    this.pointer.setAttribute("x1", px0.toFixed(2));
    this.pointer.setAttribute("y1", py0.toFixed(2));
    this.pointer.setAttribute("x2", px1.toFixed(2));
    this.pointer.setAttribute("y2", py1.toFixed(2));
    this.pointer.dataset.band = key;
    this.valueText.textContent = next.toFixed(2);
    this.bandText.textContent = band.name;
    this.bandText.dataset.band = key;
    this.el.dataset.band = key;
    this.el.setAttribute("aria-valuenow", next.toFixed(2));
    this.el.setAttribute("aria-valuetext", `${next.toFixed(2)}, ${band.name}`);
    if (emit && changed) this.onInput(next);
    return band;
  }

  onKey(event) {
    const steps = {
      ArrowRight: 0.01,
      ArrowUp: 0.01,
      ArrowLeft: -0.01,
      ArrowDown: -0.01,
      PageUp: 0.1,
      PageDown: -0.1,
    };
    let next;
    if (event.key in steps) next = this.value + steps[event.key];
    else if (event.key === "Home") next = 0;
    else if (event.key === "End") next = 1;
    else return;
    event.preventDefault();
    this.set(next, { emit: true });
  }

  onPointerDown(event) {
    if (event.button !== 0) return;
    event.preventDefault();
    this.el.focus();
    this.dragging = true;
    this.el.dataset.dragging = "true";
    this.el.setPointerCapture(event.pointerId);
    this.fromPointer(event);
  }

  fromPointer(event) {
    const box = this.svg.getBoundingClientRect();
    const scale = box.width / 240;
    const dx = event.clientX - (box.left + CX * scale);
    const dy = event.clientY - (box.top + CY * scale);
    if (Math.hypot(dx, dy) < 6 * scale) return; // the very centre has no direction
    let degrees = (Math.atan2(dx, -dy) * 180) / Math.PI; // 0 at the top, clockwise
    // In the gap at the bottom the dial stays at the end it is nearer to:
    // dragging past 1 never wraps round to 0.
    if (Math.abs(degrees) > SWEEP / 2) {
      this.set(this.value >= 0.5 ? 1 : 0, { emit: true });
      return;
    }
    this.set((degrees - START) / SWEEP, { emit: true });
  }
}
