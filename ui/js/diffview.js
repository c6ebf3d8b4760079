// Renders a checkpoint diff (a list of FileDiff, docs/api.md "Checkpoints"):
// one block per file, its unified patch with +/- lines coloured, binary files
// named with their sizes. Text only: nothing is parsed as HTML.

import { h } from "./dom.js";

const STATUS_LABEL = { added: "added", modified: "modified", deleted: "deleted", mode: "mode" };

function patchLines(patch) {
  const lines = patch.replace(/\n$/, "").split("\n");
  return lines.map((line) => {
    let kind = "ctx";
    if (line.startsWith("+++") || line.startsWith("---") || line.startsWith("diff ") || line.startsWith("index ")) kind = "meta";
    else if (line.startsWith("@@")) kind = "hunk";
    else if (line.startsWith("+")) kind = "add";
    else if (line.startsWith("-")) kind = "del";
    return h("span", { class: `diff-line diff-${kind}` }, line, "\n");
  });
}

/** One file's block. */
export function fileDiff(file) {
  const head = h(
    "div",
    { class: "diff-file-head" },
    h("span", { class: "diff-status", dataset: { status: file.status } }, STATUS_LABEL[file.status] ?? file.status),
    h("bdi", { class: "diff-path" }, file.path),
    file.binary ? h("span", { class: "diff-binary" }, `binary · ${file.old_size} → ${file.new_size} bytes`) : null,
  );
  const body =
    file.binary || !file.patch
      ? null
      : h("pre", { class: "diff-patch" }, h("code", {}, patchLines(file.patch)));
  return h("div", { class: "diff-file", dataset: { testid: "diff-file", path: file.path } }, head, body);
}

/** Every file of `files`, or a line saying nothing changed. */
export function diffView(files, emptyText = "No changes: the workspace matches this checkpoint.") {
  if (!files.length) return h("p", { class: "diff-empty" }, emptyText);
  return h("div", { class: "diff-files" }, files.map(fileDiff));
}

/**
 * What a rewind to the checkpoint will do, from the diff checkpoint -> now:
 * a file added since is removed, everything else is put back.
 */
export function rewindPlan(files) {
  return files.map((file) => ({ path: file.path, action: file.status === "added" ? "remove" : "restore" }));
}
