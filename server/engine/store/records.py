"""The rows of the store as peewee models. Tables are created by migrations,
not by peewee, so that the schema has one history."""

from __future__ import annotations

from peewee import CharField, FloatField, ForeignKeyField, IntegerField, Model, TextField


class SessionRecord(Model):
    id = CharField(primary_key=True)
    workspace = TextField()
    title = TextField(default="")
    created_at = FloatField()

    class Meta:
        table_name = "sessions"


class RunRecord(Model):
    id = CharField(primary_key=True)
    session_id: str  # the raw key column, filled by peewee from the foreign key
    session = ForeignKeyField(
        SessionRecord, column_name="session_id", backref="runs", on_delete="CASCADE"
    )
    workspace = TextField()
    task = TextField()
    model = TextField()
    status = TextField()
    reason = TextField(default="")
    turns = IntegerField(default=0)
    pid = IntegerField()
    transcript = TextField()
    created_at = FloatField()
    finished_at = FloatField(null=True)

    class Meta:
        table_name = "runs"


MODELS = [SessionRecord, RunRecord]
