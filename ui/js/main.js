// Wires the page together: runs list, form, run view, the all-runs socket,
// the connection dot, the Monitor and Rules views, the safety controls in the
// header, the address (#run=ID, #monitor or #rules), and the desktop bridge.

import { byId } from "./dom.js";
import { pageReady } from "./bridge.js";
import { ConnectionIndicator } from "./connection.js";
import { RunForm } from "./form.js";
import { RunsList } from "./runs.js";
import { RunView } from "./runview.js";
import { MonitorView } from "./monitor.js";
import { RulesView } from "./rules.js";
import { SafetyControls } from "./safety.js";
import { LiveSocket } from "./socket.js";

const connection = new ConnectionIndicator(byId("connection-status"));
const MONITOR_HASH = "#monitor";
const RULES_HASH = "#rules";

function runIdFromHash() {
  const match = /^#run=(.+)$/.exec(location.hash);
  return match ? decodeURIComponent(match[1]) : null;
}

function navigate(runId) {
  const hash = runId ? `#run=${encodeURIComponent(runId)}` : "";
  if (location.hash !== hash) {
    if (hash) location.hash = hash;
    else history.pushState(null, "", location.pathname + location.search);
  }
  route();
}

const runs = new RunsList({
  list: byId("run-list"),
  empty: byId("runs-empty"),
  error: byId("runs-error"),
  onSelect: (id) => navigate(id),
});

const view = new RunView({
  onRunChanged: (run) => runs.upsert(run),
  onConnection: (state) => connection.set("run", state),
});

const form = new RunForm({
  onCreated: (run) => {
    runs.upsert(run);
    navigate(run.id);
  },
});

const monitor = new MonitorView({
  onConnection: (state) => connection.set("monitor", state),
});

const safety = new SafetyControls({ onStopped: () => runs.refresh() });

const rules = new RulesView({
  context: () => {
    const open = view.context;
    return { workspace: open.workspace || byId("workspace").value.trim(), sessionId: open.sessionId };
  },
});

function showView(name) {
  document.querySelector(".app").dataset.view = name;
  for (const tab of document.querySelectorAll(".view-tab")) {
    if (tab.dataset.view === name) tab.setAttribute("aria-current", "page");
    else tab.removeAttribute("aria-current");
  }
}

function route() {
  if (location.hash === MONITOR_HASH) {
    // The run stays open behind the monitor: the Runs tab goes back to it.
    rules.hide();
    showView("monitor");
    monitor.show();
    return;
  }
  monitor.hide();
  if (location.hash === RULES_HASH) {
    // Likewise behind the rules.
    safety.close();
    showView("rules");
    rules.show();
    return;
  }
  rules.hide();
  showView("runs");
  const runId = runIdFromHash();
  if (runId) view.open(runId, runs.get(runId));
  else view.close();
  runs.select(runId);
  byId("runs-tab").setAttribute("href", runId ? `#run=${encodeURIComponent(runId)}` : "#");
}

window.addEventListener("hashchange", route);
window.addEventListener("popstate", route);

byId("runs-tab").addEventListener("click", (event) => {
  event.preventDefault();
  navigate(view.currentId);
});

byId("new-run").addEventListener("click", () => {
  navigate(null);
  byId("prompt").focus();
});

const everything = new LiveSocket({
  onEvent: (event) => runs.applyEvent(event),
  onState: (state, detail) => {
    connection.set("all", state);
    if (state === "open" && detail.reconnected) runs.refresh();
  },
});
everything.subscribe("*");
everything.connect();

route();
await Promise.allSettled([runs.refresh(), form.loadRecent(), safety.refresh()]);
requestAnimationFrame(() => pageReady());
