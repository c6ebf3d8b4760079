// What models there are (GET /api/models), shared by the new-conversation
// form, the composer and Settings; and how a <select> of them is filled.

import { api } from "./api.js";
import { h } from "./dom.js";

let cached = null;

/** The overview of models and providers; asked again with `refresh`. */
export async function loadModels({ refresh = false } = {}) {
  if (!cached || refresh) {
    cached = api.models(refresh).catch((error) => {
      cached = null;
      throw error;
    });
  }
  return cached;
}

export function forgetModels() {
  cached = null;
}

const PROVIDER_LABELS = (overview) =>
  new Map((overview.providers || []).map((p) => [p.name, p.label || p.name]));

/** Whether anything but the demo can run: a provider with a key that answers, or a local server. */
export function hasRealModels(overview) {
  return (overview.models || []).some((m) => m.provider !== "demo");
}

/**
 * Fill `select` with the models of `overview`, grouped by provider.
 * `first`: options before them, e.g. [["auto", "Auto (route by task)"]].
 * `chosen`: the value to select if it is there (else the first option).
 */
export function fillModelSelect(select, overview, { first = [], chosen = null } = {}) {
  const labels = PROVIDER_LABELS(overview);
  const groups = new Map();
  let demo = null;
  for (const model of overview.models || []) {
    if (model.provider === "demo") {
      demo = model;
      continue;
    }
    if (!groups.has(model.provider)) groups.set(model.provider, []);
    groups.get(model.provider).push(model);
  }
  const options = first.map(([value, label]) => h("option", { value }, label));
  for (const [provider, models] of groups) {
    options.push(
      h(
        "optgroup",
        { label: labels.get(provider) || provider },
        models.map((m) => h("option", { value: m.id, title: describe(m) }, m.label || m.id)),
      ),
    );
  }
  if (demo) options.push(h("option", { value: demo.id }, demo.label || "Demo (scripted model)"));
  const keep = chosen ?? select.value;
  select.replaceChildren(...options);
  if (keep && [...select.options].some((o) => o.value === keep)) select.value = keep;
}

function describe(model) {
  const parts = [model.id];
  if (model.context_window) parts.push(`${model.context_window.toLocaleString()}-token window`);
  parts.push(model.priced ? "priced" : "cost unknown");
  return parts.join(" · ");
}
