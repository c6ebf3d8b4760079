"""The app menu, built with pywebview's own menu classes."""

from __future__ import annotations

from webview.menu import Menu, MenuAction, MenuSeparator

from desktop.app_menu import build_menu


def test_the_menu_runs_each_command() -> None:
    ran: list[str] = []
    (menu,) = build_menu(ran.append, show_shortcuts=True)
    assert isinstance(menu, Menu) and menu.title == "Sparrow"
    actions = [item for item in menu.items if isinstance(item, MenuAction)]
    assert [a.title for a in actions] == [
        "New conversation\tCtrl+N",
        "Open workspace…\tCtrl+O",
        "Settings\tCtrl+,",
        "Quit\tCtrl+Q",
    ]
    assert isinstance(menu.items[3], MenuSeparator)  # Quit stands apart
    for action in actions:
        action.function()
    assert ran == ["new-conversation", "open-workspace", "settings", "quit"]
    (plain,) = build_menu(ran.append, show_shortcuts=False)
    assert plain.items[0].title == "New conversation"  # type: ignore[union-attr]
