// Tiny DOM helpers. Text always goes in as text nodes: nothing from the
// server is ever parsed as HTML.

/**
 * Create an element.
 * props: `class`, `text`, `dataset` (object), `hidden`, `on` (event map);
 * anything else becomes an attribute (false/null/undefined are skipped).
 */
export function h(tag, props = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "class") el.className = value;
    else if (key === "text") el.textContent = value;
    else if (key === "dataset") Object.assign(el.dataset, value);
    else if (key === "hidden") el.hidden = Boolean(value);
    else if (key === "on") {
      for (const [name, handler] of Object.entries(value)) el.addEventListener(name, handler);
    } else el.setAttribute(key, value === true ? "" : String(value));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const child of children.flat(Infinity)) {
    if (child === undefined || child === null || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

/** A reference to the shared logo symbol in index.html. */
export function logo(className) {
  const ns = "http://www.w3.org/2000/svg";
  const svg = document.createElementNS(ns, "svg");
  svg.setAttribute("viewBox", "0 0 32 32");
  svg.setAttribute("aria-hidden", "true");
  svg.setAttribute("focusable", "false");
  if (className) svg.setAttribute("class", className);
  const use = document.createElementNS(ns, "use");
  use.setAttribute("href", "#sparrow-mark");
  svg.append(use);
  return svg;
}

export function byId(id) {
  const el = document.getElementById(id);
  if (!el) throw new Error(`#${id} is missing from index.html`);
  return el;
}

/** Show ``text`` in ``el`` (an error line, say), or hide it when there is none. */
export function showText(el, text) {
  el.textContent = text;
  el.hidden = !text;
}
