"""Rows of the permission rules and the preferences (tables created by
migration ``m003_permissions``)."""

from __future__ import annotations

from peewee import CharField, FloatField, IntegerField, Model, TextField


class RuleRecord(Model):
    id = CharField(primary_key=True)
    effect = TextField()
    tool = TextField()
    pattern = TextField(null=True)
    scope = TextField()
    workspace = TextField(null=True)
    session_id = TextField(null=True)
    provider = TextField(null=True)
    surface = TextField(null=True)
    source = TextField(default="user")
    hits = IntegerField(default=0)
    last_used_at = FloatField(null=True)
    created_at = FloatField()

    class Meta:
        table_name = "rules"


class PreferenceRecord(Model):
    key = CharField(primary_key=True)
    value = TextField()
    updated_at = FloatField()

    class Meta:
        table_name = "preferences"
