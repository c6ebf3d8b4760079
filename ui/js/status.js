// Run statuses: the words the server uses, and how a pill or dot shows them.

// "interrupted": the process running it died; the next Sparrow to start says so.
export const FINAL_STATUSES = new Set(["completed", "failed", "cancelled", "stopped", "interrupted"]);

export function isFinal(status) {
  return FINAL_STATUSES.has(status);
}

/** Update a status pill (or dot) in place. The text is the server's word. */
export function showStatus(el, status) {
  const value = String(status || "running");
  el.dataset.status = value;
  if (el.classList.contains("status-pill")) el.textContent = value;
  else el.title = value;
}
