"""Where a run's tools act: the workspace itself (``local``), the workspace
under bubblewrap (``local-hardened``), or a git worktree of its own
(``worktree``)."""
