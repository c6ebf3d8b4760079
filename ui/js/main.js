// Wires the page together: the sessions sidebar and its search, form, conversation view, the
// all-runs socket, the connection dot, the Monitor, Rules and Settings views,
// the welcome screen, the safety controls in the header, the address
// (#run=ID, #monitor, #rules, #memory, #agents or #settings), and the desktop bridge.

import { byId } from "./dom.js";
import { inDesktop, pageReady, tellAddress } from "./bridge.js";
import { installCommands } from "./commands.js";
import { ConnectionIndicator } from "./connection.js";
import { LazyView } from "./lazyview.js";
import { RunForm } from "./form.js";
import { SessionSearch } from "./search.js";
import { SessionSidebar } from "./sessions.js";
import { RunView } from "./runview.js";
import { SafetyControls } from "./safety.js";
import { LiveSocket } from "./socket.js";
import { Welcome } from "./welcome.js";

const connection = new ConnectionIndicator(byId("connection-status"));
const MONITOR_HASH = "#monitor";
const RULES_HASH = "#rules";
const MEMORY_HASH = "#memory";
const AGENTS_HASH = "#agents";
const SETTINGS_HASH = "#settings";

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

const runs = new SessionSidebar({
  list: byId("run-list"),
  empty: byId("runs-empty"),
  error: byId("runs-error"),
  onSelect: (id) => navigate(id),
});

// A search hit: its session, scrolled to the matching event.
const search = new SessionSearch({
  input: byId("session-search"),
  results: byId("search-results"),
  status: byId("search-status"),
  list: byId("run-list"),
  onOpen: (hit) => {
    navigate(hit.run_id);
    view.reveal(hit.run_id, hit.seq);
  },
});

const view = new RunView({
  onDeleted: (sessionId) => {
    runs.remove(sessionId);
    search.refresh(); // its hits are gone too
    navigate(null);
  },
  onRunChanged: (run) => runs.upsert(run),
  onConnection: (state) => connection.set("run", state),
  onOpened: (sessionId) => runs.select(view.currentId, sessionId),
  onFollowUp: (run) => {
    runs.upsert(run);
    // The address follows the conversation's newest run; the view is already on it.
    history.replaceState(null, "", `#run=${encodeURIComponent(run.id)}`);
    tellAddress();
    runs.select(run.id, run.session_id);
  },
});

const form = new RunForm({
  onCreated: (run) => {
    runs.upsert(run);
    welcome.update({ noConversations: false });
    navigate(run.id);
  },
});

const welcome = new Welcome({
  onAddKey: () => {
    location.hash = SETTINGS_HASH;
  },
  onTryDemo: () => form.tryDemo(),
  onChosen: () => form.loadModels({ refresh: true }),
});

// The other views load when first shown (ui/js/lazyview.js).
const settings = new LazyView(() =>
  import("./settings.js").then(
    ({ SettingsView }) =>
      new SettingsView({
        onChanged: () => {
          form.loadModels();
          welcome.update();
        },
      }),
  ),
);

const retention = new LazyView(() =>
  import("./retention.js").then(({ RetentionSetting }) => new RetentionSetting()),
);

const monitor = new LazyView(() =>
  import("./monitor.js").then(
    ({ MonitorView }) => new MonitorView({ onConnection: (state) => connection.set("monitor", state) }),
  ),
);

const safety = new SafetyControls({ onStopped: () => runs.refresh() });

const rules = new LazyView(() =>
  import("./rules.js").then(
    ({ RulesView }) =>
      new RulesView({
        context: () => {
          const open = view.context;
          return { workspace: open.workspace || byId("workspace").value.trim(), sessionId: open.sessionId };
        },
      }),
  ),
);

const memory = new LazyView(() =>
  import("./memory.js").then(
    ({ MemoryView }) =>
      new MemoryView({
        context: () => ({ workspace: view.context.workspace || byId("workspace").value.trim() }),
      }),
  ),
);

const agents = new LazyView(() =>
  import("./agents.js").then(
    ({ AgentsView }) =>
      new AgentsView({
        context: () => ({ workspace: view.context.workspace || byId("workspace").value.trim() }),
        onStarted: (run) => runs.upsert(run),
      }),
  ),
);

