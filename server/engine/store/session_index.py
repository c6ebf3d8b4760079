"""What a session's search index and totals take from its runs' events: the
completed text of each message and tool output (never each delta), the tokens
and cost of ``usage_reported``, the last handoff doc of a compaction, the
checkpoints it names. The same gathering serves the live runs (``SessionIndexer``,
a sink on the run's channel) and the history already on disk (``backfill``)."""

from __future__ import annotations

import json
import logging
import sqlite3
import time
from dataclasses import dataclass, field
from pathlib import Path

from peewee import DatabaseError, SqliteDatabase

from server.core.events import (
    CheckpointCreated,
    Compacted,
    Event,
    MessageAdded,
    ModelRequested,
    RunFinished,
    TextDelta,
    ToolResult,
    TurnDiscarded,
    UsageReported,
)
from server.engine.transcript import BadLine, read_transcript

log = logging.getLogger(__name__)

# A long tool output is indexed by its head: enough to find it, not a copy of a log.
MAX_PIECE_CHARS = 8_000
# The live indexer writes when this many pieces wait, or this many seconds passed.
BATCH_PIECES = 64
BATCH_SECONDS = 1.0


@dataclass(frozen=True)
class Piece:
    kind: str  # title | user | assistant | tool_output
    text: str
    seq: int
    turn: int


def clean(text: str) -> str:
    return text[:MAX_PIECE_CHARS]


@dataclass
class Gathered:
    pieces: list[Piece] = field(default_factory=list)
    tokens: int = 0
    cost: float | None = None  # the known part
    cost_unknown: bool = False  # a response of unknown price: the total is not known
    handoff: str | None = None
    checkpoints: list[str] = field(default_factory=list)

    def merge(self, later: Gathered) -> Gathered:
        """This and what was gathered after it, as one."""
        costs = [c for c in (self.cost, later.cost) if c is not None]
        return Gathered(
            pieces=self.pieces + later.pieces,
            tokens=self.tokens + later.tokens,
            cost=sum(costs) if costs else None,
            cost_unknown=self.cost_unknown or later.cost_unknown,
            handoff=later.handoff or self.handoff,
            checkpoints=self.checkpoints + later.checkpoints,
        )

    def __bool__(self) -> bool:
        return bool(
            self.pieces or self.tokens or self.cost is not None or self.cost_unknown
            or self.handoff or self.checkpoints
        )


class Gatherer:
    """Feed a run's events in order; ``take`` what was gathered since the last take."""

    def __init__(self) -> None:
        self.turn = 0
        self.out = Gathered()
        self._text: list[str] = []  # the streamed text of the turn no message holds yet
        self._text_at = (0, 0)  # seq, turn of its first delta

    def feed(self, event: Event) -> None:
        if isinstance(event, TextDelta):
            if not self._text:
                self._text_at = (event.seq, event.turn)
            self._text.append(event.text)
        elif isinstance(event, ModelRequested):
            self._settle_text()
            self.turn = event.turn
        elif isinstance(event, MessageAdded):
            self._message(event)
        elif isinstance(event, ToolResult):
            self._add("tool_output", event.output, event.seq, event.turn)
        elif isinstance(event, UsageReported):
            self._usage(event)
        elif isinstance(event, TurnDiscarded):
            self._text = []
        elif isinstance(event, Compacted):
            if event.handoff_path:
                self.out.handoff = event.handoff_path
        elif isinstance(event, CheckpointCreated):
            self.out.checkpoints.append(event.checkpoint_id)
        elif isinstance(event, RunFinished):
            self._settle_text()

    def take(self) -> Gathered:
        taken, self.out = self.out, Gathered()
        return taken

    def _message(self, event: MessageAdded) -> None:
        role = event.message.get("role")
        text = event.message.get("text")
        if not isinstance(text, str):
            return
        if role == "user":
            self._add("user", text, event.seq, self.turn + 1)
        elif role == "assistant":
            self._text = []  # the message holds the whole text the deltas streamed
            self._add("assistant", text, event.seq, self.turn)

    def _settle_text(self) -> None:
        """Text that streamed and no message recorded (a run cancelled mid-answer)."""
        if self._text:
            self._add("assistant", "".join(self._text), *self._text_at)
            self._text = []

    def _usage(self, event: UsageReported) -> None:
        tokens = (
            event.input_tokens + event.cache_creation_input_tokens
            + event.cache_read_input_tokens + event.output_tokens
        )
        self.out.tokens += tokens
        if event.cost_usd is not None:
            self.out.cost = (self.out.cost or 0.0) + event.cost_usd
        elif tokens:
            self.out.cost_unknown = True

    def _add(self, kind: str, text: str, seq: int, turn: int) -> None:
        if text.strip():
            self.out.pieces.append(Piece(kind, clean(text), seq, turn))


