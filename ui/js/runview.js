// The open conversation: its header (title, workspace, the model and why,
// status, tokens and cost, Cancel), the transcript of every run of it in
// order, and the composer for a follow-up. One WebSocket of its own
// subscribes to each run (each replays its history first), so that switching
// conversations never mixes two of them. A finished conversation is not
// subscribed to: it is replayed from its recorded events, with a scrubber
// (scrubber.js), until a follow-up resumes it and it goes live again. The
// header's drawing and its figures are runhead.js's; this is the lifecycle.

import { api, sessionsApi } from "./api.js";
import { byId } from "./dom.js";
import { Composer } from "./composer.js";
import { RequestDialog } from "./requestview.js";
import { RunHead } from "./runhead.js";
import { SessionReplay } from "./sessionreplay.js";
import { SessionActions } from "./sessionactions.js";
import { LiveSocket } from "./socket.js";
import { isFinal } from "./status.js";
import { CheckpointTimeline } from "./timeline.js";
import { Transcript } from "./transcript.js";

export class RunView {
  constructor({
    onRunChanged = () => {},
    onConnection = () => {},
    onFollowUp = () => {},
    onOpened = () => {},
    onDeleted = () => {},
  } = {}) {
    this.onRunChanged = onRunChanged;
    this.onOpened = onOpened;
    this.onConnection = onConnection;
    this.onFollowUp = onFollowUp;
    this.section = byId("run-view");
    this.head = byId("run-head");
    this.header = new RunHead({ onCompact: () => this.compact() });
    this.contextBar = this.header.contextBar;
    this.elsewhere = null;
    this.cancelButton = this.header.cancelButton;
    this.placeholder = byId("run-placeholder");
    this.requests = new RequestDialog();
    this.transcript = new Transcript(byId("transcript"), byId("jump-latest"), {
      onRequest: (runId, turn) => this.requests.show(runId, turn),
    });
    this.timeline = new CheckpointTimeline();
    this.composer = new Composer({
      onSend: (followUp) => this.sendFollowUp(followUp),
      lastRunId: () => this.lastRunId,
      workspace: () => this.runWorkspace,
    });
    this.replay = new SessionReplay(this);
    byId("transcript").parentElement.before(this.replay.bar.el);
    this.actions = new SessionActions({
      onResume: () => this.composer.focus(),
      onDeleted: (sessionId) => onDeleted(sessionId),
      onNotice: (text, kind) => this.transcript.notice(text, kind),
    });
    this.header.pill.before(this.actions.el);
    this.socket = null;
    this.runId = null;
    this.runIds = [];
    this.cancelButton.addEventListener("click", () => this.cancel());
    this.showEmpty();
  }

  get currentId() {
    return this.runId;
  }

  /** The open conversation's workspace and session ({} when none is open), for the Rules view. */
  get context() {
    return this.runId ? { workspace: this.runWorkspace || "", sessionId: this.sessionId || "" } : {};
  }

  /** The conversation's latest run, which the header, Cancel and the composer are about. */
  get lastRunId() {
    return this.runIds[this.runIds.length - 1] ?? this.runId;
  }

  /** Show the conversation of run `runId`; `info` (a RunInfo) fills the header at once. */
  open(runId, info = null) {
    if (runId === this.runId || this.runIds.includes(runId)) {
      this.runId = runId;
      return;
    }
    this.stopSocket();
    this.replay.forget();
    this.actions.show(null);
    this.runId = runId;
    this.runIds = [];
    this.runWorkspace = "";
    this.sessionId = "";
    this.elsewhere = null;
    this.status = "running";
    this.resetFigures();
    this.transcript.reset([]);
    this.timeline.reset(runId);
    this.section.dataset.state = "open";
    this.head.hidden = false;
    this.fillHeader(info ?? { id: runId, status: "running", task: "", workspace: "", model: "" });
    this.composer.hide();

    const socket = new LiveSocket({
      onEvent: (event) => this.onEvent(event),
      onControl: (message) => this.transcript.notice(message.error || "The server refused a request.", "error"),
      onState: (state, detail) => {
        // A replay is drawn from events fetched once: nothing to redraw.
        if (state === "open" && detail.reconnected && !this.replay.active) this.restart();
        if (state === "connecting" && detail.attempt === 0) return;
        this.onConnection(state);
      },
    });
    this.socket = socket;
    socket.connect();
    this.loadConversation(runId);
  }

