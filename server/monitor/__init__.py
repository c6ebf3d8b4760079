"""The session monitor's core: context meters for Claude Code and Codex sessions,
read from their transcripts. Pure and stdlib-only, so that the Claude Code hook
process (which imports it after every tool call) starts and finishes fast; the
price data (``windows.price_window``) is imported only when a window is looked up.

- ``tail``: a cursor reading a JSONL file backwards from its end, then appends;
- ``claude_code``, ``codex``: the two transcript formats;
- ``state``: what a transcript says (``SessionState``, ``Compaction``);
- ``windows``: a model's real context window, or None (unknown);
- ``levels``: thresholds, the fallback and ``check_frequency``;
- ``reader``: a file followed over time (``SessionReader``, ``read_transcript``);
- ``discovery``: where the transcripts are;
- ``reading``: ``SessionReading``, what the surfaces show;
- ``handoff_source``: what a session did, read in full for its handoff doc.
"""
