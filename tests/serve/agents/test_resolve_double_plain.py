"""The agents' reader takes double's plain control (``strings.USER_DOUBLE_PLAIN``, issue #46)
for the same two orders as the double it controls."""

from __future__ import annotations

from protocol import EpisodeSpec, generate
from protocol.stress.doses import user_turns
from serve.agents.resolve import resolve


def test_the_plain_double_reads_as_the_double() -> None:
    seen = 0
    for seed in (100, 101, 102, 103):
        ep = generate(EpisodeSpec(seed=seed, steps=15, density=0.3, generator=6))
        texts = {s.id: s.text for s in ep.steps}
        pressed = user_turns(ep, "double", 1.0)
        for i, t in user_turns(ep, "double_plain", 1.0).items():
            got = resolve(t.text, texts)
            assert got == resolve(pressed[i].text, texts)
            assert (got.kind, got.named, got.work_order) == ("double", t.named, t.work_order)
            seen += 1
    assert seen > 0
