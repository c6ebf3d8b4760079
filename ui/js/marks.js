// Where each event of a transcript was drawn: every drawn element carries the
// seq of the first event that made it (data-seq) and its run (data-run-id),
// and every event's element is remembered, so that a search hit (a run and a
// seq) can be brought into view, and flashed, whatever drew it.

const key = (runId, seq) => `${runId}\u0000${seq}`;

export class EventMarks {
  constructor(transcript) {
    this.transcript = transcript;
    this.placed = new Map(); // run id + seq -> element
  }

  place(event, el) {
    if (!el) return;
    if (!el.dataset.seq) el.dataset.seq = String(event.seq);
    if (!el.dataset.runId) el.dataset.runId = event.run_id;
    this.placed.set(key(event.run_id, event.seq), el);
  }

  /** The element event `seq` of `runId` drew into, or the nearest earlier one of that run. */
  elementAt(runId, seq) {
    for (let n = Number(seq); n > 0; n -= 1) {
      const el = this.placed.get(key(runId, n));
      if (el?.isConnected) return el;
    }
    return null;
  }

  /**
   * Bring `el` into view and flash it. The log stops following new output
   * (the reader asked to be here); "Latest" takes them back down.
   */
  reveal(el) {
    const log = this.transcript;
    log.sticky = false;
    log.jump.hidden = false;
    el.scrollIntoView({ block: "center" });
    log.lastTop = log.el.scrollTop;
    el.classList.remove("flash");
    void el.offsetWidth; // restarts the animation when the same element is revealed again
    el.classList.add("flash");
    el.dataset.revealed = "true";
    el.addEventListener("animationend", () => el.classList.remove("flash"), { once: true });
  }
}
