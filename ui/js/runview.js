// The selected run: its header (title, workspace, status pill, reason,
// tokens, Cancel) and its live transcript, fed by a WebSocket of its own so
// that switching runs never mixes two runs' events.

import { api } from "./api.js";
import { byId, h } from "./dom.js";
import { formatTokens } from "./format.js";
import { LiveSocket } from "./socket.js";
import { isFinal, showStatus } from "./status.js";
import { CheckpointTimeline } from "./timeline.js";
import { Transcript } from "./transcript.js";

export class RunView {
  constructor({ onRunChanged = () => {}, onConnection = () => {} } = {}) {
    this.onRunChanged = onRunChanged;
    this.onConnection = onConnection;
    this.section = byId("run-view");
    this.head = byId("run-head");
    this.title = byId("run-title");
    this.workspace = byId("run-workspace");
    this.model = byId("run-model");
    this.idLabel = byId("run-id");
    this.usage = byId("run-usage");
    this.pill = byId("run-status");
    this.reason = byId("run-reason");
    this.cancelButton = byId("cancel-button");
    this.placeholder = byId("run-placeholder");
    this.transcript = new Transcript(byId("transcript"), byId("jump-latest"));
    this.timeline = new CheckpointTimeline();
    this.socket = null;
    this.runId = null;
    this.cancelButton.addEventListener("click", () => this.cancel());
    this.showEmpty();
  }

  get currentId() {
    return this.runId;
  }

  /** The open run's workspace and session ({} when none is open), for the Rules view. */
  get context() {
    return this.runId ? { workspace: this.runWorkspace || "", sessionId: this.sessionId || "" } : {};
  }

  /** Show run `runId`; `info` (a RunInfo) fills the header before the server answers. */
  open(runId, info = null) {
    if (runId === this.runId) return;
    this.stopSocket();
    this.runId = runId;
    this.runWorkspace = "";
    this.sessionId = "";
    this.status = "running";
    this.contextTokens = 0;
    this.outputTokens = 0;
    this.transcript.reset(runId);
    this.timeline.reset(runId);
    this.timeline.load();
    this.section.dataset.state = "open";
    this.head.hidden = false;
    this.fillHeader(info ?? { id: runId, status: "running", task: "", workspace: "", model: "" });
    this.usage.hidden = true;

    const socket = new LiveSocket({
      onEvent: (event) => this.onEvent(event),
      onControl: (message) => this.transcript.notice(message.error || "The server refused a request.", "error"),
      onState: (state, detail) => {
        if (state === "connecting" && detail.attempt === 0) return;
        this.onConnection(state);
      },
    });
    this.socket = socket;
    socket.subscribe(runId);
    socket.connect();

    api.getRun(runId).then(
      (run) => {
        if (this.runId === runId && run) this.fillHeader(run);
      },
      (error) => {
        if (this.runId !== runId) return;
        if (error.status === 404) this.showMissing(runId);
        else this.transcript.notice(error.message, "error");
      },
    );
  }

  /** Back to the empty state. */
  close() {
    this.stopSocket();
    this.runId = null;
    this.transcript.reset(null);
    this.timeline.reset(null);
    this.showEmpty();
  }

  stopSocket() {
    if (this.socket) this.socket.close();
    this.socket = null;
    this.onConnection(null);
  }

  showEmpty() {
    this.section.dataset.state = "empty";
    this.head.hidden = true;
    this.setPlaceholder("No run selected", "Pick a workspace and describe a task above, or open a run from the list.");
  }

  showMissing(runId) {
    this.stopSocket();
    this.section.dataset.state = "missing";
    this.head.hidden = true;
    this.setPlaceholder("Run not found", `There is no run ${runId} on this server.`);
  }

  setPlaceholder(title, text) {
    this.placeholder.querySelector(".placeholder-title").textContent = title;
    this.placeholder.querySelector(".placeholder-text").textContent = text;
  }

  fillHeader(run) {
    if (run.task) {
      this.title.textContent = run.task.trim().split("\n", 1)[0];
      this.title.title = run.task;
    }
    if (run.session_id) this.sessionId = run.session_id;
    if (run.workspace) {
      this.runWorkspace = run.workspace;
      this.workspace.replaceChildren(h("bdi", {}, run.workspace));
      this.workspace.title = run.workspace;
    }
    if (run.model) this.model.textContent = run.model;
    this.idLabel.textContent = run.id || this.runId;
    // A final status, once known, is never replaced by an older "running".
    if (run.status && !(isFinal(this.status) && !isFinal(run.status))) {
      this.setStatus(run.status, run.reason);
    }
  }

  setStatus(status, reason) {
    this.status = status;
    this.section.dataset.status = status;
    showStatus(this.pill, status);
    const running = status === "running";
    this.cancelButton.hidden = !running;
    if (running) {
      this.cancelButton.disabled = false;
      this.cancelButton.textContent = "Cancel";
    }
    const showReason = isFinal(status) && status !== "completed" && Boolean(reason);
    this.reason.hidden = !showReason;
    this.reason.textContent = showReason ? reason : "";
  }

  onEvent(event) {
    if (event.run_id !== this.runId) return;
    if (event.type === "run_started" && this.transcript.lastSeq > 0) {
      // The server is sending the run again from the start (a reconnect): rebuild.
      this.transcript.restart();
      this.contextTokens = 0;
      this.outputTokens = 0;
    }
    if (!this.transcript.apply(event)) return;
    switch (event.type) {
      case "run_started":
        if (!this.title.textContent) this.fillHeader({ ...event, id: event.run_id });
        break;
      case "checkpoint_created":
        this.timeline.addEvent(event);
        break;
      case "usage_reported":
        this.contextTokens =
          (event.input_tokens || 0) +
          (event.cache_creation_input_tokens || 0) +
          (event.cache_read_input_tokens || 0);
        this.outputTokens += event.output_tokens || 0;
        this.usage.textContent = `${formatTokens(this.contextTokens)} context · ${formatTokens(this.outputTokens)} out`;
        this.usage.title = `Context of the last turn: ${this.contextTokens} tokens; output so far: ${this.outputTokens} tokens`;
        this.usage.hidden = this.contextTokens + this.outputTokens === 0;
        break;
      case "run_finished":
        this.setStatus(event.status, event.reason);
        this.timeline.load();
        this.onRunChanged({
          id: event.run_id,
          status: event.status,
          reason: event.reason,
          turns: event.turns,
          finished_at: event.ts,
        });
        break;
      default:
        break;
    }
  }

  async cancel() {
    const runId = this.runId;
    if (!runId || this.status !== "running") return;
    this.cancelButton.disabled = true;
    this.cancelButton.textContent = "Cancelling…";
    try {
      const run = await api.cancelRun(runId);
      if (this.runId === runId && run && isFinal(run.status)) this.fillHeader(run);
    } catch (error) {
      if (this.runId !== runId) return;
      this.cancelButton.disabled = false;
      this.cancelButton.textContent = "Cancel";
      this.transcript.notice(`Could not cancel: ${error.message}`, "error");
    }
  }
}