function showView(name) {
  document.querySelector(".app").dataset.view = name;
  for (const tab of document.querySelectorAll(".view-tab")) {
    if (tab.dataset.view === name) tab.setAttribute("aria-current", "page");
    else tab.removeAttribute("aria-current");
  }
}

function route() {
  tellAddress();
  if (location.hash === AGENTS_HASH) {
    rules.hide();
    settings.hide();
    memory.hide();
    monitor.hide();
    safety.close();
    showView("agents");
    agents.show();
    return;
  }
  agents.hide();
  if (location.hash === MONITOR_HASH) {
    // The run stays open behind the monitor: the Runs tab goes back to it.
    rules.hide();
    settings.hide();
    memory.hide();
    showView("monitor");
    monitor.show();
    return;
  }
  monitor.hide();
  if (location.hash === SETTINGS_HASH) {
    rules.hide();
    memory.hide();
    safety.close();
    showView("settings");
    settings.show();
    retention.show();
    return;
  }
  settings.hide();
  if (location.hash === MEMORY_HASH) {
    rules.hide();
    safety.close();
    showView("memory");
    memory.show();
    return;
  }
  memory.hide();
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

function newConversation() {
  navigate(null);
  byId("prompt").focus();
}

byId("new-run").addEventListener("click", newConversation);

// The menu's and the keyboard's commands (and a folder handed over by a second launch).
installCommands({
  newConversation,
  openWorkspace: (path) => {
    navigate(null);
    return form.openWorkspace(path);
  },
  settings: () => {
    location.hash = SETTINGS_HASH;
  },
});

// Files dropped anywhere on the window attach to the next message: the open
// conversation's follow-up, else the new task. In the desktop window the
// shell hands over their real paths (desktop/drops.py calls sparrowDropped);
// a browser has only the bytes, which are uploaded.
function dropTarget() {
  return view.composer.visible ? view.composer.attachments : form.attachments;
}

window.sparrowDropped = (paths) => dropTarget().addRefs(paths);

function carriesFiles(event) {
  return [...(event.dataTransfer?.types || [])].includes("Files");
}

document.addEventListener("dragover", (event) => {
  if (!carriesFiles(event)) return;
  event.preventDefault();
  document.body.classList.add("dropping");
  document.body.classList.toggle("no-composer", !view.composer.visible);
});
document.addEventListener("dragleave", (event) => {
  if (event.relatedTarget === null) document.body.classList.remove("dropping");
});
document.addEventListener("drop", (event) => {
  document.body.classList.remove("dropping");
  if (!carriesFiles(event)) return;
  event.preventDefault();
  if (inDesktop()) return; // the shell has the paths: they come through sparrowDropped
  // A browser gives a folder's name but neither its path nor its files.
  const items = [...(event.dataTransfer.items || [])];
  const folders = items.map((item) => item.webkitGetAsEntry?.()).filter((entry) => entry?.isDirectory);
  const target = dropTarget();
  if (folders.length) {
    target.onError(
      `${folders.map((f) => f.name).join(", ")}: a browser cannot hand over a folder; ` +
        "drop it on the Sparrow window, or give its path (sparrow run --attach)",
    );
  }
  const skip = new Set(folders.map((f) => f.name));
  target.addFiles([...event.dataTransfer.files].filter((file) => !skip.has(file.name)));
});

const everything = new LiveSocket({
  onEvent: (event) => {
    runs.applyEvent(event);
    // A follow-up of the open conversation started elsewhere: the view follows it live.
    if (event.type === "run_started") view.replay.adopt(event);
    // An agent's run that ends changes its row (last run, Run now again).
    if (event.type === "run_finished") agents.ifLoaded("refresh");
  },
  onState: (state, detail) => {
    connection.set("all", state);
    if (state === "open" && detail.reconnected) runs.refresh();
  },
});
everything.subscribe("*");
everything.connect();

route();
await Promise.allSettled([runs.refresh(), form.loadRecent(), safety.refresh()]);
welcome.looking({ noConversations: runs.size === 0 });
// The first state on screen, then the models: asking for them opens the
// credentials store and looks for local model servers, work that would
// otherwise compete with the page's own start. Until they come the model list
// says it is looking, and so does the welcome.
await new Promise((shown) =>
  requestAnimationFrame(() => {
    pageReady();
    shown();
  }),
);
await form.loadModels();
welcome.update({ noConversations: runs.size === 0 });
