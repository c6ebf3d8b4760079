"""The checkpoint index row (table ``checkpoints``, created by migration
``m002_checkpoints``). Lists are stored as JSON text."""

from __future__ import annotations

from peewee import BooleanField, CharField, FloatField, IntegerField, Model, TextField


class CheckpointRecord(Model):
    id = CharField(primary_key=True)
    workspace = TextField()
    run_id = TextField()
    turn = IntegerField()
    tool = TextField()
    reason = TextField(default="")
    created_at = FloatField()
    commit_id = TextField()
    files_changed = TextField(default="[]")
    bytes_stored = IntegerField(default=0)
    duration_ms = IntegerField(default=0)
    skipped = TextField(default="[]")
    baseline = BooleanField(default=False)  # m004

    class Meta:
        table_name = "checkpoints"
