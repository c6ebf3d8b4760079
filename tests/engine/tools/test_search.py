import os
from pathlib import Path

import pytest

from server.core.settings import FileSettings, Settings
from server.engine.tools.base import Risk, ToolContext, ToolOutput
from server.engine.tools.search import Glob, Grep
from server.engine.workspace import open_workspace

pytestmark = pytest.mark.anyio


def denied(rel: str) -> bool:
    return rel == ".env" or rel.startswith(".git/") or rel == ".git"


def context(workspace: Path, read_limit: int = 1000, list_limit: int = 50) -> ToolContext:
    settings = Settings(
        files=FileSettings(read_limit_bytes=read_limit, list_limit_entries=list_limit)
    )
    return ToolContext(open_workspace(workspace), settings, denied=denied)


@pytest.fixture
def ctx(workspace: Path) -> ToolContext:
    return context(workspace)


@pytest.fixture
def tree(workspace: Path, tmp_path: Path) -> Path:
    """A small project with everything the walks must leave out."""
    files = {
        "README.md": "hello world\n",
        "src/app.py": "import os\nprint('hello')\n",
        "src/pkg/util.py": "def hello():\n    pass\n",
        "src/pkg/data.txt": "nothing here\n",
        ".env": "TOKEN=hello\n",
        ".git/config": "hello = git\n",
        "node_modules/lib/index.js": "hello\n",
        "src/__pycache__/app.pyc": "hello\n",
        ".venv/lib/site.py": "hello\n",
        "venv/x.py": "hello\n",
    }
    for rel, text in files.items():
        (workspace / rel).parent.mkdir(parents=True, exist_ok=True)
        (workspace / rel).write_text(text)
    (workspace / "logo.png").write_bytes(b"\x89PNG\x00hello")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.py").write_text("hello from outside\n")
    (workspace / "out_dir").symlink_to(outside)
    (workspace / "out_file.py").symlink_to(outside / "secret.py")
    (workspace / "src_link").symlink_to(workspace / "src")
    (workspace / "app_link.py").symlink_to(workspace / "src" / "app.py")
    (workspace / "env_link").symlink_to(workspace / ".env")
    (workspace / "dangling.py").symlink_to(workspace / "gone.py")
    return workspace


def test_risk_levels() -> None:
    assert (Grep.risk, Glob.risk) == (Risk.READ_ONLY, Risk.READ_ONLY)


async def grep(ctx: ToolContext, pattern: str, path: str | None = None) -> ToolOutput:
    args = {"pattern": pattern} | ({"path": path} if path is not None else {})
    return await Grep().run(args, ctx)


async def glob(ctx: ToolContext, pattern: str) -> ToolOutput:
    return await Glob().run({"pattern": pattern}, ctx)


async def test_grep_walks_the_tree_sorted_and_leaves_out_what_it_must(
    ctx: ToolContext, tree: Path
) -> None:
    out = await grep(ctx, r"hel+o")
    assert out.ok and not out.truncated
    lines = out.content.splitlines()
    assert lines == [
        "README.md:1: hello world",
        "app_link.py:2: print('hello')",
        "src/app.py:2: print('hello')",
        "src/pkg/util.py:1: def hello():",
        "[files not searched: 1 binary]",
    ]


async def test_grep_in_one_folder_or_file(ctx: ToolContext, tree: Path) -> None:
    out = await grep(ctx, "hello|nothing", "src/pkg")
    assert out.content.splitlines() == [
        "src/pkg/data.txt:1: nothing here",
        "src/pkg/util.py:1: def hello():",
    ]
    one = await grep(ctx, "print", "src/app.py")
    assert one.ok and one.content == "src/app.py:2: print('hello')"
    # A noise folder named outright is searched.
    named = await grep(ctx, "hello", "node_modules")
    assert named.content == "node_modules/lib/index.js:1: hello"


async def test_grep_no_match_bad_regex_and_missing_path(ctx: ToolContext, tree: Path) -> None:
    none = await grep(ctx, "absent-word", "src")
    assert none.ok and none.content == "no matches"
    bad = await grep(ctx, "(unclosed")
    assert not bad.ok and "invalid regular expression" in bad.content
    assert "missing )" in bad.content
    missing = await grep(ctx, "x", "nope")
    assert not missing.ok and "no such file or folder" in missing.content
    empty = await grep(ctx, "")
    assert not empty.ok


async def test_grep_refuses_a_denied_start(ctx: ToolContext, tree: Path) -> None:
    out = await grep(ctx, "hello", ".git")
    assert not out.ok and "hello" not in out.content


async def test_grep_caps_matches_and_cuts_long_lines(workspace: Path) -> None:
    ctx = context(workspace, read_limit=10_000, list_limit=3)
    (workspace / "many.txt").write_text("hit\n" * 5)
    out = await grep(ctx, "hit")
    assert out.truncated and out.content.splitlines()[:3] == [
        "many.txt:1: hit",
        "many.txt:2: hit",
        "many.txt:3: hit",
    ]
    assert "… 2 more matches" in out.content
    (workspace / "many.txt").write_text("x" * 1000 + "needle\n")
    long = await grep(ctx, "needle")
    assert long.content == "many.txt:1: " + "x" * 300 + "…"


