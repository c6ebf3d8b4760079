// Attachments of the next message: chips (name, size, how it will be sent,
// ×). How each is sent is the server's word (POST /api/attachments/describe),
// so the window, a browser and the CLI agree. A desktop drop gives real
// paths; a browser's drop or a pasted image is uploaded first (POST
// /api/uploads) and attached by its ref.

import { api } from "./api.js";
import { h } from "./dom.js";
import { formatBytes } from "./format.js";

const HOW_TEXT = { inline: "inline", image: "image", listing: "listing", refused: "refused" };

export class AttachmentTray {
  /**
   * `list`: the <ul> the chips go in. `context()`: what the server needs to
   * judge images: {model, continueFrom}. `onError(message)`: a line to show.
   */
  constructor({ list, context, onError }) {
    this.list = list;
    this.context = context;
    this.onError = onError;
    this.items = []; // {ref, chip}
    this.render();
  }

  get size() {
    return this.items.length;
  }

  /** Refs of what will be sent (refused ones excluded: the send is refused while any is left). */
  refs() {
    return this.items.filter((item) => item.chip.how !== "refused").map((item) => item.ref);
  }

  refused() {
    return this.items.filter((item) => item.chip.how === "refused");
  }

  clear() {
    this.items = [];
    this.render();
  }

  /** Add paths (a desktop drop) or upload refs. */
  async addRefs(refs) {
    const known = new Set(this.items.map((item) => item.ref));
    const fresh = refs.filter((ref) => ref && !known.has(ref));
    if (!fresh.length) return;
    this.items.push(...fresh.map((ref) => ({ ref, chip: { name: ref, how: "pending", label: "…", size: 0 } })));
    this.render();
    await this.describe();
  }

  /** Upload files from a browser (a drop, a paste), then attach them. */
  async addFiles(files) {
    const refs = [];
    for (const file of files) {
      try {
        refs.push((await api.upload(file)).ref);
      } catch (error) {
        this.onError(`${file.name || "the file"}: ${error.message}`);
      }
    }
    await this.addRefs(refs);
  }

  remove(ref) {
    this.items = this.items.filter((item) => item.ref !== ref);
    this.render();
  }

  /** Ask the server again (the model changed: an image may now go, or not). */
  async describe() {
    if (!this.items.length) return;
    const refs = this.items.map((item) => item.ref);
    let described;
    try {
      described = await api.describeAttachments(refs, this.context());
    } catch (error) {
      this.onError(error.message);
      return;
    }
    const byRef = new Map(described.map((chip) => [chip.ref, chip]));
    for (const item of this.items) item.chip = byRef.get(item.ref) || item.chip;
    this.render();
  }

  render() {
    this.list.hidden = this.items.length === 0;
    this.list.replaceChildren(...this.items.map((item) => this.chipView(item)));
  }

  chipView({ ref, chip }) {
    const size = chip.how === "listing" ? "" : formatBytes(chip.size || 0);
    const how = chip.how === "refused" ? chip.label : chip.label || HOW_TEXT[chip.how] || chip.how;
    return h(
      "li",
      { class: "attach-chip", "data-how": chip.how, "data-testid": "attach-chip", title: chip.path || ref },
      h("span", { class: "attach-name", "data-testid": "attach-name" }, chip.name || ref),
      size ? h("span", { class: "attach-size" }, size) : null,
      h("span", { class: "attach-how", "data-testid": "attach-how" }, how),
      h("button", {
        type: "button",
        class: "attach-remove",
        "aria-label": `Remove ${chip.name || ref}`,
        "data-testid": "attach-remove",
        on: { click: () => this.remove(ref) },
      }, "×"),
    );
  }
}

/** The image files of a paste, if any. */
export function pastedFiles(event) {
  const files = [];
  for (const item of event.clipboardData?.items || []) {
    if (item.kind === "file") {
      const file = item.getAsFile();
      if (file) files.push(file);
    }
  }
  return files;
}
