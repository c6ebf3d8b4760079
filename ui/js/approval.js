// An approval card: the run waits for a person before one tool call
// (`approval_requested`). It shows the call (tool, risk, arguments, the
// gate's reason), a countdown to `expires_at` (no answer is a deny), and the
// three answers: Allow once; Allow always, which saves `suggested_rule`
// (shown verbatim) at the chosen scope; Deny, with an optional message the
// model receives. `approval_resolved` turns it into one compact line. It is
// rebuilt the same way from a replayed history, resolved or still waiting.

import { h } from "./dom.js";
import { safetyApi } from "./api.js";
import { answerText, argsList } from "./toolcard.js";

const RISKS = new Set(["ReadOnly", "Mutating", "Exec", "Destructive", "Network"]);
const SCOPE_WORDS = { session: "this session", workspace: "this workspace", global: "every workspace" };

function countdown(seconds) {
  const s = Math.max(0, Math.ceil(seconds));
  const minutes = Math.floor(s / 60);
  return `${minutes}:${String(s % 60).padStart(2, "0")}`;
}

let cards = 0;

export class ApprovalCard {
  /** `elsewhere`: the run's process when another one asks (a terminal): answered there. */
  constructor(event, runId, elsewhere = null) {
    this.runId = runId;
    this.callId = event.call_id;
    this.expiresAt = Number(event.expires_at);
    this.timer = 0;
    this.state = "waiting";
    const id = `approval-${(cards += 1)}`;
    const risk = RISKS.has(event.risk) ? event.risk : "Unknown";
    const rule = typeof event.suggested_rule === "string" ? event.suggested_rule : "";

    this.clock = h("span", { class: "approval-clock", "data-testid": "approval-countdown" });
    this.error = h("p", { class: "approval-error", role: "alert", "data-testid": "approval-error", hidden: true });
    this.scope = h(
      "select",
      { class: "input select input-small", id: `${id}-scope`, "data-testid": "approve-scope" },
      ["session", "workspace", "global"].map((s) => h("option", { value: s }, SCOPE_WORDS[s])),
    );
    this.scopeWords = h("span", {}, SCOPE_WORDS.session);
    this.scope.addEventListener("change", () => {
      this.scopeWords.textContent = SCOPE_WORDS[this.scope.value];
    });
    this.message = h("input", {
      type: "text",
      class: "input input-small",
      id: `${id}-message`,
      placeholder: "Tell the model why (optional)",
      autocomplete: "off",
      "data-testid": "deny-message",
    });
    this.message.addEventListener("keydown", (e) => {
      if (e.key === "Enter") {
        e.preventDefault();
        this.answer("deny");
      }
    });
    this.buttons = [
      h("button", { type: "button", class: "btn btn-primary btn-small", "data-testid": "approve-once", on: { click: () => this.answer("allow_once") } }, "Allow once"),
      h("button", { type: "button", class: "btn btn-secondary btn-small", "data-testid": "approve-always", disabled: !rule, on: { click: () => this.answer("allow_always") } }, "Allow always"),
      h("button", { type: "button", class: "btn btn-danger-ghost btn-small", "data-testid": "deny", on: { click: () => this.answer("deny") } }, "Deny"),
    ];
    const [once, always, deny] = this.buttons;

    this.body = h(
      "div",
      { class: "approval-body" },
      h(
        "header",
        { class: "approval-head" },
        h("span", { class: "approval-icon", "aria-hidden": "true" }, "?"),
        h("h3", { class: "approval-title", id: `${id}-title` }, "Allow ", h("code", {}, event.tool), "?"),
        h("span", { class: "risk-badge", "data-risk": risk, title: `Risk level: ${risk}` }, risk),
        h("span", { class: "approval-timer", title: "No answer in time is a deny" }, "denied in ", this.clock),
      ),
      event.reason ? h("p", { class: "approval-reason", "data-testid": "approval-reason" }, event.reason) : null,
      argsList(event.args && typeof event.args === "object" ? event.args : {}),
      h(
        "div",
        { class: "approval-actions" },
        h("div", { class: "approval-row" }, once, h("span", { class: "approval-hint" }, "This call only; the next one asks again.")),
        h(
          "div",
          { class: "approval-row" },
          always,
          h("label", { class: "approval-scope-label", for: `${id}-scope` }, "for"),
          this.scope,
          h(
            "span",
            { class: "approval-hint" },
            "saves ",
            h("code", { class: "approval-rule", "data-testid": "approve-rule" }, rule),
            " for ",
            this.scopeWords,
          ),
        ),
        h(
          "div",
          { class: "approval-row" },
          deny,
          h("label", { class: "visually-hidden", for: `${id}-message` }, "Message to the model"),
          this.message,
        ),
      ),
      this.error,
    );
    this.el = h(
      "section",
      {
        class: "approval-card",
        "data-testid": "approval-card",
        "aria-labelledby": `${id}-title`,
        dataset: { callId: event.call_id, state: "waiting", tool: event.tool },
      },
      this.body,
    );
    if (elsewhere) {
      this.setBusy(true);
      this.el.removeAttribute("aria-busy");
      this.el.dataset.elsewhere = "true";
      this.body.append(h("p", { class: "approval-elsewhere", "data-testid": "approval-elsewhere" }, elsewhere.note));
    }
    this.tick();
    this.timer = setInterval(() => this.tick(), 1000);
  }

