"""The window's remembered geometry: saved and loaded, and fitted to the screens."""

from __future__ import annotations

from pathlib import Path

from desktop.geometry import DEFAULT_SIZE, MIN_SIZE, Geometry, Rect, fit, load, save

SCREEN = Rect(0, 0, 1920, 1080)
RIGHT = Rect(1920, 0, 1280, 1024)


def test_saved_and_loaded(tmp_path: Path) -> None:
    assert load(tmp_path) is None
    save(tmp_path, Geometry(10, 20, 900, 700, maximized=True))
    assert load(tmp_path) == Geometry(10, 20, 900, 700, maximized=True)
    (tmp_path / "window.json").write_text("{broken")
    assert load(tmp_path) is None  # the default then, never a crash


def test_nothing_saved_is_the_default_centred() -> None:
    assert fit(None, [SCREEN]) == Geometry(None, None, *DEFAULT_SIZE)
    small = fit(None, [Rect(0, 0, 1024, 600)])
    assert (small.width, small.height) == (1024 * 9 // 10, 540)


def test_a_visible_place_is_kept_on_its_screen() -> None:
    assert fit(Geometry(2000, 100, 800, 600), [SCREEN, RIGHT]) == Geometry(2000, 100, 800, 600)


def test_a_place_off_every_screen_comes_back_to_the_primary() -> None:
    back = fit(Geometry(5000, 3000, 800, 600), [SCREEN, RIGHT])
    assert back == Geometry(1120, 480, 800, 600)


def test_too_big_or_too_small_is_made_to_fit() -> None:
    assert fit(Geometry(0, 0, 4000, 3000), [SCREEN]) == Geometry(0, 0, 1920, 1080)
    assert fit(Geometry(0, 0, 10, 10), [SCREEN]) == Geometry(0, 0, *MIN_SIZE)
    # Mostly off the right edge: pulled in whole.
    assert fit(Geometry(1800, 50, 800, 600), [SCREEN]) == Geometry(1120, 50, 800, 600)
