"""Agents defined as files: ``<config>/agents/NAME.agent.md``, their checking,
their cron schedules, and what the store remembers of their runs."""

from server.engine.agents.definition import AgentDef, AgentFileError, check_name
from server.engine.agents.folder import AgentFolder, AgentListing, InvalidAgent
from server.engine.agents.records import AgentRecords

__all__ = [
    "AgentDef",
    "AgentFileError",
    "AgentFolder",
    "AgentListing",
    "AgentRecords",
    "InvalidAgent",
    "check_name",
]
