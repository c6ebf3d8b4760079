// The selected run's context meter: one stacked bar by category (prompt,
// memory, tools, attachments, transcript) against the model's window, with
// the compaction point and the reserve marked. Filled from `context_updated`
// events only, so it shows the figure every surface shows; the exact figures,
// and which part is measured and which estimated, are in its title.

import { StackedBar } from "./bar.js";
import { h } from "./dom.js";
import { formatTokens } from "./format.js";

export const CATEGORIES = ["prompt", "memory", "tools", "attachments", "transcript"];
const LABELS = { prompt: "System prompt", memory: "Memory", tools: "Tools", attachments: "Attachments", transcript: "Conversation" };

export class ContextBar {
  constructor({ onCompact } = {}) {
    this.stacked = new StackedBar({
      attrs: { class: "ctx-bar", "aria-label": "Context window" },
      segments: CATEGORIES.map((c) => ({
        key: c, attrs: { class: "ctx-seg", "data-testid": "context-seg", dataset: { category: c } },
      })),
      marks: [{ key: "compact", attrs: { class: "ctx-mark", "data-testid": "context-compact-at", hidden: true } }],
      region: { class: "ctx-reserve", "data-testid": "context-reserve" },
    });
    this.bar = this.stacked.el;
    this.label = h("span", { class: "ctx-label", "data-testid": "context-label" });
    this.compactButton = h("button", {
      type: "button", class: "btn btn-ghost btn-small ctx-compact", "data-testid": "compact-button",
      title: "Summarise the middle of the conversation now (the first message and the last six stay as they are); /compact in the composer does the same",
      on: { click: () => onCompact?.() },
    }, "Compact");
    this.el = h("div", { class: "ctx", "data-testid": "context-bar", hidden: true }, this.bar, this.label, this.compactButton);
  }

  reset() {
    this.el.hidden = true;
    this.last = null;
  }

  /** A `context_updated` event of the run shown. */
  update(event) {
    this.last = event;
    const chars = event.chars || {};
    const totalChars = CATEGORIES.reduce((sum, c) => sum + (chars[c] || 0), 0);
    const window = event.window || 0;
    const tokens = event.tokens || 0;
    // Each category's share of the tokens, drawn against the window (or the whole, if unknown).
    const scale = window > 0 ? tokens / window : 1;
    for (const c of CATEGORIES) {
      const share = totalChars > 0 ? (chars[c] || 0) / totalChars : 0;
      this.stacked.setSegment(c, share * scale * 100, `${LABELS[c]}: ${(chars[c] || 0).toLocaleString()} characters`);
    }
    const known = window > 0;
    const at = known && event.compact_at !== null && event.compact_at !== undefined
      ? Math.min(100, (100 * event.compact_at) / window) : null;
    this.stacked.setMark("compact", at, at === null ? "" : `Compaction past ${(event.compact_at || 0).toLocaleString()} tokens`);
    this.stacked.setRegion(at !== null && event.reserve ? at : null);
    this.stacked.setValue(tokens, known ? window : null, "");
    const measured = event.measured_tokens;
    const how = measured === null || measured === undefined
      ? `all estimated (0.25 tokens per character)`
      : `${measured.toLocaleString()} measured by the provider + ${(event.estimated_tokens || 0).toLocaleString()} estimated since`;
    this.label.textContent = known
      ? `${formatTokens(tokens)} of ${formatTokens(window)} · ${Math.floor((100 * tokens) / window)}% · compacts at ${formatTokens(event.compact_at || 0)}`
      : `${formatTokens(tokens)} tokens · window unknown`;
    this.el.title = [
      `${tokens.toLocaleString()} tokens: ${how}`,
      known ? `window ${window.toLocaleString()}, reserve ${(event.reserve || 0).toLocaleString()} for the answer, compaction past ${(event.compact_at || 0).toLocaleString()}` : "the model's window is not known: no compaction point",
      ...CATEGORIES.map((c) => `${LABELS[c]}: ${(chars[c] || 0).toLocaleString()} characters`),
    ].join("\n");
    this.el.dataset.measured = String(measured !== null && measured !== undefined);
    this.el.dataset.window = known ? "known" : "unknown";
    this.el.dataset.tokens = String(tokens);
    this.el.hidden = false;
  }
}
