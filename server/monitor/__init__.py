"""The session monitor's core: context meters for Claude Code and Codex sessions,
read from their transcripts. Pure and stdlib-only, so that the Claude Code hook
process (which imports it after every tool call) starts and finishes fast.

- ``tail``: a cursor reading a JSONL file backwards from its end, then appends;
- ``claude_code``, ``codex``: the two transcript formats;
- ``state``: what a transcript says (``SessionState``, ``Compaction``);
- ``levels``: thresholds, model windows, the fallback and ``check_frequency``;
- ``reader``: a file followed over time (``SessionReader``, ``read_transcript``);
- ``discovery``: where the transcripts are;
- ``reading``: ``SessionReading``, what the surfaces show.
"""
