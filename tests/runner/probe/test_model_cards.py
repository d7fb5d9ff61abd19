"""The probe's sampled re-asks at the model card's settings (runner.probe.model_cards)."""

from __future__ import annotations

from runner.grid.schema import ModelConfig
from runner.probe.model_cards import CARDS, FALLBACK, card_sampling
from runner.probe.options import ProbeOptions, sampling_for


def test_qwen3_cards_by_regime() -> None:
    instruct = ModelConfig(name="q", served="qwen3-235b-a22b-instruct-2507")
    thinking = ModelConfig(name="t", served="Qwen3-235B-A22B-Thinking-2507", regime="thinking")
    a, b = card_sampling(instruct), card_sampling(thinking)
    assert (a.temperature, a.top_p, a.top_k, a.min_p) == (0.7, 0.8, 20, 0.0)
    assert (b.temperature, b.top_p, b.top_k, b.min_p) == (0.6, 0.95, 20, 0.0)
    assert a.body() == {"top_p": 0.8, "top_k": 20, "min_p": 0.0}
    assert set(CARDS.values()) == {a, b}


def test_unknown_model_falls_back_and_says_so() -> None:
    s = card_sampling(ModelConfig(name="scripted/perfect"))
    assert s == FALLBACK and "no card" in s.source
    assert s.body() == {"top_p": 0.8}  # no top_k / min_p an API may not take


def test_flags_override_the_card_one_by_one() -> None:
    m = ModelConfig(name="q", served="qwen3-235b-a22b-instruct-2507")
    assert sampling_for(m, ProbeOptions()) == card_sampling(m)
    s = sampling_for(m, ProbeOptions(temperature=1.0))
    assert (s.temperature, s.top_p, s.top_k) == (1.0, 0.8, 20) and "flags" in s.source
    s = sampling_for(m, ProbeOptions(top_p=0.0, top_k=0))  # 0: not sent
    assert (s.temperature, s.top_p, s.top_k) == (0.7, None, None)
    assert s.body() == {"min_p": 0.0}
