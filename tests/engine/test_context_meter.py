"""The reference's ContextMeter figures, and the measured figure beyond it."""

from __future__ import annotations

from server.engine.context_meter import ContextMeter


def reference() -> ContextMeter:
    m = ContextMeter(8000)
    m.prompt_chars = 1200
    m.memory_chars = 200
    m.tools_chars = 400
    m.attachments_chars = 0
    m.transcript_chars = 5000
    return m


def test_the_reference_numbers() -> None:
    m = reference()
    assert m.total_chars() == 6800
    assert m.estimated_tokens() == 1700
    assert m.usage_ratio() == 0.2125
    assert m.summary() == (
        "ctx 21% · prompt 1200 · memory 200 · tools 400 · attachments 0 · transcript 5000"
    )


def test_should_compact_exactly_at_its_boundary() -> None:
    m = reference()
    assert not m.should_compact(1500)
    assert not m.should_compact(6300)  # 1700 + 6300 = 8000: does not exceed
    assert m.should_compact(6301)


def test_a_measure_replaces_the_estimate_for_what_it_covered() -> None:
    m = reference()
    m.measure(2500, m.total_chars())  # the provider counted 2,500 for those 6,800 chars
    assert m.tokens() == 2500 and m.added_since_measure() == 0
    m.transcript_chars += 400  # a reply joined: 100 tokens estimated on top
    assert m.tokens() == 2600
    figures = m.figures(reserve=1000)
    assert figures["measured_tokens"] == 2500 and figures["estimated_tokens"] == 100
    assert figures["compact_at"] == 7000 and figures["window"] == 8000
    m.forget_measure()
    assert m.tokens() == m.estimated_tokens() == 1800


def test_an_unknown_window_has_no_ratio_and_never_compacts_by_it() -> None:
    m = ContextMeter(0, transcript_chars=10_000_000)
    assert m.usage_ratio() == 0.0 and not m.should_compact(0)
    figures = m.figures(reserve=0)
    assert figures["window"] is None and figures["ratio"] is None
    assert figures["compact_at"] is None