  async loadConversation(runId) {
    let runs = [];
    try {
      const run = await api.getRun(runId);
      if (this.runId !== runId) return;
      if (!run) return this.showMissing(runId);
      this.fillHeader(run);
      runs = run.session_id ? await api.sessionRuns(run.session_id) : [run];
    } catch (error) {
      if (this.runId !== runId) return;
      if (error.status === 404) this.showMissing(runId);
      else this.transcript.notice(error.message, "error");
      return;
    }
    if (this.runId !== runId) return;
    this.runIds = runs.map((r) => r.id);
    this.transcript.reset(this.runIds);
    this.transcript.elsewhere = new Map(runs.filter((r) => r.elsewhere).map((r) => [r.id, r.elsewhere]));
    this.timeline.load(this.runIds);
    const last = runs[runs.length - 1];
    const finished = runs.every((r) => isFinal(r.status));
    this.actions.show(last.session_id, { finished, title: runs[0]?.task || "" });
    if (finished) this.replay.start(runId, runs);
    else for (const id of this.runIds) this.socket.subscribe(id);
    this.header.setTitle(runs[0]?.task || "");
    this.fillHeader(last);
    this.composer.show(last.model);
    this.composer.setRunning(!isFinal(last.status));
    this.onOpened(last.session_id);
  }

  /** Show the event `seq` of run `runId` (a search hit) once it is drawn. */
  reveal(runId, seq) {
    this.replay.reveal(runId, seq);
  }

  /** The socket came back: every run's history is sent again, from the start. */
  restart() {
    this.transcript.restart();
    this.resetFigures();
    this.replay.redrawRecorded();
  }

  resetFigures() {
    this.header.resetFigures();
  }

  /** Back to the empty state. */
  close() {
    this.stopSocket();
    this.replay.leave();
    this.actions.show(null);
    this.runId = null;
    this.runIds = [];
    this.transcript.reset([]);
    this.timeline.reset(null);
    this.composer.hide();
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
    this.setPlaceholder("No conversation open", "Pick a workspace and describe a task above, or open a conversation from the list.");
  }

  showMissing(runId) {
    this.stopSocket();
    this.section.dataset.state = "missing";
    this.head.hidden = true;
    this.composer.hide();
    this.setPlaceholder("Run not found", `There is no run ${runId} on this server.`);
  }

  setPlaceholder(title, text) {
    this.placeholder.querySelector(".placeholder-title").textContent = title;
    this.placeholder.querySelector(".placeholder-text").textContent = text;
  }

  fillHeader(run) {
    if (run.session_id) this.sessionId = run.session_id;
    if (run.workspace) this.runWorkspace = run.workspace;
    this.header.fill(run, this.runId);
    if (run.elsewhere !== undefined && (run.id ?? this.lastRunId) === this.lastRunId) {
      this.elsewhere = run.elsewhere;
      this.showElsewhere();
    }
    // A final status, once known, is never replaced by an older "running".
    if (run.status && (run.id ?? this.lastRunId) === this.lastRunId &&
        !(isFinal(this.status) && !isFinal(run.status) && run.id === this.statusOf)) {
      this.setStatus(run.status, run.reason, run.id);
    }
  }

  setStatus(status, reason, runId = this.lastRunId) {
    this.status = status;
    this.statusOf = runId;
    this.section.dataset.status = status;
    this.actions.setFinished(isFinal(status));
    this.header.showStatus(status, reason);
    this.showElsewhere();
    this.composer.setRunning(status === "running");
  }

