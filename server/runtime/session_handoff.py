"""A handoff doc of a Claude Code or Codex session the monitor watches: the
monitor reads what the session did (``server.monitor.handoff_source``), the
engine distils it by its own rules (``server.engine.handoff``), and the doc
goes to the session's folder, ``<cwd>/.sparrow/handoff/<timestamp>.md``.

Files modified come from the session's edit calls and Tests run from its shell
commands (by ``distill``'s test rule), never from words in its messages;
Decisions and Blockers from its messages by ``distill``'s line rules. The
Context line is the Monitor's own reading of the session."""

from __future__ import annotations

import os
from pathlib import Path

from server.core.redaction import redact
from server.engine.handoff import HandoffDoc, distill, write_handoff
from server.monitor.handoff_source import SessionWork, read_session_work
from server.monitor.levels import MonitorConfig
from server.monitor.reader import read_transcript
from server.monitor.reading import SessionReading, reading_of


class SessionHandoffError(Exception):
    """The doc cannot be written as asked; the message says why."""


def session_doc(
    path: str,
    tool: str,
    config: MonitorConfig,
    *,
    task: str = "",
    subagent: bool = False,
    reading: SessionReading | None = None,
) -> tuple[HandoffDoc, SessionWork]:
    """The doc of the session whose transcript is ``path``, and what was read.
    ``reading``: the Monitor's, when it watches the session (else read here the
    same way). OSError if the transcript cannot be read."""
    work = read_session_work(path, tool)
    if reading is None:
        state, _ = read_transcript(path, tool, session_id=work.session_id, subagent=subagent)
        reading = reading_of(state, config)
    doc = distill(work.texts, task=task or work.task, context=context_line(reading))
    doc.files_modified = work.files
    doc.tests_run = distill(work.commands).tests_run
    return _redacted(doc), work


def context_line(r: SessionReading) -> str:
    """The Monitor's figures in one line: ``ctx 14% · 142,300 of 1,000,000 tokens · …``."""
    if r.context_tokens is None:
        head = ["ctx compacted, size not known yet" if r.after_compaction else "ctx not known"]
        head.append("window unknown" if r.window is None else f"window {r.window:,} tokens")
    elif r.window is None:
        head = [f"ctx {r.context_tokens:,} tokens", "window unknown"]
    else:
        head = [f"ctx {r.percent or 0:.0f}%", f"{r.context_tokens:,} of {r.window:,} tokens"]
    tail = [f"level {r.level}", *([r.model] if r.model else [])]
    return " · ".join(head + tail)


def write_session_doc(doc: HandoffDoc, work: SessionWork, out: Path | None = None) -> Path:
    """Write ``doc`` to ``out``, else into the session's own folder."""
    if out is None:
        folder = work.project
        if not folder or not os.path.isabs(folder) or not os.path.isdir(folder):
            shown = folder or "not recorded in the transcript"
            raise SessionHandoffError(
                f"the session's folder is not there ({shown}): write the doc elsewhere"
            )
        workspace = Path(folder)
    else:
        workspace = out.parent
    try:
        return write_handoff(doc, workspace, out)
    except OSError as exc:
        raise SessionHandoffError(f"the handoff doc could not be written: {exc}") from exc


def _redacted(doc: HandoffDoc) -> HandoffDoc:
    # A transcript may hold a key the agent printed: the doc outlives it.
    return HandoffDoc(
        task=redact(doc.task),
        files_modified=[redact(x) for x in doc.files_modified],
        decisions=[redact(x) for x in doc.decisions],
        tests_run=[redact(x) for x in doc.tests_run],
        blockers=[redact(x) for x in doc.blockers],
        next_steps=[redact(x) for x in doc.next_steps],
        context=redact(doc.context),
    )
