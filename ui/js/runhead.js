// The open conversation's header: its title, workspace, model and why, run id,
// status pill and why it ended, where another process runs it, the context bar
// and the figures (context and output tokens, cost). Showing only: which run
// the header is about, and when it changes, is the run view's (runview.js).

import { byId, h } from "./dom.js";
import { formatTokens } from "./format.js";
import { ContextBar } from "./contextbar.js";
import { isFinal, showStatus } from "./status.js";

export class RunHead {
  constructor({ onCompact = () => {} } = {}) {
    this.title = byId("run-title");
    this.workspace = byId("run-workspace");
    this.model = byId("run-model");
    this.modelReason = byId("run-model-reason");
    this.idLabel = byId("run-id");
    this.usage = byId("run-usage");
    this.cost = byId("run-cost");
    this.pill = byId("run-status");
    this.reason = byId("run-reason");
    this.contextBar = new ContextBar({ onCompact });
    this.reason.after(this.contextBar.el);
    // A run of another process (a terminal's `sparrow run`): what can be done from here.
    this.elsewhereNote = h("p", { class: "run-elsewhere", "data-testid": "run-elsewhere", hidden: true });
    this.reason.after(this.elsewhereNote);
    this.cancelButton = byId("cancel-button");
  }

  /** The conversation's title: the first line of its first task (the whole task on hover). */
  setTitle(task) {
    this.title.textContent = task.trim().split("\n", 1)[0];
    this.title.title = task;
  }

  /** What `run` (a RunInfo, or what an event knows of it) says of the workspace, model and id. */
  fill(run, fallbackId) {
    if (run.task && !this.title.textContent) this.setTitle(run.task);
    if (run.workspace) {
      this.workspace.replaceChildren(h("bdi", {}, run.workspace));
      this.workspace.title = run.workspace;
    }
    if (run.model) this.model.textContent = run.model;
    if (run.model_reason !== undefined) {
      this.modelReason.textContent = run.model_reason || "";
      this.modelReason.hidden = !run.model_reason;
    }
    this.idLabel.textContent = run.id || fallbackId;
  }

  /** The pill, Cancel (only while running) and why a run ended otherwise than completed. */
  showStatus(status, reason) {
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

  /** While a run of another process goes (`where`): say where it is answered, and whether Cancel reaches it. */
  showElsewhere(where) {
    this.elsewhereNote.hidden = !where;
    this.elsewhereNote.textContent = where ? where.note : "";
    if (!where) {
      this.cancelButton.removeAttribute("title");
      return;
    }
    if (!where.can_cancel) {
      this.cancelButton.disabled = true;
      this.cancelButton.title = where.note;
    }
  }

  resetFigures() {
    this.contextTokens = 0;
    this.outputTokens = 0;
    this.costUsd = 0;
    this.costKnown = true;
    this.window = null;
    this.usage.hidden = true;
    this.cost.hidden = true;
    this.contextBar.reset();
  }

  /** One turn's usage: its context replaces the last, its output and cost add up. */
  addUsage(event) {
    this.contextTokens =
      (event.input_tokens || 0) +
      (event.cache_creation_input_tokens || 0) +
      (event.cache_read_input_tokens || 0);
    this.outputTokens += event.output_tokens || 0;
    if (event.cost_usd === null || event.cost_usd === undefined) this.costKnown = false;
    else this.costUsd += event.cost_usd;
    this.showUsage();
  }

  showUsage() {
    const window = this.window ? ` / ${formatTokens(this.window)}` : "";
    this.usage.textContent = `${formatTokens(this.contextTokens)}${window} context · ${formatTokens(this.outputTokens)} out`;
    this.usage.title = `Context of the last turn: ${this.contextTokens} tokens` +
      (this.window ? ` of a ${this.window}-token window` : "") +
      `; output in this conversation: ${this.outputTokens} tokens`;
    this.usage.hidden = this.contextTokens + this.outputTokens === 0;
    this.cost.hidden = this.usage.hidden;
    if (this.costKnown) {
      this.cost.textContent = `$${this.costUsd.toFixed(4)}`;
      this.cost.title = "What this conversation cost, from the vendor's prices";
      this.cost.dataset.known = "true";
    } else {
      this.cost.textContent = "cost unknown";
      this.cost.title = "No price data for this model at this endpoint: the cost is not guessed";
      this.cost.dataset.known = "false";
    }
  }
}
