"""The argument parser of ``sparrow``; handlers are imported when called.

Each command group's arguments live in a module of their own (``*_parser.py``);
this one puts them together in the order ``--help`` lists them."""

from __future__ import annotations

import argparse
import importlib
from typing import Any

from server.cli.agent_parser import add_agent_command
from server.cli.checkpoints_parser import add_checkpoint_commands
from server.cli.memory_parser import add_memory_command
from server.cli.models_parser import add_model_commands
from server.cli.monitor_parser import add_monitor_commands
from server.cli.run_parser import add_compact_command, add_run_commands, add_runs_commands
from server.cli.safety_parser import add_safety_commands
from server.cli.sessions_parser import add_session_commands

DESCRIPTION = "Sparrow: a local-first agent cockpit. Run coding agents on your own folders."


def _lazy(module: str) -> Any:
    def handler(args: argparse.Namespace) -> int:
        result: int = importlib.import_module(f"server.cli.{module}").handle(args)
        return result

    return handler


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="sparrow", description=DESCRIPTION)
    parser.add_argument("--version", action="version", version="sparrow 0.1.0")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    add_run_commands(sub, _lazy)
    add_model_commands(sub, _lazy)
    add_runs_commands(sub, _lazy)
    add_monitor_commands(sub, _lazy)
    add_checkpoint_commands(sub, _lazy)
    add_safety_commands(sub, _lazy)
    add_compact_command(sub, _lazy)
    add_memory_command(sub, _lazy)
    add_agent_command(sub, _lazy)
    add_session_commands(sub, _lazy)
    return parser
