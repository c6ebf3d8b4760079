from __future__ import annotations

from desktop.qt_env import configure_backend, uses_qt


def test_linux_gets_pyside6_on_qt() -> None:
    env: dict[str, str] = {}
    configure_backend(env, platform="linux", is_root=False)
    assert env == {"QT_API": "pyside6", "PYWEBVIEW_GUI": "qt"}
    assert uses_qt(env, platform="linux")


def test_choices_already_made_are_kept() -> None:
    env = {"QT_API": "pyqt6", "PYWEBVIEW_GUI": "gtk"}
    configure_backend(env, platform="linux", is_root=True)
    assert env == {"QT_API": "pyqt6", "PYWEBVIEW_GUI": "gtk"}
    assert not uses_qt(env, platform="linux")


def test_root_runs_chromium_without_its_sandbox_once() -> None:
    env = {"QTWEBENGINE_CHROMIUM_FLAGS": "--disable-gpu"}
    configure_backend(env, platform="linux", is_root=True)
    configure_backend(env, platform="linux", is_root=True)
    assert env["QTWEBENGINE_CHROMIUM_FLAGS"] == "--disable-gpu --no-sandbox"


def test_a_user_keeps_the_sandbox() -> None:
    env: dict[str, str] = {}
    configure_backend(env, platform="linux", is_root=False)
    assert "QTWEBENGINE_CHROMIUM_FLAGS" not in env


def test_macos_and_windows_keep_their_native_backends() -> None:
    for platform in ("darwin", "win32"):
        env: dict[str, str] = {}
        configure_backend(env, platform=platform, is_root=True)
        assert env == {}
        assert not uses_qt(env, platform=platform)