  /** While a run of another process goes: say where it is answered, and whether Cancel reaches it. */
  showElsewhere() {
    this.header.showElsewhere(this.status === "running" ? this.elsewhere : null);
  }

  onEvent(event) {
    if (!this.runIds.includes(event.run_id)) return;
    if (event.type === "run_started" && this.transcript.seqs.get(event.run_id)) {
      this.restart(); // the server is sending the runs again from the start
    }
    if (!this.transcript.apply(event)) return;
    if (!this.replay.active) this.replay.checkReveal();
    const latest = event.run_id === this.lastRunId;
    switch (event.type) {
      case "run_started":
        if (latest) {
          this.fillHeader({ ...event, id: event.run_id, status: "running" });
          if (event.context_window) this.header.window = event.context_window;
        }
        break;
      case "context_assembled":
        if (latest && event.context_window) {
          this.header.window = event.context_window;
          this.header.showUsage();
        }
        break;
      case "checkpoint_created":
        this.timeline.addEvent(event);
        break;
      case "context_updated":
        if (latest) this.contextBar.update(event);
        break;
      case "usage_reported":
        this.header.addUsage(event);
        break;
      case "run_finished":
        if (latest) this.setStatus(event.status, event.reason, event.run_id);
        if (this.replay.active) break; // recorded: nothing changed on the server
        this.timeline.load([event.run_id]);
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

  /** The composer sent a follow-up: a new run of this conversation, followed live. */
  async sendFollowUp({ task, model, attachments }) {
    const run = isFinal(this.status) && this.sessionId
      ? await sessionsApi.resume(this.sessionId, task, model, attachments)
      : await api.createRun({ task, model, attachments, continueFrom: this.lastRunId });
    if (this.runIds.includes(run.id)) return; // its run_started came first: replay.adopt followed it
    this.replay.leave();
    if (run.session_id && this.sessionId && run.session_id !== this.sessionId) {
      // Resumed from its handoff doc: a new session, opened as such.
      this.open(run.id, run);
      this.onFollowUp(run);
      return;
    }
    this.runIds.push(run.id);
    this.transcript.accept(run.id);
    this.socket.subscribe(run.id);
    this.fillHeader(run);
    this.setStatus("running", "", run.id);
    this.runId = run.id;
    this.onFollowUp(run);
  }

  /** A follow-up of a finished session resumes it (the server picks its context or its handoff doc). */

  /** Compact the conversation: the live run before its next request, else a follow-up run that does it. */
  async compact() {
    const runId = this.lastRunId;
    if (!runId) return;
    this.contextBar.compactButton.disabled = true;
    try {
      const run = await api.compactRun(runId);
      if (run.id !== runId && this.runIds.includes(run.id)) return; // followed already (replay.adopt)
      if (run.id !== runId) {
        this.replay.leave();
        this.runIds.push(run.id);
        this.transcript.accept(run.id);
        this.socket.subscribe(run.id);
        this.fillHeader(run);
        this.setStatus("running", "", run.id);
        this.runId = run.id;
        this.onFollowUp(run);
      } else {
        this.transcript.notice("Compaction asked: the run compacts before its next request.");
      }
    } catch (error) {
      this.transcript.notice(`Could not compact: ${error.message}`, "error");
    } finally {
      this.contextBar.compactButton.disabled = false;
    }
  }

  async cancel() {
    const runId = this.lastRunId;
    if (!runId || this.status !== "running") return;
    this.cancelButton.disabled = true;
    this.cancelButton.textContent = "Cancelling…";
    try {
      const run = await api.cancelRun(runId);
      if (this.lastRunId === runId && run && isFinal(run.status)) this.fillHeader(run);
    } catch (error) {
      if (this.lastRunId !== runId) return;
      this.cancelButton.disabled = false;
      this.cancelButton.textContent = "Cancel";
      this.transcript.notice(`Could not cancel: ${error.message}`, "error");
    }
  }
}
