// `@` completion of workspace paths in a textarea: typing `@` then letters
// shows the workspace's matching files and folders (GET /api/workspace/paths)
// in a list under the caret (above it when there is no room below). Arrows
// move, Enter or Tab chooses, Esc closes; a click chooses too. Choosing puts
// `@path` in place of what was typed; a folder keeps the list open on its
// contents. One call hooks it to a field: `attachMention(textarea, () => dir)`.

import { h } from "./dom.js";

const LIMIT = 12;
const DEBOUNCE_MS = 40;
const RETRY_MS = 300; // the workspace's index is still being built
// `@` at the start or after a space, then anything but a space: the token being typed.
const TOKEN = /(?:^|\s)@([^\s@]*)$/;
// What the mirror copies so its text wraps exactly like the field's.
const MIRRORED = [
  "boxSizing", "width", "paddingTop", "paddingRight", "paddingBottom", "paddingLeft",
  "borderTopWidth", "borderRightWidth", "borderBottomWidth", "borderLeftWidth",
  "fontFamily", "fontSize", "fontWeight", "fontStyle", "letterSpacing", "lineHeight",
  "textTransform", "wordSpacing", "tabSize", "whiteSpace", "wordWrap", "overflowWrap",
];

let counter = 0;

async function fetchPaths(workspace, query) {
  const params = new URLSearchParams({ workspace, q: query, limit: String(LIMIT) });
  const response = await fetch(`/api/workspace/paths?${params}`, {
    credentials: "same-origin",
    headers: { Accept: "application/json" },
  });
  if (!response.ok) return { ready: true, paths: [] };
  return response.json();
}

/** Where the caret of `field` is, in viewport pixels: {left, top, bottom}. */
function caretPoint(field) {
  const style = getComputedStyle(field);
  const mirror = h("div", { "aria-hidden": "true" });
  for (const name of MIRRORED) mirror.style[name] = style[name];
  Object.assign(mirror.style, {
    position: "fixed", visibility: "hidden", top: "0", left: "0",
    whiteSpace: "pre-wrap", overflowWrap: "break-word", overflow: "hidden",
  });
  mirror.textContent = field.value.slice(0, field.selectionEnd);
  const marker = h("span", { text: "\u200b" });
  mirror.append(marker);
  document.body.append(mirror);
  const box = field.getBoundingClientRect();
  const left = box.left + marker.offsetLeft - field.scrollLeft;
  const top = box.top + marker.offsetTop - field.scrollTop;
  const height = marker.offsetHeight || parseFloat(style.lineHeight) || 18;
  mirror.remove();
  return { left: Math.min(left, box.right - 24), top, bottom: top + height };
}

export class Mention {
  constructor(field, workspace) {
    this.field = field;
    this.workspace = workspace;
    this.id = `mention-${++counter}`;
    this.list = h("ul", {
      class: "mention-list", id: this.id, role: "listbox", "aria-label": "Workspace paths",
      "data-testid": "mention-list", hidden: true,
    });
    document.body.append(this.list);
    this.items = [];
    this.active = 0;
    this.token = null; // {start, query}: the `@…` being completed
    this.asked = 0; // the latest request; older answers are dropped
    this.timer = 0;
    field.setAttribute("aria-autocomplete", "list");
    field.setAttribute("aria-controls", this.id);
    field.setAttribute("aria-expanded", "false");
    // Capture: at the field itself capturing listeners run first, so Enter
    // chooses here before the composer's own Enter sends the message.
    field.addEventListener("keydown", (event) => this.onKey(event), { capture: true });
    field.addEventListener("input", () => this.update());
    field.addEventListener("click", () => this.update());
    field.addEventListener("blur", () => this.close());
    window.addEventListener("resize", () => this.close());
    this.list.addEventListener("mousedown", (event) => {
      event.preventDefault(); // keep the focus (and the caret) in the field
      const item = event.target.closest("[data-index]");
      if (item) this.choose(Number(item.dataset.index));
    });
  }

  get open() {
    return !this.list.hidden;
  }

