// One WebSocket (to /ws, or another path such as /ws/monitor) with its own
// subscriptions, re-sent after every reconnect. Reconnects back off (0.5 s doubling to 15 s, with jitter); a
// close with code 4008 (the server dropped a lagging client) reconnects at
// once. Replayed history is deduplicated by the consumer (seq per run).

const LAGGED = 4008;
const MIN_DELAY = 500;
const MAX_DELAY = 15000;

export class LiveSocket {
  /**
   * onEvent(run event), onMessage(any other message), onControl(error message),
   * onState("connecting" | "open" | "closed", info)
   */
  constructor({
    path = "/ws",
    onEvent = () => {},
    onMessage = () => {},
    onControl = () => {},
    onState = () => {},
  }) {
    this.path = path;
    this.onEvent = onEvent;
    this.onMessage = onMessage;
    this.onControl = onControl;
    this.onState = onState;
    this.subscriptions = new Set();
    this.ws = null;
    this.attempt = 0;
    this.timer = null;
    this.everOpened = false;
    this.stopped = false;
    this.onOnline = () => this.reconnectNow();
    window.addEventListener("online", this.onOnline);
  }

  get isOpen() {
    return this.ws !== null && this.ws.readyState === WebSocket.OPEN;
  }

  connect() {
    if (this.stopped) return;
    clearTimeout(this.timer);
    this.timer = null;
    const scheme = location.protocol === "https:" ? "wss://" : "ws://";
    let ws;
    try {
      ws = new WebSocket(scheme + location.host + this.path);
    } catch {
      this.scheduleReconnect(false);
      return;
    }
    this.ws = ws;
    this.onState("connecting", { attempt: this.attempt });
    ws.addEventListener("open", () => {
      if (ws !== this.ws) return;
      const reconnected = this.everOpened;
      this.everOpened = true;
      this.attempt = 0;
      for (const runId of this.subscriptions) this.send({ op: "subscribe", run_id: runId });
      this.onState("open", { reconnected });
    });
    ws.addEventListener("message", (message) => {
      if (ws !== this.ws) return;
      let data;
      try {
        data = JSON.parse(message.data);
      } catch {
        return;
      }
      if (!data || typeof data !== "object") return;
      if (data.type === "error") this.onControl(data);
      else if (typeof data.run_id === "string" && Number.isInteger(data.seq)) this.onEvent(data);
      else if (typeof data.type === "string") this.onMessage(data);
    });
    ws.addEventListener("close", (event) => {
      if (ws !== this.ws) return;
      this.ws = null;
      this.onState("closed", { code: event.code, reason: event.reason });
      this.scheduleReconnect(event.code === LAGGED);
    });
  }

  scheduleReconnect(immediately) {
    if (this.stopped) return;
    clearTimeout(this.timer);
    const base = Math.min(MAX_DELAY, MIN_DELAY * 2 ** this.attempt);
    const delay = immediately ? 50 : base / 2 + Math.random() * (base / 2);
    this.attempt += 1;
    this.timer = setTimeout(() => this.connect(), delay);
  }

  reconnectNow() {
    if (this.ws === null) {
      this.attempt = 0;
      this.connect();
    }
  }

  /** Close for good: no reconnect, no more callbacks. */
  close() {
    this.stopped = true;
    clearTimeout(this.timer);
    window.removeEventListener("online", this.onOnline);
    const ws = this.ws;
    this.ws = null;
    if (ws) ws.close(1000, "done");
  }

  send(message) {
    if (this.isOpen) this.ws.send(JSON.stringify(message));
  }

  subscribe(runId) {
    if (this.subscriptions.has(runId)) return;
    this.subscriptions.add(runId);
    this.send({ op: "subscribe", run_id: runId });
  }

  unsubscribe(runId) {
    if (!this.subscriptions.delete(runId)) return;
    this.send({ op: "unsubscribe", run_id: runId });
  }

}