async def test_grep_skips_big_and_binary_files(workspace: Path) -> None:
    ctx = context(workspace, read_limit=20)
    (workspace / "big.txt").write_text("needle " * 10)
    (workspace / "bin.dat").write_bytes(b"needle\x00")
    (workspace / "small.txt").write_text("needle\n")
    out = await grep(ctx, "needle")
    assert out.content.splitlines() == [
        "small.txt:1: needle",
        "[files not searched: 1 binary, 1 larger than 20 B]",
    ]
    alone = await grep(ctx, "needle", "big.txt")
    assert not alone.ok and "not searched" in alone.content


async def test_grep_line_numbers_follow_newlines_only(ctx: ToolContext, workspace: Path) -> None:
    (workspace / "f.txt").write_bytes(b"a\x0cb\r\nneedle\r\n")
    out = await grep(ctx, "needle$")
    assert out.content == "f.txt:2: needle"


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
async def test_walks_skip_fifos(ctx: ToolContext, workspace: Path) -> None:
    os.mkfifo(workspace / "pipe")
    (workspace / "a.txt").write_text("x\n")
    assert (await grep(ctx, "x")).content == "a.txt:1: x"
    assert (await glob(ctx, "*")).content == "a.txt"


async def test_glob_with_double_star(ctx: ToolContext, tree: Path) -> None:
    out = await glob(ctx, "**/*.py")
    assert out.ok and out.content.splitlines() == [
        "app_link.py",
        "src/app.py",
        "src/pkg/util.py",
    ]
    top = await glob(ctx, "*")
    assert top.content.splitlines() == [
        "README.md",
        "app_link.py",
        "logo.png",
        "src/",
        "src_link/",
    ]
    below = await glob(ctx, "src/**")
    assert below.content.splitlines() == [
        "src/app.py",
        "src/pkg/",
        "src/pkg/data.txt",
        "src/pkg/util.py",
    ]


async def test_glob_single_level_patterns_and_folders_only(ctx: ToolContext, tree: Path) -> None:
    assert (await glob(ctx, "src/*.py")).content == "src/app.py"
    assert (await glob(ctx, "src/p?g/[du]*.*")).content.splitlines() == [
        "src/pkg/data.txt",
        "src/pkg/util.py",
    ]
    assert (await glob(ctx, "**/")).content.splitlines() == ["src/", "src/pkg/", "src_link/"]
    assert (await glob(ctx, "./README.md")).content == "README.md"
    # Named outright, a noise folder is entered; a denied one never.
    assert (await glob(ctx, "node_modules/*/*.js")).content == "node_modules/lib/index.js"
    assert (await glob(ctx, ".git/*")).content == "no matches for .git/*"
    assert (await glob(ctx, ".env")).content == "no matches for .env"
    assert (await glob(ctx, "env_link")).content == "no matches for env_link"


async def test_glob_caps_entries(workspace: Path) -> None:
    ctx = context(workspace, list_limit=2)
    for name in "abcd":
        (workspace / f"{name}.txt").write_text(name)
    out = await glob(ctx, "*.txt")
    assert out.truncated and out.content.splitlines() == [
        "a.txt",
        "b.txt",
        "… 2 more entries not shown; narrow the search",
    ]


@pytest.mark.parametrize(
    ("pattern", "message"),
    [
        ("/etc/*", "absolute"),
        ("C:/x/*", "absolute"),
        ("../*", ".."),
        ("src/../../x", ".."),
        ("", "empty"),
        ("./", "empty"),
    ],
)
async def test_glob_refuses_patterns_that_leave(
    ctx: ToolContext, pattern: str, message: str
) -> None:
    out = await glob(ctx, pattern)
    assert not out.ok and message in out.content


async def test_glob_does_not_loop_on_a_symlink_cycle(ctx: ToolContext, workspace: Path) -> None:
    (workspace / "a").mkdir()
    (workspace / "a" / "up").symlink_to(workspace)
    (workspace / "a" / "f.py").write_text("")
    (workspace / "loop").symlink_to(workspace / "loop")
    assert (await glob(ctx, "**/*")).content.splitlines() == ["a/", "a/f.py", "a/up/"]


async def test_grep_glob_and_list_dir_pass_over_sparrow_s_own_folders(workspace: Path) -> None:
    """The home folder as the workspace: Sparrow's state is in it, and the
    search tools neither list it nor read it (the gate refuses it by path)."""
    from server.core.paths import Paths
    from server.engine.tools.files import ListDir

    own = Paths(workspace / ".config" / "sparrow", workspace / ".local" / "state" / "sparrow",
                workspace / ".local" / "share" / "sparrow", workspace / ".cache" / "sparrow")
    own.ensure()
    (own.state / "transcripts" / "r.jsonl").write_text('{"text": "needle in a transcript"}\n')
    (own.config / "config.toml").write_text("# needle\n")
    (workspace / ".local" / "state" / "other.log").write_text("needle of another app\n")
    (workspace / "notes.txt").write_text("needle in my notes\n")
    (workspace / ".config" / "other").mkdir()
    (workspace / ".config" / "other" / "app.toml").write_text("x = 1\n")
    place = open_workspace(workspace)
    place.own = own.own_folders()
    ctx = ToolContext(place, Settings())

    found = await Grep().run({"pattern": "needle", "path": "."}, ctx)
    assert "notes.txt" in found.content and ".local/state/other.log" in found.content
    assert "sparrow" not in found.content
    listed = await Glob().run({"pattern": "**/*.toml"}, ctx)
    assert ".config/other/app.toml" in listed.content and "config.toml" not in listed.content
    shown = await ListDir().run({"path": ".local/state"}, ctx)
    assert "other.log" in shown.content and "sparrow" not in shown.content
