"""``sparrow autonomy``: show or set the permission mode and the autonomy dial.

It writes the store the desktop app reads at every tool call, so a running app
(and its live runs that follow the shared dial) takes the change at the next call."""

from __future__ import annotations

import argparse
import json

from server.cli.context import fail, open_state
from server.core.settings import SettingsError, load_settings
from server.engine.permissions.modes import BANDS, ContractError
from server.engine.permissions.rulebook import RuleBook
from server.engine.tools.registry import default_tools


def handle(args: argparse.Namespace) -> int:
    paths, store = open_state()
    try:
        book = RuleBook(store, default_tools().names())
        # No workspace: the dial is shared by every workspace, as the app's is.
        contract = book.contract(load_settings(paths.config_file, None).autonomy)
        if args.level is not None or args.mode is not None:
            contract = book.set_contract(contract.changed(mode=args.mode, level=args.level))
    except (ContractError, SettingsError) as exc:
        return fail(str(exc), 2)
    finally:
        store.close()
    if args.json:
        print(json.dumps(contract.to_dict()))
        return 0
    print(f"mode:  {contract.mode.value}")
    print(f"level: {contract.level:.2f} ({contract.band.value})")
    ranges = " · ".join(f"{band.value} {low:.2f} to {high:.2f}" for band, low, high in BANDS)
    print(f"bands: {ranges}")
    return 0
