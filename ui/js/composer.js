// The chat composer at the foot of a conversation: the follow-up's text
// (Enter sends, Shift+Enter is a new line; it grows with its text), the
// model for it (the conversation's own by default), and Send. While the
// conversation's last run is going, sending waits; the typed text is never
// lost, on an error neither. Files dropped on the window or an image pasted
// here attach to the follow-up as chips (attachments.js).

import { AttachmentTray, pastedFiles } from "./attachments.js";
import { byId, showText } from "./dom.js";
import { attachMention } from "./mention.js";
import { fillModelSelect, loadModels } from "./models.js";

const MAX_ROWS = 10;

export class Composer {
  constructor({ onSend, lastRunId, workspace = () => "" }) {
    this.onSend = onSend;
    this.form = byId("composer");
    this.input = byId("composer-input");
    this.model = byId("composer-model");
    this.button = byId("composer-send");
    this.hint = byId("composer-hint");
    this.error = byId("composer-error");
    this.running = false;
    this.sending = false;
    this.form.addEventListener("submit", (event) => {
      event.preventDefault();
      this.send();
    });
    this.input.addEventListener("keydown", (event) => {
      if (event.key !== "Enter" || event.shiftKey || event.isComposing) return;
      event.preventDefault();
      this.send();
    });
    this.input.addEventListener("input", () => this.fit());
    this.attachments = new AttachmentTray({
      list: byId("composer-attachments"),
      context: () => ({ model: this.model.value || null, continueFrom: lastRunId() }),
      onError: (message) => showText(this.error, message),
    });
    this.input.addEventListener("paste", (event) => {
      const files = pastedFiles(event);
      if (!files.length) return; // text pastes as text
      event.preventDefault();
      this.attachments.addFiles(files);
    });
    this.model.addEventListener("change", () => this.attachments.describe());
    attachMention(this.input, workspace); // `@` completes the conversation's paths
  }

  get visible() {
    return !this.form.hidden;
  }

  /** Shown for a conversation whose last run uses `model`. */
  show(model) {
    this.form.hidden = false;
    this.sameModel = model;
    this.fillModels();
  }

  hide() {
    this.form.hidden = true;
    this.attachments.clear(); // another conversation's follow-up starts bare
  }

  async fillModels() {
    const same = [["", this.sameModel ? `Same model (${this.sameModel})` : "Same model"]];
    try {
      fillModelSelect(this.model, await loadModels(), { first: [...same, ["auto", "Auto (route by task)"]] });
    } catch {
      fillModelSelect(this.model, { models: [] }, { first: same });
    }
  }

  /** The conversation's last run is going (or not): what the user can do now. */
  setRunning(running) {
    this.running = running;
    this.update();
  }

  update() {
    const waiting = this.running || this.sending;
    this.button.disabled = waiting;
    this.form.dataset.state = this.running ? "running" : this.sending ? "sending" : "ready";
    this.hint.textContent = this.running
      ? "Sparrow is working; you can send a follow-up when it has answered (or cancel it above)."
      : "Enter sends · Shift+Enter for a new line";
  }

  fit() {
    const input = this.input;
    input.rows = 1;
    const style = getComputedStyle(input);
    const line = parseFloat(style.lineHeight) || 20;
    // scrollHeight counts the padding too: without it, one line would take two rows.
    const padding = (parseFloat(style.paddingTop) || 0) + (parseFloat(style.paddingBottom) || 0);
    const rows = Math.round((input.scrollHeight - padding) / line);
    input.rows = Math.min(MAX_ROWS, Math.max(1, rows));
  }

  focus() {
    this.input.focus();
  }

  async send() {
    const task = this.input.value;
    if (this.running || this.sending) return;
    if (!task.trim()) {
      showText(this.error, "Write a follow-up first.");
      return;
    }
    const refused = this.attachments.refused();
    if (refused.length) {
      showText(this.error, `Remove what cannot be sent first (×): ${refused.map((i) => i.chip.name).join(", ")}`);
      return;
    }
    const attachments = this.attachments.refs();
    this.sending = true;
    this.update();
    try {
      await this.onSend({ task, model: this.model.value || null, attachments });
      showText(this.error, "");
      if (this.input.value === task) this.input.value = "";
      this.attachments.clear();
      this.fit();
    } catch (error) {
      showText(this.error, error.message);
    } finally {
      this.sending = false;
      this.update();
    }
  }
}
