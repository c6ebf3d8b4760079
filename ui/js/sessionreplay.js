// A finished conversation in the run view, replayed from its runs' recorded
// events (GET /api/runs/{id}/events) through the view's own event handling,
// under the replay bar (scrubber.js). A follow-up makes it live again: the
// ended runs are not subscribed to, their events are kept to draw them again
// if the view must be redrawn. A follow-up started elsewhere (a terminal's
// `sparrow run --continue` or `sparrow resume`, another window) does the same
// once its run_started arrives on the all-runs socket (`adopt`). Also where a
// search hit waits to be shown until the event it names has been drawn, live
// or replayed.

import { api, sessionsApi } from "./api.js";
import { ReplayBar } from "./scrubber.js";

export class SessionReplay {
  constructor(view) {
    this.view = view;
    this.active = false;
    this.recorded = []; // the events of runs replayed before a follow-up went live
    this.target = null; // a search hit to show: {runId, seq}
    this.bar = new ReplayBar({
      apply: (event) => view.onEvent(event),
      reset: () => this.resetDrawing(),
      moved: () => this.checkReveal(),
    });
  }

  /** Replay `runs` (all ended) of the conversation opened at `runId`, drawn to the end at first. */
  async start(runId, runs) {
    let lists;
    try {
      lists = await Promise.all(runs.map((run) => sessionsApi.runEvents(run.id)));
    } catch (error) {
      if (this.view.runId === runId) this.view.transcript.notice(`Could not load the session: ${error.message}`, "error");
      return;
    }
    if (this.view.runId !== runId || this.active) return;
    this.active = true;
    this.bar.load(lists.flat());
  }

  /** Back to live drawing (a follow-up): everything drawn, the bar hidden. */
  leave() {
    if (!this.active) return;
    this.recorded = this.bar.events;
    this.bar.stop();
    this.active = false;
  }

  /**
   * `event` (from the all-runs socket) starts a run: when it is a new run of the
   * open conversation, leave the replay and follow it live, as a follow-up sent
   * from this window is followed. True when it did.
   */
  adopt(event) {
    const view = this.view;
    const id = event.run_id;
    if (event.type !== "run_started" || !event.session_id || event.session_id !== view.sessionId) return false;
    // Still loading (its runs, this one perhaps among them), closed, or known already.
    if (!view.runIds.length || !view.socket || view.runIds.includes(id)) return false;
    this.leave();
    view.runIds.push(id);
    view.transcript.accept(id);
    view.socket.subscribe(id);
    const run = {
      id, session_id: event.session_id, task: event.task, workspace: event.workspace,
      model: event.model, status: "running", created_at: event.ts,
    };
    view.fillHeader(run);
    view.setStatus("running", "", id);
    view.runId = id;
    view.onFollowUp(run);
    // Who runs it (another process: where its approvals are answered) is the server's to say.
    api.getRun(id).then((info) => {
      if (!info || view.lastRunId !== id) return;
      if (info.elsewhere) view.transcript.elsewhere.set(id, info.elsewhere);
      view.fillHeader(info);
    }).catch(() => {});
    return true;
  }

  /** Another conversation is opened. */
  forget() {
    this.leave();
    this.recorded = [];
  }

  /** The view was emptied to be redrawn: the replayed runs first, as they were. */
  redrawRecorded() {
    if (!this.recorded.length) return;
    this.active = true; // their ends are recorded: nothing to ask the server again
    for (const event of this.recorded) this.view.onEvent(event);
    this.active = false;
  }

  /** Before the replay draws from its first event again. */
  resetDrawing() {
    const transcript = this.view.transcript;
    transcript.clear();
    transcript.sticky = true;
    this.view.resetFigures();
  }

  /** Show the event `seq` of run `runId` (a search hit) once it is drawn. */
  reveal(runId, seq) {
    this.target = { runId, seq: Math.max(1, Number(seq) || 0) };
    // A replay scrubbed back to before the hit: drawn to the end, where the hit is.
    if (this.active && this.view.runIds.includes(runId)) this.bar.seek(this.bar.events.length);
    this.checkReveal();
  }

  checkReveal() {
    const target = this.target;
    const transcript = this.view.transcript;
    if (!target || !this.view.runIds.includes(target.runId)) return;
    if ((transcript.seqs.get(target.runId) ?? 0) < target.seq) return;
    const el = transcript.marks.elementAt(target.runId, target.seq);
    if (!el) return;
    this.target = null;
    // After the frame in which the log follows its end, which would undo it.
    requestAnimationFrame(() => transcript.marks.reveal(el));
  }
}
