// The one bar of context the window draws, for a run (by category, with its
// compaction point and reserve) and for a watched session (its fill, with the
// warning and critical marks): segments laid end to end, marks at a position,
// and an optional hatched region from a position to the end. Each user gives
// its parts their own classes and test ids; the drawing is the same.

import { h } from "./dom.js";

const clamp = (value) => Math.min(100, Math.max(0, value));

export class StackedBar {
  /**
   * attrs: the bar's own attributes; segments / marks: [{ key, attrs }] in order;
   * region: attrs of a hatched region, or null.
   */
  constructor({ attrs, segments = [], marks = [], region = null }) {
    this.segments = Object.fromEntries(segments.map(({ key, attrs: a }) => [key, h("span", a)]));
    this.marks = Object.fromEntries(marks.map(({ key, attrs: a }) => [key, h("span", a)]));
    this.region = region ? h("span", { ...region, hidden: true }) : null;
    this.el = h("div", { role: "meter", "aria-valuemin": "0", ...attrs },
      ...Object.values(this.segments), ...(this.region ? [this.region] : []),
      ...Object.values(this.marks));
  }

  /** A segment's share of the bar, in percent. */
  setSegment(key, percent, title = "") {
    const el = this.segments[key];
    const width = `${clamp(percent).toFixed(2)}%`;
    if (el.style.width !== width) el.style.width = width;
    if (el.title !== title) el.title = title;
  }

  /** A mark at `percent`; hidden at null, or at the bar's ends (nothing to mark). */
  setMark(key, percent, title = "") {
    const el = this.marks[key];
    const shown = percent !== null && percent !== undefined && percent > 0 && percent < 100;
    el.hidden = !shown;
    if (shown) {
      const left = `${percent.toFixed(2)}%`;
      if (el.style.left !== left) el.style.left = left;
    }
    if (el.title !== title) el.title = title;
  }

  /** The hatched region from `percent` to the end; hidden at null. */
  setRegion(percent) {
    if (!this.region) return;
    this.region.hidden = percent === null || percent === undefined;
    if (!this.region.hidden) {
      this.region.style.left = `${clamp(percent)}%`;
      this.region.style.width = `${100 - clamp(percent)}%`;
    }
  }

  /** What assistive technology reads: the figure, of the whole when known. */
  setValue(now, max, text) {
    if (max) this.el.setAttribute("aria-valuemax", String(max));
    else this.el.removeAttribute("aria-valuemax");
    this.el.setAttribute("aria-valuenow", String(now));
    if (text) this.el.setAttribute("aria-valuetext", text);
  }
}
