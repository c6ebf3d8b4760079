"""The window's app menu: New conversation, Open workspace…, Settings, Quit.

pywebview's menus (``webview.menu``) take no keyboard shortcuts; the page
handles Ctrl+N, Ctrl+O, Ctrl+, and Ctrl+Q itself (ui/js/commands.js), so the
keys work alike in the window and, where the browser lets them, in a browser.
On Qt a tab in an action's title shows its shortcut at the right of the menu.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from webview.menu import Menu

# (title, shortcut, page command or "quit")
ITEMS: tuple[tuple[str, str, str], ...] = (
    ("New conversation", "Ctrl+N", "new-conversation"),
    ("Open workspace…", "Ctrl+O", "open-workspace"),
    ("Settings", "Ctrl+,", "settings"),
    ("Quit", "Ctrl+Q", "quit"),
)
MENU_TITLE = "Sparrow"


@dataclass(frozen=True)
class Entry:
    title: str
    command: str


def entries(*, show_shortcuts: bool) -> list[Entry]:
    return [
        Entry(f"{title}\t{keys}" if show_shortcuts else title, command)
        for title, keys, command in ITEMS
    ]


def build_menu(run: Callable[[str], None], *, show_shortcuts: bool) -> list[Menu]:
    """The app menu for ``webview.start(menu=...)``; each action calls ``run(command)``."""
    from webview.menu import Menu, MenuAction, MenuSeparator  # at run time

    items: list[MenuAction | MenuSeparator | Menu] = []
    for entry in entries(show_shortcuts=show_shortcuts):
        if entry.command == "quit":
            items.append(MenuSeparator())
        items.append(MenuAction(entry.title, _bound(run, entry.command)))
    return [Menu(MENU_TITLE, items)]


def _bound(run: Callable[[str], None], command: str) -> Callable[[], None]:
    return lambda: run(command)
