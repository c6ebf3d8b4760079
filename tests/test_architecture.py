"""Imports flow one way: surfaces -> runtime -> engine | monitor -> providers -> core.
The engine (running agents) and the monitor (watching other tools' agents) are
the product's two halves, side by side: neither imports the other."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
ORDER = ["server.core", "server.providers", ("server.engine", "server.monitor"), "server.runtime"]
SURFACES = ["server.web", "server.cli", "desktop"]
HALVES = [("server.engine", "server.monitor"), ("server.monitor", "server.engine")]


def _under(module: str, prefix: str) -> bool:
    return module == prefix or module.startswith(prefix + ".")


def layer_of(module: str) -> int | None:
    for index, layer in enumerate(ORDER):
        prefixes = (layer,) if isinstance(layer, str) else layer
        if any(_under(module, prefix) for prefix in prefixes):
            return index
    for prefix in SURFACES:
        if module == prefix or module.startswith(prefix + "."):
            return len(ORDER)
    return None


def imports_of(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
    return found


def module_name(path: Path) -> str:
    return ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")


def test_no_import_points_back_up_the_layers() -> None:
    files = [*ROOT.joinpath("server").rglob("*.py"), *ROOT.joinpath("desktop").rglob("*.py")]
    assert len(files) > 20
    wrong = []
    for path in files:
        source = module_name(path)
        if source in ("server", "desktop"):
            continue
        own = layer_of(source)
        assert own is not None, source
        for target in imports_of(path):
            other = layer_of(target)
            if other is not None and other > own:
                wrong.append(f"{source} imports {target}")
            if own == other == len(ORDER) and not _may_use(source, target):
                wrong.append(f"surface {source} imports surface {target}")
            for one, two in HALVES:
                if _under(source, one) and _under(target, two):
                    wrong.append(f"{source} imports {target}: the two halves stay apart")
    assert wrong == []


def _may_use(source: str, target: str) -> bool:
    """A surface uses only itself; the desktop shell also hosts the web server."""
    if source.startswith("desktop") and target.startswith("server.web"):
        return True
    return any(source.startswith(p) and target.startswith(p) for p in SURFACES)


def test_the_engine_never_prints() -> None:
    for path in ROOT.joinpath("server", "engine").rglob("*.py"):
        calls = [
            n
            for n in ast.walk(ast.parse(path.read_text()))
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "print"
        ]
        assert calls == [], f"{path} prints: display belongs to the surfaces"


HEAVY = ("pygit2", "pydantic_ai", "anthropic", "openai", "genai_prices", "httpx2", "pydantic")


@pytest.mark.parametrize("modules", ["server.web.app, server.web.serve", "server.cli.parser"])
def test_starting_leaves_heavy_libraries_for_later(modules: str) -> None:
    """pygit2 (~20 MB resident) loads with the first checkpoint, the model
    libraries (~1.5 s, ~100 MB) with the first real model call: the window's
    start-up and memory goals are measured against a bare webview."""
    code = f"import sys, {modules}; print(sorted(set({HEAVY!r}) & set(sys.modules)))"
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "[]"


RUN_PATH = (
    "server.engine.loop",
    "server.engine.tools.registry",
    "server.providers.base",
    "server.runtime.run_parts",
    "server.runtime.attaching",
    "keyring",
)


def test_the_server_starts_without_the_run_path() -> None:
    """A run's loop, tools, provider and attachment readers load with the first
    run or rule, and the credentials store with the first model lookup: the
    server's import is on the window's start-up path (bench_before)."""
    code = (
        "import sys, server.web.app, server.web.serve\n"
        "server.web.app.create_app(token='t' * 32, port=1)\n"
        f"print(sorted(set({RUN_PATH!r}) & set(sys.modules)))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "[]"
