// The Request dialog: what one turn sent to the model, as it was sent — the
// system prompt, the tools and every message — from
// GET /api/runs/{id}/requests/{turn}.

import { api } from "./api.js";
import { byId, h } from "./dom.js";
import { describeSize, formatBytes } from "./format.js";
import { argsList, foldable } from "./toolcard.js";

const ROLES = { user: "User", assistant: "Assistant", tool: "Tool result" };

function messageView(message, index) {
  const role = ROLES[message.role] || message.role;
  const parts = [];
  if (message.role === "tool") {
    parts.push(h("p", { class: "request-meta" }, `${message.tool} · ${message.call_id} · ${message.ok ? "ok" : "failed"}`));
    parts.push(foldable(String(message.content || ""), { label: "Show result", testid: "request-tool-result" }));
  } else {
    for (const block of message.thinking || []) {
      parts.push(foldable(String(block.text || ""), { label: "Thinking", testid: "request-thinking", forceFold: true }));
    }
    if (message.text) parts.push(foldable(String(message.text), { label: "Show text", testid: "request-text" }));
    for (const attached of message.attachments || []) parts.push(...attachmentView(attached));
    for (const call of message.tool_calls || []) {
      parts.push(h("p", { class: "request-meta" }, `calls ${call.name} · ${call.id}`), argsList(call.args));
    }
  }
  return h(
    "li",
    { class: "request-message", "data-role": message.role, "data-testid": "request-message" },
    h("span", { class: "request-role" }, `${index + 1}. ${role}`),
    ...parts,
  );
}

// An attachment as sent: the transcript keeps its path, size and hash; the
// server reads the file again and gives the text while it still matches.
function attachmentView(attached) {
  const meta = h("p", { class: "request-meta", "data-testid": "request-attachment" },
    `attached ${attached.path || attached.name} · ${attached.media_type} · ${formatBytes(attached.size || 0)}`,
    attached.sha256 ? ` · sha256 ${attached.sha256.slice(0, 12)}…` : "");
  if (typeof attached.text === "string") {
    return [meta, foldable(attached.text, { label: "Show the attachment as sent", testid: "request-attachment-text", forceFold: true })];
  }
  return [meta, attached.note ? h("p", { class: "request-meta" }, attached.note) : null];
}

export class RequestDialog {
  constructor() {
    this.dialog = byId("request-dialog");
    this.body = byId("request-body");
    this.title = byId("request-title");
    this.copy = byId("request-copy");
    this.sent = null;
    byId("request-close").addEventListener("click", () => this.dialog.close());
    this.copy.addEventListener("click", () => this.copyJson());
  }

  async show(runId, turn) {
    this.title.textContent = `Request of turn ${turn}`;
    this.body.replaceChildren(h("p", { class: "request-meta" }, "Loading…"));
    this.copy.disabled = true;
    if (!this.dialog.open) this.dialog.showModal();
    try {
      this.sent = await api.turnRequest(runId, turn);
    } catch (error) {
      this.body.replaceChildren(h("p", { class: "request-error", role: "alert" }, error.message));
      return;
    }
    const sent = this.sent;
    this.copy.disabled = false;
    this.body.replaceChildren(
      h("p", { class: "request-meta", "data-testid": "request-summary" },
        `${sent.model} · ${sent.messages.length} messages · ${sent.tools.length} tools`),
      h("h3", { class: "request-heading" }, "System prompt ", h("span", { class: "fold-meta" }, describeSize(sent.system))),
      foldable(sent.system, { label: "Show the system prompt", testid: "request-system", forceFold: true }),
      h("h3", { class: "request-heading" }, "Tools"),
      h("ul", { class: "request-tools" },
        sent.tools.map((tool) =>
          h("li", {}, h("code", {}, tool.name), " — ", tool.description,
            foldable(JSON.stringify(tool.parameters, null, 2), { label: "Schema", testid: "request-schema", forceFold: true })))),
      h("h3", { class: "request-heading" }, "Messages"),
      h("ol", { class: "request-messages", "data-testid": "request-messages" }, sent.messages.map(messageView)),
    );
  }

  async copyJson() {
    if (!this.sent) return;
    try {
      await navigator.clipboard.writeText(JSON.stringify(this.sent, null, 2));
      this.copy.textContent = "Copied";
    } catch {
      this.copy.textContent = "Copy failed";
    }
    setTimeout(() => {
      this.copy.textContent = "Copy as JSON";
    }, 1500);
  }
}
