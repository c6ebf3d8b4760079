"""What fills the model's window, by category, and when to compact.

The reference's ``ContextMeter`` (context-meter-compaction-handoff.md): the
characters of each category that goes into a request, an estimate of 0.25
tokens per character, the ratio to the window, and ``should_compact``.

Beyond the reference: once the provider reports usage, the prompt of the last
response is measured (input + cache write + cache read), and only what was
added since is estimated; ``measured_tokens`` and ``estimated_tokens`` say
which part is which. A compaction drops the measure (the next request is a
different one) until the next response measures it again.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

TOKENS_PER_CHAR: Final = 0.25
CATEGORIES: Final = ("prompt", "memory", "tools", "attachments", "transcript")


@dataclass
class ContextMeter:
    max_tokens: int  # the window; 0 when it is not known
    prompt_chars: int = 0
    memory_chars: int = 0
    tools_chars: int = 0
    attachments_chars: int = 0
    transcript_chars: int = 0
    # The provider's figure for the last request, and the characters it covered.
    measured: int | None = None
    measured_at_chars: int = 0

    def total_chars(self) -> int:
        return (
            self.prompt_chars
            + self.memory_chars
            + self.tools_chars
            + self.attachments_chars
            + self.transcript_chars
        )

    def estimated_tokens(self) -> int:
        """The reference's estimate: every character at 0.25 tokens."""
        return int(self.total_chars() * TOKENS_PER_CHAR)

    def added_since_measure(self) -> int:
        """Tokens estimated for what joined after the last measured request."""
        return int(max(0, self.total_chars() - self.measured_at_chars) * TOKENS_PER_CHAR)

    def tokens(self) -> int:
        """The best figure: measured plus what was added since, else the estimate."""
        if self.measured is None:
            return self.estimated_tokens()
        return self.measured + self.added_since_measure()

    def usage_ratio(self) -> float:
        return self.tokens() / self.max_tokens if self.max_tokens > 0 else 0.0

    def should_compact(self, reserve: int) -> bool:
        """True when the next request plus ``reserve`` would not fit the window."""
        return self.max_tokens > 0 and self.tokens() + reserve > self.max_tokens

    def measure(self, prompt_tokens: int, chars: int) -> None:
        """The provider's prompt size for a request of ``chars`` characters."""
        self.measured = prompt_tokens
        self.measured_at_chars = chars

    def forget_measure(self) -> None:
        self.measured = None
        self.measured_at_chars = 0

    def summary(self) -> str:
        return (
            f"ctx {int(self.usage_ratio() * 100)}% · prompt {self.prompt_chars} · "
            f"memory {self.memory_chars} · tools {self.tools_chars} · "
            f"attachments {self.attachments_chars} · transcript {self.transcript_chars}"
        )

    def figures(self, reserve: int) -> dict[str, Any]:
        """What a ``context_updated`` event carries: one figure for every surface."""
        window = self.max_tokens or None
        return {
            "chars": {
                "prompt": self.prompt_chars,
                "memory": self.memory_chars,
                "tools": self.tools_chars,
                "attachments": self.attachments_chars,
                "transcript": self.transcript_chars,
            },
            "tokens": self.tokens(),
            "measured_tokens": self.measured,
            "estimated_tokens": (
                self.added_since_measure() if self.measured is not None
                else self.estimated_tokens()
            ),
            "window": window,
            "reserve": reserve if window else None,
            "compact_at": max(0, window - reserve) if window else None,
            "ratio": round(self.usage_ratio(), 4) if window else None,
        }