  tick() {
    const left = this.expiresAt - Date.now() / 1000;
    this.clock.textContent = Number.isFinite(left) ? countdown(left) : "—";
    if (Number.isFinite(left) && left <= 0) {
      this.clock.textContent = "0:00";
      clearInterval(this.timer);
      this.timer = 0;
      this.el.dataset.expired = "true";
    }
  }

  async answer(decision) {
    if (this.state !== "waiting") return;
    const body = { decision };
    if (decision === "allow_always") body.scope = this.scope.value;
    if (decision === "deny" && this.message.value.trim()) body.message = this.message.value.trim();
    this.setBusy(true);
    this.error.hidden = true;
    try {
      await safetyApi.answer(this.runId, this.callId, body);
      // The approval_resolved event redraws the card.
    } catch (error) {
      if (this.state !== "waiting") return;
      this.error.textContent =
        error.status === 404 ? `Nothing waits for this answer any more (${error.message}).` : error.message;
      this.error.hidden = false;
      this.setBusy(error.status === 404);
    }
  }

  setBusy(busy) {
    for (const el of [...this.buttons, this.scope, this.message]) el.disabled = busy;
    this.el.setAttribute("aria-busy", String(busy));
  }

  /** An approval_resolved event: one compact line saying who answered what. */
  resolve(event) {
    this.stop();
    this.state = "resolved";
    const decision = String(event.decision || "");
    const allowed = decision === "allow_once" || decision === "allow_always";
    this.el.dataset.state = "resolved";
    this.el.dataset.decision = decision;
    this.el.removeAttribute("aria-busy");
    const who = event.by && event.by !== "timeout" ? ` by ${event.by}` : "";
    this.el.replaceChildren(
      h(
        "p",
        { class: "approval-resolved", "data-testid": "approval-resolved", role: "status" },
        h("span", { class: "approval-icon", "aria-hidden": "true" }, allowed ? "✓" : "⊘"),
        h("span", { class: "approval-answer" }, `${answerText(event)}${who}`),
        event.rule
          ? h(
              "span",
              { class: "approval-saved" },
              "saved ",
              h("code", { "data-testid": "approval-saved-rule" }, event.rule),
              event.scope ? ` for ${SCOPE_WORDS[event.scope] || event.scope}` : "",
            )
          : null,
        event.message ? h("span", { class: "approval-message", "data-testid": "approval-message" }, `“${event.message}”`) : null,
      ),
    );
  }

  /** The run ended with this card still waiting. */
  end() {
    if (this.state !== "waiting") return;
    this.stop();
    this.state = "ended";
    this.el.dataset.state = "ended";
    this.setBusy(true);
    this.el.removeAttribute("aria-busy");
    this.clock.parentElement.textContent = "the run ended";
  }

  stop() {
    clearInterval(this.timer);
    this.timer = 0;
  }
}