  /** The `@token` before the caret, or null. */
  currentToken() {
    const field = this.field;
    if (field.selectionStart !== field.selectionEnd) return null;
    const before = field.value.slice(0, field.selectionEnd);
    const match = TOKEN.exec(before);
    if (!match) return null;
    return { start: before.length - match[1].length - 1, query: match[1] };
  }

  update() {
    const workspace = (this.workspace() || "").trim();
    const token = workspace ? this.currentToken() : null;
    this.token = token;
    clearTimeout(this.timer);
    if (!token) {
      this.close();
      return;
    }
    this.timer = setTimeout(() => this.ask(workspace, token.query), DEBOUNCE_MS);
  }

  async ask(workspace, query) {
    const asked = ++this.asked;
    let answer;
    try {
      answer = await fetchPaths(workspace, query);
    } catch {
      return; // the server is away: no list, the typed text stays
    }
    if (asked !== this.asked || !this.token || this.token.query !== query) return;
    if (!answer.ready) this.timer = setTimeout(() => this.ask(workspace, query), RETRY_MS);
    this.show(answer.paths || []);
  }

  show(paths) {
    this.items = paths;
    this.active = 0;
    if (!paths.length) {
      this.close();
      return;
    }
    this.list.replaceChildren(
      ...paths.map((item, index) => {
        const slash = item.path.lastIndexOf("/", item.path.length - 2);
        return h(
          "li",
          {
            id: `${this.id}-${index}`, role: "option", class: "mention-item",
            dataset: { index: String(index), kind: item.kind }, "data-testid": "mention-item",
          },
          h("span", { class: "mention-name", text: item.path.slice(slash + 1) }),
          slash > 0
            ? h("span", { class: "mention-dir" }, h("bdi", {}, item.path.slice(0, slash + 1)))
            : null,
        );
      }),
    );
    this.list.hidden = false;
    this.field.setAttribute("aria-expanded", "true");
    this.highlight();
    this.place();
  }

  place() {
    const caret = caretPoint(this.field);
    const list = this.list;
    const height = list.offsetHeight;
    const below = caret.bottom + 4;
    const fits = below + height <= window.innerHeight - 8;
    list.style.left = `${Math.max(8, Math.min(caret.left, window.innerWidth - list.offsetWidth - 8))}px`;
    list.style.top = `${fits ? below : Math.max(8, caret.top - height - 4)}px`;
    list.dataset.side = fits ? "below" : "above";
  }

  highlight() {
    for (const [index, item] of [...this.list.children].entries()) {
      item.setAttribute("aria-selected", String(index === this.active));
    }
    const current = this.list.children[this.active];
    if (current) {
      this.field.setAttribute("aria-activedescendant", current.id);
      current.scrollIntoView({ block: "nearest" });
    }
  }

  onKey(event) {
    if (!this.open || event.isComposing) return;
    const count = this.items.length;
    if (event.key === "ArrowDown" || event.key === "ArrowUp") {
      this.active = (this.active + (event.key === "ArrowDown" ? 1 : count - 1)) % count;
      this.highlight();
    } else if ((event.key === "Enter" && !event.shiftKey) || event.key === "Tab") {
      this.choose(this.active);
    } else if (event.key === "Escape") {
      this.close();
    } else {
      return;
    }
    event.preventDefault();
    event.stopImmediatePropagation();
  }

  choose(index) {
    const item = this.items[index];
    const token = this.currentToken();
    if (!item || !token) return;
    const field = this.field;
    const end = field.selectionEnd;
    // A file is done (a space follows); a folder goes on to what is inside it.
    const text = `@${item.path}${item.kind === "dir" ? "" : " "}`;
    field.setRangeText(text, token.start, end, "end");
    field.dispatchEvent(new Event("input", { bubbles: true }));
    if (item.kind !== "dir") this.close();
  }

  close() {
    clearTimeout(this.timer);
    this.asked++;
    this.items = [];
    this.list.hidden = true;
    this.field.setAttribute("aria-expanded", "false");
    this.field.removeAttribute("aria-activedescendant");
  }
}

/** Complete `@` paths in `field`, in the folder `workspace()` returns (none: off). */
export function attachMention(field, workspace) {
  return new Mention(field, workspace);
}
