"""Where Sparrow keeps its state on disk.

Everything goes through platformdirs, except when ``SPARROW_HOME`` is set: then
all of it (config, state, data, cache) lives under that one folder, which is
how tests and portable installs keep away from the user's own state.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

APP_NAME = "sparrow"
HOME_ENV = "SPARROW_HOME"


@dataclass(frozen=True)
class Paths:
    config: Path
    state: Path
    data: Path
    cache: Path

    @property
    def config_file(self) -> Path:
        return self.config / "config.toml"

    @property
    def database(self) -> Path:
        return self.state / "sessions.db"

    @property
    def transcripts(self) -> Path:
        return self.state / "transcripts"

    @property
    def checkpoints(self) -> Path:
        return self.state / "checkpoints"

    @property
    def memory(self) -> Path:
        """The memory docs: ``USER.md``, and ``workspaces/<key>/MEMORY.md``."""
        return self.data / "memory"

    @property
    def agents(self) -> Path:
        """The agents defined as files: ``NAME.agent.md``."""
        return self.config / "agents"

    def transcript(self, run_id: str) -> Path:
        return self.transcripts / f"{run_id}.jsonl"

    def own_folders(self) -> dict[Path, str]:
        """Sparrow's own folders (resolved) and what each is: never a tool's to
        write, never captured or rewound by a checkpoint, wherever they lie."""
        named = {"config": self.config, "state": self.state, "data": self.data, "cache": self.cache}
        return {path.expanduser().resolve(): f"Sparrow's own {kind} folder"
                for kind, path in named.items()}

    def ensure(self) -> Paths:
        for folder in (self.config, self.state, self.data, self.cache, self.transcripts):
            folder.mkdir(parents=True, exist_ok=True)
        return self


def resolve_paths(env: Mapping[str, str] | None = None) -> Paths:
    env = os.environ if env is None else env
    home = env.get(HOME_ENV, "").strip()
    if home:
        base = Path(home).expanduser().resolve()
        return Paths(
            config=base / "config",
            state=base / "state",
            data=base / "data",
            cache=base / "cache",
        )
    # Imported here: the Claude Code hook path must stay light and may never need it.
    import platformdirs

    return Paths(
        config=platformdirs.user_config_path(APP_NAME, appauthor=False),
        state=platformdirs.user_state_path(APP_NAME, appauthor=False),
        data=platformdirs.user_data_path(APP_NAME, appauthor=False),
        cache=platformdirs.user_cache_path(APP_NAME, appauthor=False),
    )
