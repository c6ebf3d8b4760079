// The app's commands, the same from the desktop menu and from the keyboard:
// New conversation (Ctrl+N), Open workspace… (Ctrl+O), Settings (Ctrl+,) and,
// in the desktop window, Quit (Ctrl+Q); ⌘ instead of Ctrl on a Mac. The
// desktop shell runs them through `window.sparrowCommand(name, arg)`; a
// browser gets the keys it lets a page have (it keeps Ctrl+N and Ctrl+Q).
//
// External links: a click on a link to another origin never navigates this
// page; in the desktop window it opens in the system browser (the bridge),
// in a browser in a new tab.

import { inDesktop, openExternal, quitApp } from "./bridge.js";

const KEYS = { n: "new-conversation", o: "open-workspace", ",": "settings", q: "quit" };

/** Wire the commands to `actions` ({newConversation, openWorkspace(path?), settings}). */
export function installCommands(actions) {
  const run = (name, arg) => {
    if (name === "new-conversation") return actions.newConversation();
    if (name === "open-workspace") return actions.openWorkspace(arg || null);
    if (name === "settings") return actions.settings();
    if (name === "quit") return inDesktop() ? quitApp() : undefined;
    throw new Error(`unknown command ${name}`);
  };
  // The desktop shell's entry point; it reads back what the command returns.
  window.sparrowCommand = (name, arg) => run(name, arg);

  document.addEventListener("keydown", (event) => {
    const mac = /Mac|iPhone|iPad/.test(navigator.platform || "");
    const modifier = mac ? event.metaKey && !event.ctrlKey : event.ctrlKey && !event.metaKey;
    if (!modifier || event.altKey || event.shiftKey || event.isComposing || event.defaultPrevented) return;
    const name = KEYS[event.key.toLowerCase()];
    if (!name || (name === "quit" && !inDesktop())) return;
    event.preventDefault();
    run(name);
  });

  document.addEventListener("click", (event) => {
    if (event.defaultPrevented || event.button !== 0) return;
    const link = event.target instanceof Element ? event.target.closest("a[href]") : null;
    if (!link) return;
    let url;
    try {
      url = new URL(link.href, location.href);
    } catch {
      return;
    }
    if (url.origin === location.origin || !/^(https?|mailto):$/.test(url.protocol)) return;
    event.preventDefault();
    if (inDesktop()) openExternal(url.href);
    else window.open(url.href, "_blank", "noopener,noreferrer");
  });
}
