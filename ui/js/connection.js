// The header's connection dot: the worst state among the open sockets.

const LABELS = {
  open: "Connected",
  connecting: "Connecting…",
  closed: "Disconnected, retrying…",
};
const RANK = { open: 0, connecting: 1, closed: 2 };

export class ConnectionIndicator {
  constructor(el) {
    this.el = el;
    this.label = el.querySelector(".conn-label");
    this.sources = new Map();
  }

  /** `state` is "open", "connecting", "closed", or null when the source is gone. */
  set(source, state) {
    if (state === null) this.sources.delete(source);
    else this.sources.set(source, state);
    let worst = "connecting";
    if (this.sources.size > 0) {
      worst = [...this.sources.values()].reduce((a, b) => (RANK[b] > RANK[a] ? b : a), "open");
    }
    if (this.el.dataset.state !== worst) {
      this.el.dataset.state = worst;
      this.label.textContent = LABELS[worst];
    }
  }
}
