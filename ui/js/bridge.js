// The desktop shell's bridge (pywebview). Absent in a plain browser, where
// every function here is a no-op. pywebview may inject `window.pywebview`
// after this module runs; `pywebviewready` fires once its `api` is usable.

function readyApi() {
  const api = window.pywebview && window.pywebview.api;
  return api && typeof api === "object" && Object.keys(api).length > 0 ? api : null;
}

/** Call `callback()` once, as soon as the desktop bridge is usable. */
function whenReady(callback) {
  if (readyApi()) {
    callback();
    return;
  }
  window.addEventListener("pywebviewready", () => callback(), { once: true });
}

export function inDesktop() {
  return typeof window.pywebview !== "undefined";
}

/** Run `callback` now if this is the desktop window, or when it turns out to be one. */
export function onDesktop(callback) {
  if (inDesktop()) callback();
  else window.addEventListener("pywebviewready", () => callback(), { once: true });
}

let readySent = false;

/** Tell the desktop shell the first state is on screen. Errors are ignored. */
export function pageReady() {
  whenReady(() => {
    if (readySent) return;
    readySent = true;
    try {
      Promise.resolve(window.pywebview.api.page_ready()).catch(() => {});
    } catch {
      /* the shell may not offer page_ready */
    }
  });
}

/** Ask the desktop shell for a folder; resolves to a path string or null. */
export function chooseFolder() {
  return new Promise((resolve, reject) => {
    whenReady(() => {
      Promise.resolve()
        .then(() => window.pywebview.api.choose_folder())
        .then((path) => resolve(typeof path === "string" && path ? path : null), reject);
    });
  });
}

/** Ask the desktop shell to save `text` as a file (native dialog, `name` offered); the path or null. */
export function saveFile(name, text) {
  return new Promise((resolve, reject) => {
    whenReady(() => {
      Promise.resolve()
        .then(() => window.pywebview.api.save_file(name, text))
        .then((path) => resolve(typeof path === "string" && path ? path : null), reject);
    });
  });
}

/** Open `url` (http, https or mailto) in the system browser, never in the window. */
export function openExternal(url) {
  whenReady(() => {
    Promise.resolve()
      .then(() => window.pywebview.api.open_external(url))
      .catch(() => {});
  });
}

/** Quit the desktop app (as its menu's Quit does). */
export function quitApp() {
  whenReady(() => {
    Promise.resolve()
      .then(() => window.pywebview.api.quit())
      .catch(() => {});
  });
}

/** Tell the desktop which run the page shows (its address): no system notice is
 * sent for the run in front of the user. */
export function tellAddress() {
  if (!inDesktop()) return;
  whenReady(() => {
    Promise.resolve()
      .then(() => window.pywebview.api.page_shows(location.hash))
      .catch(() => {});
  });
}
