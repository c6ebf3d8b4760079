// Safety in the header: the current mode (a button that opens the Safety
// panel: the autonomy dial and the permission mode switch) and the emergency
// stop. The server owns the setting (docs/api.md, "Safety"): the UI sends
// what the user chose and then shows what the server answered, since the
// mode follows the dial's band and some modes override the dial.

import { safetyApi } from "./api.js";
import { byId, h, showText } from "./dom.js";
import { bandKey, Dial } from "./dial.js";

// ---------- Words ----------

export const MODES = [
  { value: "read-only", label: "Read-only", hint: "Reads only; writes, commands and network are denied" },
  { value: "plan", label: "Plan", hint: "No tool runs: planning only" },
  { value: "supervised", label: "Supervised", hint: "Every change and command asks you first" },
  { value: "trusted", label: "Trusted", hint: "Changes and commands run with a checkpoint and a notice" },
  { value: "autonomous", label: "Autonomous", hint: "Most actions run; only destructive ones ask" },
  { value: "emergency-stop", label: "Emergency stop", hint: "Every tool call is denied" },
];
const OVERRIDING = new Set(["read-only", "plan", "emergency-stop"]);
// The header's summary of a mode, where it differs from the mode's name: beside
// the pressed Emergency stop button, "Stopped" says the state without naming it twice.
const SUMMARIES = { "emergency-stop": "Stopped" };

export function modeLabel(mode) {
  return MODES.find((m) => m.value === mode)?.label ?? String(mode || "");
}

// ---------- The controls ----------

const DEBOUNCE_MS = 150;

export class SafetyControls {
  constructor({ onStopped = () => {} } = {}) {
    this.onStopped = onStopped;
    this.toggle = byId("safety-toggle");
    this.summary = byId("safety-summary");
    this.panel = byId("safety-panel");
    this.stopButton = byId("emergency-stop");
    this.banner = byId("safety-banner");
    this.bannerText = byId("safety-banner-text");
    this.resumeButton = byId("safety-resume");
    this.error = byId("safety-error");
    this.note = byId("dial-override");
    this.readout = byId("dial-readout");
    this.modeSwitch = byId("mode-switch");
    this.state = null;
    this.timer = 0;
    this.sent = 0; // requests sent, to ignore answers to older ones
    this.dial = new Dial({
      label: "Autonomy level",
      onInput: (level) => this.levelChanged(level),
      onCommit: (level) => this.sendLevel(level),
    });
    this.dial.el.setAttribute("aria-describedby", "dial-override");
    byId("dial-slot").append(this.dial.el);

    this.modeSwitch.replaceChildren(
      h("legend", { class: "mode-legend" }, "Permission mode"),
      ...MODES.map((mode) =>
        h(
          "label",
          { class: "mode-option", dataset: { mode: mode.value }, title: mode.hint },
          h("input", {
            type: "radio",
            name: "permission-mode",
            value: mode.value,
            class: "visually-hidden",
            on: { change: (event) => event.target.checked && this.send({ mode: mode.value }) },
          }),
          h("span", {}, mode.label),
        ),
      ),
    );

    this.toggle.addEventListener("click", () => (this.panel.hidden ? this.open() : this.close()));
    this.panel.addEventListener("keydown", (event) => {
      if (event.key === "Escape") {
        event.stopPropagation();
        this.close();
        this.toggle.focus();
      }
    });
    document.addEventListener("pointerdown", (event) => {
      if (!this.panel.hidden && !this.panel.contains(event.target) && !this.toggle.contains(event.target)) {
        this.close();
      }
    });
    this.stopButton.addEventListener("click", () => this.emergencyStop());
    this.resumeButton.addEventListener("click", () => this.send({ mode: "supervised" }));
    window.addEventListener("focus", () => this.refresh());
  }

  open() {
    this.panel.hidden = false;
    this.toggle.setAttribute("aria-expanded", "true");
    this.refresh();
    this.dial.el.focus();
  }

  close() {
    if (this.panel.hidden) return;
    this.panel.hidden = true;
    this.toggle.setAttribute("aria-expanded", "false");
  }

