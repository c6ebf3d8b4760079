// The sessions' age limit in Settings, read-only: it lives in config.toml
// (`[sessions] keep_days`) and is applied when Sparrow starts, so the view
// says what it is and where to change it (GET /api/settings/sessions).

import { sessionsApi } from "./api.js";
import { byId, h } from "./dom.js";

function days(n) {
  return `${n} ${n === 1 ? "day" : "days"}`;
}

export class RetentionSetting {
  constructor() {
    this.value = byId("sessions-retention");
    this.where = byId("sessions-retention-where");
  }

  async show() {
    let answer;
    try {
      answer = await sessionsApi.retention();
    } catch (error) {
      this.value.textContent = `Could not read the age limit: ${error.message}`;
      this.value.dataset.state = "error";
      return;
    }
    const keep = Number(answer.keep_days) || 0;
    this.value.dataset.state = keep > 0 ? "limited" : "unlimited";
    this.value.textContent = keep > 0
      ? `Sessions not active for ${days(keep)} are deleted when Sparrow starts (a running one never is).`
      : "Sessions are kept until you delete them: no age limit is set.";
    this.where.replaceChildren(
      "To change it, set ", h("code", {}, "keep_days"), " under ", h("code", {}, "[sessions]"), " in ",
      h("code", { class: "settings-path", "data-testid": "sessions-config-file" }, String(answer.config_file || "config.toml")),
      " (0 keeps every session); it applies from the next start.",
    );
  }
}
