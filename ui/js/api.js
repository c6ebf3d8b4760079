// The HTTP half of the local API (docs/api.md). Same-origin fetches carry
// the launch cookie; the UI never sees the token.

import { inDesktop } from "./bridge.js";

export class ApiError extends Error {
  constructor(message, status) {
    super(message);
    this.name = "ApiError";
    this.status = status;
  }
}

async function request(method, path, body) {
  const init = { method, credentials: "same-origin", headers: { Accept: "application/json" } };
  if (body !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  let response;
  try {
    response = await fetch(path, init);
  } catch {
    throw new ApiError("Cannot reach the Sparrow server. Is it still running?", 0);
  }
  let data = null;
  try {
    data = await response.json();
  } catch {
    data = null;
  }
  if (!response.ok) {
    const message =
      data && typeof data.error === "string" && data.error
        ? data.error
        : response.status === 401
          ? "This window's session has expired: reopen Sparrow."
          : `The server answered ${response.status} ${response.statusText}`.trim();
    throw new ApiError(message, response.status);
  }
  return data ?? {};
}

const enc = encodeURIComponent;

/** POST a file's bytes to /api/uploads; its {id, ref, name, size}. */
async function upload(file) {
  let response;
  try {
    response = await fetch("/api/uploads", {
      method: "POST",
      credentials: "same-origin",
      headers: { "X-Sparrow-Filename": enc(file.name || "pasted"), Accept: "application/json" },
      body: file,
    });
  } catch {
    throw new ApiError("Cannot reach the Sparrow server. Is it still running?", 0);
  }
  const data = await response.json().catch(() => null);
  if (!response.ok) {
    throw new ApiError(data?.error || `The server answered ${response.status}`, response.status);
  }
  return data.upload;
}

export const api = {
  upload,
  listRuns: async () => (await request("GET", "/api/runs")).runs ?? [],
  getRun: async (id) => (await request("GET", `/api/runs/${enc(id)}`)).run,
  // The surface lets rules be limited to the window or to a browser.
  // `continueFrom`: a run of the conversation to continue (then no workspace).
  createRun: async ({ workspace, task, model, continueFrom, attachments }) => {
    const body = { task, surface: inDesktop() ? "desktop" : "web" };
    if (model) body.model = model;
    if (attachments && attachments.length) body.attachments = attachments;
    if (continueFrom) body.continue = continueFrom;
    else body.workspace = workspace;
    return (await request("POST", "/api/runs", body)).run;
  },
  // How each path or upload ref would be sent to `model` (or to the model of `continueFrom`).
  describeAttachments: async (refs, { model, continueFrom } = {}) => {
    const body = { attachments: refs, model: model || null };
    if (continueFrom) body.continue = continueFrom;
    return (await request("POST", "/api/attachments/describe", body)).attachments ?? [];
  },
  sessions: async () => (await request("GET", "/api/sessions")).sessions ?? [],
  sessionRuns: async (id) => (await request("GET", `/api/sessions/${enc(id)}/runs`)).runs ?? [],
  turnRequest: async (id, turn) =>
    (await request("GET", `/api/runs/${enc(id)}/requests/${enc(turn)}`)).request,
  models: (refresh = false) => request("GET", `/api/models${refresh ? "?refresh=1" : ""}`),
  setKey: async (provider, key) =>
    (await request("PUT", `/api/providers/${enc(provider)}/key`, { key })).provider,
  removeKey: async (provider) =>
    (await request("DELETE", `/api/providers/${enc(provider)}/key`)).provider,
  testProvider: (provider) => request("POST", `/api/providers/${enc(provider)}/test`),
  setPreferences: (change) => request("PUT", "/api/preferences", change),
  cancelRun: async (id) => (await request("POST", `/api/runs/${enc(id)}/cancel`)).run,
  // The live run compacts before its next request; a finished one gets a follow-up that compacts.
  compactRun: async (id) => (await request("POST", `/api/runs/${enc(id)}/compact`)).run,
  runCheckpoints: async (id) =>
    (await request("GET", `/api/runs/${enc(id)}/checkpoints`)).checkpoints ?? [],
  checkpointDiff: async (id, to) =>
    (await request("GET", `/api/checkpoints/${enc(id)}/diff${to ? `?to=${enc(to)}` : ""}`)).files ?? [],
  rewindCheckpoint: async (id) => (await request("POST", `/api/checkpoints/${enc(id)}/rewind`)).rewind,
  recentWorkspaces: async () =>
    (await request("GET", "/api/workspaces/recent")).workspaces ?? [],
  // A handoff doc of a session the Monitor shows; the path it was written to.
  sessionHandoff: async (key) =>
    (await request("POST", "/api/monitor/sessions/handoff", { key })).path,
};

// The safety section of the API (docs/api.md, "Safety").
function query(params) {
  const pairs = Object.entries(params).filter(([, v]) => v);
  return pairs.length ? `?${pairs.map(([k, v]) => `${k}=${enc(v)}`).join("&")}` : "";
}

export const safetyApi = {
  get: () => request("GET", "/api/safety"),
  put: (change) => request("PUT", "/api/safety", change),
  emergencyStop: () => request("POST", "/api/safety/emergency-stop"),
  rules: async ({ workspace, sessionId } = {}) =>
    (await request("GET", `/api/rules${query({ workspace, session_id: sessionId })}`)).rules ?? [],
  createRule: async (rule) => (await request("POST", "/api/rules", rule)).rule,
  updateRule: async (id, rule) => (await request("PUT", `/api/rules/${enc(id)}`, rule)).rule,
  deleteRule: (id) => request("DELETE", `/api/rules/${enc(id)}`),
  restoreRule: async (rule) => (await request("POST", "/api/rules/restore", rule)).rule,
  importRules: (workspace) => request("POST", "/api/rules/import", { workspace }),
  // `by`: the surface that answered, as rules scoped to a surface know it.
  answer: (runId, callId, body) =>
    request("POST", `/api/runs/${enc(runId)}/approvals/${enc(callId)}`, {
      ...body,
      by: inDesktop() ? "desktop" : "web",
    }),
};

// The memory section of the API (docs/api.md, "Memory"). A rejected write is
// an ApiError whose message is the guard's reason.
export const memoryApi = {
  get: (workspace) => request("GET", `/api/memory${query({ workspace })}`),
  search: async (q, workspace) =>
    (await request("GET", `/api/memory/search${query({ q, workspace })}`)).facts ?? [],
  addFact: async (fact) => (await request("POST", "/api/memory/facts", fact)).fact,
  forgetFact: (id) => request("DELETE", `/api/memory/facts/${enc(id)}`),
  putDoc: async (kind, text, workspace) =>
    (await request("PUT", `/api/memory/docs/${enc(kind)}${query({ workspace })}`, { text })).doc,
};

// The agents section of the API (docs/api.md, "Agents"). A refused save is an
// ApiError whose message is the file's reason.
export const agentsApi = {
  list: () => request("GET", "/api/agents"),
  get: (name) => request("GET", `/api/agents/${enc(name)}`),
  put: async (name, text) => (await request("PUT", `/api/agents/${enc(name)}`, { text })).agent,
  run: async (name) => (await request("POST", `/api/agents/${enc(name)}/run`)).run,
  remove: (name) => request("DELETE", `/api/agents/${enc(name)}`),
};

// The sessions section of the API (docs/api.md, "Sessions"): the paged list,
// full-text search, one session, delete, export and resume.
export const sessionsApi = {
  page: ({ workspace, cursor, limit } = {}) =>
    request("GET", `/api/sessions${query({ workspace, cursor, limit })}`),
  search: async (q, limit = 30) =>
    (await request("GET", `/api/sessions/search${query({ q, limit })}`)).results ?? [],
  get: (id) => request("GET", `/api/sessions/${enc(id)}`),
  remove: (id) => request("DELETE", `/api/sessions/${enc(id)}`),
  // A run's recorded events, for a replay.
  runEvents: async (runId) => (await request("GET", `/api/runs/${enc(runId)}/events`)).events ?? [],
  // The age limit: `[sessions] keep_days` in config.toml, and that file.
  retention: () => request("GET", "/api/settings/sessions"),
  exportUrl: (id, format) => `/api/sessions/${enc(id)}/export?format=${enc(format)}`,
  resume: async (id, task, model, attachments) => {
    const body = { task, surface: inDesktop() ? "desktop" : "web" };
    if (model) body.model = model;
    if (attachments && attachments.length) body.attachments = attachments;
    const answer = await request("POST", `/api/sessions/${enc(id)}/resume`, body);
    return answer.run ?? answer;
  },
};