  async refresh() {
    const sent = this.sent;
    try {
      const state = await safetyApi.get();
      if (sent === this.sent && !this.timer && !this.dial.dragging) this.show(state);
    } catch (error) {
      this.showError(`Could not read the safety settings: ${error.message}`);
    }
  }

  levelChanged(level) {
    this.previewBand(level);
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.sendLevel(level), DEBOUNCE_MS);
  }

  sendLevel(level) {
    clearTimeout(this.timer);
    this.timer = 0;
    if (this.state && this.state.level === level) return;
    this.send({ level });
  }

  async send(change) {
    this.sent += 1;
    const sent = this.sent;
    try {
      const state = await safetyApi.put(change);
      this.hideError();
      // A newer change is on its way (or the hand is still on the dial): its answer will do.
      if (sent === this.sent && !this.timer && !this.dial.dragging) this.show(state);
      else this.state = { ...state, level: this.dial.value };
    } catch (error) {
      this.showError(error.message);
      if (sent === this.sent && this.state) this.show(this.state);
    }
  }

  async emergencyStop() {
    // No confirmation: it has to be instant. The banner says how to resume.
    this.stopButton.disabled = true;
    this.sent += 1;
    try {
      const answer = await safetyApi.emergencyStop();
      const stopped = Array.isArray(answer.stopped) ? answer.stopped : [];
      this.show(answer.safety);
      const n = stopped.length;
      this.bannerText.textContent =
        `Emergency stop: ${n === 0 ? "no run was live" : `${n} ${n === 1 ? "run" : "runs"} stopped`}. ` +
        "Every tool call is denied until you choose another mode.";
      this.banner.hidden = false;
      this.onStopped(stopped);
    } catch (error) {
      this.showError(`The emergency stop failed: ${error.message}`);
      this.open();
    } finally {
      this.stopButton.disabled = false;
    }
  }

  previewBand(level) {
    const band = this.dial.set(level);
    this.readout.textContent = this.readoutText(this.state?.mode, level, band.name);
  }

  readoutText(mode, level, band) {
    const value = Number(level).toFixed(2);
    if (OVERRIDING.has(mode)) return `Dial kept at ${band} · ${value}`;
    return `${band} · ${value}`;
  }

  /** Show a `Safety` object from the server. */
  show(state) {
    if (!state || typeof state !== "object") return;
    this.state = state;
    const mode = String(state.mode || "");
    const level = Number(state.level) || 0;
    this.dial.setBands(state.bands);
    const band = this.dial.set(level);
    const bandName = state.band || band.name;
    const overridden = OVERRIDING.has(mode);
    this.dial.el.dataset.overridden = String(overridden);
    this.panel.dataset.mode = mode;
    this.note.hidden = !overridden;
    this.note.textContent = overridden
      ? `${modeLabel(mode)} overrides the dial: ${
          mode === "read-only"
            ? "only read-only tools run."
            : mode === "plan"
              ? "no tool runs."
              : "every tool call is denied."
        } The dial keeps its value for later.`
      : "";
    this.readout.textContent = this.readoutText(mode, level, bandName);
    for (const input of this.modeSwitch.querySelectorAll("input")) input.checked = input.value === mode;

    const label = overridden ? SUMMARIES[mode] ?? modeLabel(mode) : `${bandName} · ${level.toFixed(2)}`;
    this.summary.textContent = label;
    this.toggle.dataset.mode = mode;
    this.toggle.dataset.band = bandKey(bandName);
    this.toggle.setAttribute("aria-label", `Safety: ${overridden ? modeLabel(mode) : `${bandName} mode, autonomy ${level.toFixed(2)}`}`);
    const stopped = mode === "emergency-stop";
    this.stopButton.dataset.active = String(stopped);
    this.stopButton.setAttribute("aria-pressed", String(stopped));
    if (!stopped) this.banner.hidden = true;
    else if (this.banner.hidden) {
      this.bannerText.textContent = "Emergency stop: every tool call is denied until you choose another mode.";
      this.banner.hidden = false;
    }
  }

  showError(message) {
    showText(this.error, message);
  }

  hideError() {
    showText(this.error, "");
  }
}