def write(db: SqliteDatabase, session_id: str, run_id: str, gathered: Gathered) -> None:
    """Add what was gathered of one run to its session, in one transaction."""
    if not gathered:
        return
    with db.atomic():
        if gathered.pieces:
            db.cursor().executemany(
                "INSERT INTO session_text (session_id, run_id, seq, turn, kind, body) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                [(session_id, run_id, p.seq, p.turn, p.kind, p.text) for p in gathered.pieces],
            )
        db.execute_sql(
            "UPDATE sessions SET tokens = tokens + ?, "
            "cost = CASE WHEN ? IS NULL THEN cost ELSE COALESCE(cost, 0) + ? END, "
            "cost_unknown = MAX(cost_unknown, ?), handoff = COALESCE(?, handoff) WHERE id = ?",
            (
                gathered.tokens, gathered.cost, gathered.cost, int(gathered.cost_unknown),
                gathered.handoff, session_id,
            ),
        )
        if gathered.checkpoints:
            db.cursor().executemany(
                "INSERT OR IGNORE INTO session_checkpoints (session_id, checkpoint_id) "
                "VALUES (?, ?)",
                [(session_id, cp) for cp in gathered.checkpoints],
            )


def note_run(
    db: SqliteDatabase, session_id: str, run_id: str, model: str, created_at: float
) -> None:
    """A run joins its session: it is the session's latest activity, its model
    one of the session's, and the session's first run carries the title's hit."""
    row = db.execute_sql("SELECT models FROM sessions WHERE id = ?", (session_id,)).fetchone()
    try:
        models = json.loads(row[0]) if row else []
    except json.JSONDecodeError:
        models = []
    if model not in models:
        models.append(model)
    db.execute_sql(
        "UPDATE sessions SET models = ?, last_active = MAX(last_active, ?) WHERE id = ?",
        (json.dumps(models), created_at, session_id),
    )
    db.execute_sql(
        "UPDATE session_text SET run_id = ? WHERE session_id = ? AND kind = 'title' "
        "AND run_id = ''",
        (run_id, session_id),
    )


class SessionIndexer:
    """A sink on a live run's channel: gathers as events come, writes in
    batches (a transaction per piece would slow the stream), and at the end."""

    def __init__(self, db: SqliteDatabase, session_id: str, run_id: str) -> None:
        self._db = db
        self._session_id = session_id
        self._run_id = run_id
        self._gatherer = Gatherer()
        self._unwritten = Gathered()
        self._written = time.monotonic()

    def __call__(self, event: Event) -> None:
        self._gatherer.feed(event)
        if isinstance(event, TextDelta):
            return  # nothing to write until the text is whole
        waiting = len(self._gatherer.out.pieces)
        if (
            isinstance(event, RunFinished)
            or waiting >= BATCH_PIECES
            or (waiting and time.monotonic() - self._written >= BATCH_SECONDS)
        ):
            self.flush()

    def flush(self) -> None:
        self._written = time.monotonic()
        gathered = self._unwritten.merge(self._gatherer.take())
        try:
            write(self._db, self._session_id, self._run_id, gathered)
        except (DatabaseError, sqlite3.DatabaseError) as exc:
            # The database busy past its timeout (another process writing): the run
            # goes on, and what was not written is tried again with the next batch.
            log.warning("session index of %s not written yet: %s", self._run_id, exc)
            self._unwritten = gathered
        else:
            self._unwritten = Gathered()


def index_transcript(db: SqliteDatabase, session_id: str, run_id: str, path: Path) -> None:
    """Index a finished run from its transcript (malformed lines are skipped)."""
    if not path.is_file():
        return
    gatherer = Gatherer()
    for item in read_transcript(path):
        if not isinstance(item, BadLine):
            gatherer.feed(item)
    gatherer.feed(RunFinished(run_id=run_id, status="completed", reason=""))
    write(db, session_id, run_id, gatherer.take())


def backfill(db: SqliteDatabase) -> None:
    """Index the sessions recorded before the index existed, one run at a time."""
    # Oldest first: the index's row ids follow time, and search reads the newest first.
    sessions = db.execute_sql("SELECT id FROM sessions ORDER BY created_at, id").fetchall()
    for (session_id,) in sessions:
        _index_session(db, session_id)


def reindex_session(db: SqliteDatabase, session_id: str) -> None:
    """Index a session again from its transcripts, totals included: after a
    process died with a batch not yet written (its transcript has every event)."""
    with db.atomic():
        db.execute_sql("DELETE FROM session_text WHERE session_id = ?", (session_id,))
        db.execute_sql("DELETE FROM session_checkpoints WHERE session_id = ?", (session_id,))
        db.execute_sql(
            "UPDATE sessions SET tokens = 0, cost = NULL, cost_unknown = 0, handoff = NULL "
            "WHERE id = ?",
            (session_id,),
        )
        _index_session(db, session_id)


def _index_session(db: SqliteDatabase, session_id: str) -> None:
    found = db.execute_sql("SELECT title FROM sessions WHERE id = ?", (session_id,)).fetchone()
    if found is None:
        return
    title = found[0]
    runs = db.execute_sql(
        "SELECT id, transcript, model, created_at FROM runs WHERE session_id = ? "
        "ORDER BY created_at, id",
        (session_id,),
    ).fetchall()
    models = list(dict.fromkeys(model for _, _, model, _ in runs))
    db.execute_sql(
        "UPDATE sessions SET models = ?, last_active = COALESCE(?, created_at) WHERE id = ?",
        (json.dumps(models), runs[-1][3] if runs else None, session_id),
    )
    if title.strip():
        db.execute_sql(
            "INSERT INTO session_text (session_id, run_id, seq, turn, kind, body) "
            "VALUES (?, ?, 0, 0, 'title', ?)",
            (session_id, runs[0][0] if runs else "", clean(title)),
        )
    for run_id, transcript, _, _ in runs:
        index_transcript(db, session_id, run_id, Path(transcript))
