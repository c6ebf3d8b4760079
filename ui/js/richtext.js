// Assistant text: plain text with two bits of Markdown that matter in an
// agent log, fenced code blocks and `inline code`. Built from text nodes only.

import { h } from "./dom.js";

const FENCE = /```[^\n`]*\n?([\s\S]*?)(?:```\n?|$)/g;
const INLINE = /`([^`\n]+)`/g;

function inline(text) {
  const nodes = [];
  let last = 0;
  for (const match of text.matchAll(INLINE)) {
    if (match.index > last) nodes.push(text.slice(last, match.index));
    nodes.push(h("code", { text: match[1] }));
    last = match.index + match[0].length;
  }
  if (last < text.length) nodes.push(text.slice(last));
  return nodes;
}

/** Replace the contents of `el` with `text`, rendered. */
export function renderRichText(el, text) {
  if (!text.includes("`")) {
    el.textContent = text;
    return;
  }
  const nodes = [];
  let last = 0;
  for (const match of text.matchAll(FENCE)) {
    if (match.index > last) nodes.push(...inline(text.slice(last, match.index)));
    nodes.push(h("pre", { class: "code-block" }, match[1].replace(/\n$/, "")));
    last = match.index + match[0].length;
    if (match[0].length === 0) break;
  }
  if (last < text.length) nodes.push(...inline(text.slice(last)));
  el.replaceChildren(...nodes.map((n) => (typeof n === "string" ? document.createTextNode(n) : n)));
}
