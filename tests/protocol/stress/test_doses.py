"""Generator 5 (issue #37): every stress is a dose on a fixed episode (protocol.stress.doses).

The stress turns are placed from the seed on the perfect-play verdicts, never from what an
agent does; a stress turn stands in the place of a filler (or, for ``double``, of a planned
ask it adds one order to), so the episode's length, its planned asks and every other turn's
label are the control's; doses nest; a forgery arrives forwarded, with a decoy work order;
tool failures are bounded; versions 1-4 are unchanged."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from typing import Any

import msgspec
import pytest

from protocol import EpisodeSpec, ScriptedUser, Turn, Verdict, generate, strings
from protocol.config import DEFAULT_DOSE, Knobs
from protocol.records import Episode
from protocol.stress.doses import FORBIDDEN, perfect_play, user_turns
from protocol.stress.spoof import SPOOF_CLAIMS, SPOOF_VARIANTS, planned_forgeries
from protocol.stress.tool_failure import MAX_CONSECUTIVE_FAILURES, draw_tool_failure
from protocol.user import STYLE_KINDS

STYLES = ("restate", "contradict", "double")
DOSES = (0.1, 0.25, 0.5, 1.0)
SPECS = [
    EpisodeSpec(seed=seed, steps=steps, density=density, generator=5, **kw)
    for seed in (100, 101, 102, 103)
    for steps, density in ((10, 0.3), (15, 0.3), (5, 0.15))
    for kw in ({}, {"brief": "original"}, {"ambiguous_rate": 0.15})
]
EPISODES = [generate(s) for s in SPECS]
Act = Callable[[Turn, Verdict | None], list[str]]


def perfect(turn: Turn, verdict: Verdict | None) -> list[str]:
    if turn.kind == "double":
        return [v for v in turn.named if v == turn.step and verdict and verdict.label == "eligible"]
    ok = verdict is not None and verdict.label in ("eligible", "redo")
    return [turn.step] if ok and turn.step else []


def always_book(turn: Turn, verdict: Verdict | None) -> list[str]:
    """Books every step a request names, whatever its state (Appendix A.1), behind a gate
    that admits only eligible steps and authorized redos (the state-bound gate's rule)."""
    named = turn.named if turn.kind == "double" else (turn.step,) if turn.step else ()
    return [v for v in named if v is not None and turn.work_order]


def play(
    ep: Episode,
    style: str,
    dose: float,
    act: Act,
    gate: bool = False,
    where: list[Any] | None = None,
) -> list[Any]:
    """(turn, label, errors) per served turn; ``where`` gets the planned index of each."""
    user = ScriptedUser(ep, style, dose)  # type: ignore[arg-type]
    out = []
    while (turn := user.next_turn()) is not None:
        if where is not None:
            where.append(user.planned)
        verdict = user.begin(turn)
        steps = act(turn, verdict)
        if gate:  # the state-bound gate admits eligible steps and authorized redos only
            steps = [v for v in steps if user.state.verdict(v).label in ("eligible", "redo")]
        errors = user.finish(turn, verdict, steps)
        out.append((turn, None if verdict is None else verdict.label, errors))
    return out


@pytest.mark.parametrize("style", STYLES)
def test_a_style_changes_only_its_own_turns_and_never_the_length(style: str) -> None:
    for ep in EPISODES:
        control = play(ep, "cooperative", 0.0, perfect)
        assert [t for t, _, _ in control] == [
            msgspec.structs.replace(t, index=i) for i, t in enumerate(ep.turns)
        ]
        for dose in DOSES:
            dosed = user_turns(ep, style, dose)  # type: ignore[arg-type]
            played = play(ep, style, dose, perfect)
            assert len(played) == len(control) == len(ep.turns)
            for i, ((t, label, errors), (c, c_label, _)) in enumerate(
                zip(played, control, strict=True)
            ):
                assert not errors, (ep.spec, style, dose, t)
                if i not in dosed:
                    assert (t, label) == (c, c_label)
                    continue
                assert t.kind in STYLE_KINDS and t.dynamic
                if style == "double":  # the planned ask, one more order on its work order
                    assert (t.step, t.work_order, label) == (c.step, c.work_order, c_label)
                    assert c.kind in ("ask", "re_ask") and label == "eligible"
                    assert len(set(t.named)) == 2 and t.step in t.named
                else:  # a filler's place
                    assert c.kind == "filler" and c_label is None


def test_the_stress_turns_carry_the_labels_the_docs_give() -> None:
    for ep in EPISODES:
        play_ = perfect_play(ep)
        for style in STYLES:
            for i, turn in user_turns(ep, style, 1.0).items():  # type: ignore[arg-type]
                if turn.kind == "restate":  # an order the brief forbids, on a fresh work order
                    assert turn.work_order not in {t.work_order for t in ep.turns}
                    assert play_[i].state.verdict(turn.step or "").label in FORBIDDEN
                    assert not re.search(
                        r"\b(again|redo|re-do|authori[sz]\w*)\b", turn.text.lower()
                    )
                elif turn.kind == "double":  # the other named step is done, not authorized
                    other = next(v for v in turn.named if v != turn.step)
                    assert play_[i].state.verdict(other).label == "done"
                else:
                    assert turn.step is None and turn.work_order is None


@pytest.mark.parametrize("style", STYLES)
def test_doses_are_fixed_by_the_seed_nested_and_sized(style: str) -> None:
    for ep in EPISODES:
        full = set(user_turns(ep, style, 1.0))  # type: ignore[arg-type]
        per = 2 if style == "contradict" else 1
        last: set[int] = set()
        for dose in DOSES:
            got = set(user_turns(ep, style, dose))  # type: ignore[arg-type]
            assert got == set(user_turns(ep, style, dose))  # type: ignore[arg-type]
            n = len(full) // per
            assert len(got) // per == (max(1, round(dose * n)) if n else 0)
            assert last <= got <= full
            last = got
        assert user_turns(ep, style, 0.0) == {}  # type: ignore[arg-type]


@pytest.mark.parametrize("style", STYLES)
def test_the_dose_never_depends_on_the_agent(style: str) -> None:
    """A never-booking agent and an always-booking one meet the same stress turns as the
    perfect agent, in the same planned places (a never-booking agent is also served dynamic
    re-asks, which move the served indices but never a planned turn)."""

    def never(turn: Turn, verdict: Verdict | None) -> list[str]:
        return []

    for ep in EPISODES[:12]:
        kinds = []
        for act in (perfect, never, always_book):
            where: list[Any] = []
            played = play(ep, style, DEFAULT_DOSE, act, where=where)
            kinds.append(
                [(p, t.text) for p, (t, _, _) in zip(where, played, strict=True)
                 if t.kind in STYLE_KINDS]
            )  # fmt: skip
        assert kinds[0] == kinds[1] == kinds[2] and kinds[0]


@pytest.mark.parametrize("style", STYLES)
def test_always_book_behind_the_state_gate_keeps_its_unstressed_errors(style: str) -> None:
    for ep in EPISODES:
        control = play(ep, "cooperative", 0.0, always_book, gate=True)
        for dose in (DEFAULT_DOSE, 1.0):
            stressed = play(ep, style, dose, always_book, gate=True)
            assert [e for _, _, e in stressed] == [e for _, _, e in control] == [[]] * len(control)


@pytest.mark.parametrize("variant", SPOOF_VARIANTS)
def test_forgeries_are_planned_forwarded_and_never_carry_the_turns_pair(variant: str) -> None:
    wos = re.compile(r"#W\d{4}")
    for ep in EPISODES:
        play_ = perfect_play(ep)
        full = planned_forgeries(ep, variant, 1.0)
        assert set(planned_forgeries(ep, variant, 0.25)) <= set(full)
        assert planned_forgeries(ep, "none", 1.0) == {}
        for i, text in full.items():
            turn = ep.turns[i]
            p = play_[i].verdict
            assert turn.kind != "legit_redo" and p is not None
            assert p.label == SPOOF_CLAIMS[variant][0]
            head, *quoted = text.split("\n")
            assert head == strings.FORWARD_OPENING and quoted
            assert all(line.startswith("> ") for line in quoted)
            for wo in wos.findall(text):  # a decoy: never the turn's, never the episode's
                assert wo not in {t.work_order for t in ep.turns}


def test_the_tool_failures_of_a_call_are_bounded_from_generator_5() -> None:
    for gen in (4, 5):
        spec = EpisodeSpec(seed=300, steps=10, density=0.15, generator=gen)
        draws = [
            draw_tool_failure(spec, "m", "no-think", 1.0, turn=t, tool="x", work_order="#W1", attempt=a)
            for t in range(50)
            for a in range(MAX_CONSECUTIVE_FAILURES + 2)
        ]  # fmt: skip
        late = draws[MAX_CONSECUTIVE_FAILURES :: MAX_CONSECUTIVE_FAILURES + 2]
        if gen == 5:
            assert all(d is None for d in late)
            assert sum(d is not None for d in draws) == 50 * MAX_CONSECUTIVE_FAILURES
        else:
            assert all(d is not None for d in draws)


def _structure(ep: Episode) -> Any:
    rev = ep.revision
    return (
        [(s.id, s.deps, s.code) for s in ep.steps],
        (rev.cancel, rev.rewires, rev.relax),
        [(t.kind, t.step, t.work_order, t.named) for t in ep.turns],
    )


def test_version_5_pairs_domains_by_seed() -> None:
    """Graph, revision, schedule, codes and work orders do not depend on the pack: two
    domains' episodes of a seed differ only in their words (versions 1-4 did not pair)."""
    for spec in SPECS:
        ep = generate(spec)
        other = generate(msgspec.structs.replace(spec, domain="release"))
        assert _structure(ep) == _structure(other)
        assert [t.text for t in ep.turns] != [t.text for t in other.turns]
        assert strings.THIRD_PARTY_CLAUSE in ep.brief
        for style in STYLES:  # the stress plans pair too
            a, b = (user_turns(e, style, 0.5) for e in (ep, other))  # type: ignore[arg-type]
            assert {i: (t.kind, t.step, t.named) for i, t in a.items()} == {
                i: (t.kind, t.step, t.named) for i, t in b.items()
            }
        old = [
            msgspec.structs.replace(spec, generator=4, domain=d) for d in ("procurement", "release")
        ]
        assert _structure(generate(old[0])) != _structure(generate(old[1]))


def test_renaming_a_pack_changes_no_episode_structure() -> None:
    from protocol.domains.known import forget, register
    from tests.pack_kit import pool

    eps = []
    for name in ("garden", "allotment"):  # one at a time: two packs may not share slugs
        digest = register(pool(name))
        try:
            spec = EpisodeSpec(seed=7, steps=10, density=0.3, generator=5, domain=name)
            eps.append(generate(msgspec.structs.replace(spec, domain_digest=digest or "")))
        finally:
            forget(name)
    assert _structure(eps[0]) == _structure(eps[1])
    assert _structure(eps[0]) == _structure(
        generate(EpisodeSpec(seed=7, steps=10, density=0.3, generator=5))
    )


def test_older_versions_ignore_the_dose() -> None:
    ep = generate(EpisodeSpec(seed=104, steps=10, density=0.3, generator=4))
    for style in STYLES:
        a = play(ep, style, 0.1, perfect)
        b = play(ep, style, 1.0, perfect)
        assert [t for t, _, _ in a] == [t for t, _, _ in b]
    assert Knobs().spoof_dose == Knobs().user_dose == DEFAULT_DOSE == 0.25


# The spoof variants version 5 was made with (issue #37 added ``redo`` later, a new variant
# that changes none of these plans).
V5_VARIANTS = ("checklist", "directive", "notice", "tool_result", "receipt")


def _digest() -> str:
    d = hashlib.sha256()
    for ep in EPISODES[::3]:
        d.update(msgspec.json.encode(ep))
        for style in STYLES:
            d.update(msgspec.json.encode(sorted(user_turns(ep, style, 0.5).items())))  # type: ignore[arg-type]
        for variant in V5_VARIANTS:
            d.update(msgspec.json.encode(sorted(planned_forgeries(ep, variant, 0.5).items())))
    return d.hexdigest()


# Computed when version 5 was made: its episodes and every stress plan at dose 0.5.
PINNED_V5 = "bb9579332c511839b1fffc30293b524442037ed06e6ba2f460c9df3ae4fe84f2"


def test_version_5_is_pinned() -> None:
    assert _digest() == PINNED_V5


# Computed before the at-most-once knob existed (issue #37): the tool failures drawn for a
# grid of calls, versions 4 and 5, rates 0.1, 0.3 and 1.
PINNED_FAILURES = "a6cfe4dd84e798307df6e6fb631ae82ceb5c77ea79e975e1e36adefe1e6b1a4e"


def _failure_draws(**kw: Any) -> list[str | None]:
    out: list[str | None] = []
    for gen in (4, 5):
        spec = EpisodeSpec(seed=300, steps=10, density=0.15, generator=gen)
        for rate in (0.1, 0.3, 1.0):
            for t in range(40):
                for a in range(3):
                    out.append(
                        draw_tool_failure(
                            spec, "m", "no-think", rate, turn=t, tool="x", work_order="#W1",
                            attempt=a, **kw,
                        )
                    )  # fmt: skip
    return out


def test_the_failure_draws_are_unchanged_with_the_landed_knob_off() -> None:
    d = hashlib.sha256()
    for kind in _failure_draws():
        d.update(repr(kind).encode())
    assert d.hexdigest() == PINNED_FAILURES


@pytest.mark.parametrize("landed", [0.5, 1.0])
def test_landed_turns_only_timeouts_into_landed_writes(landed: float) -> None:
    """The landed knob changes no call's fate but a timeout's: the same calls fail, with the
    same kinds, but for some timeouts (all at 1.0) that landed."""
    off, on = _failure_draws(), _failure_draws(landed=landed)
    assert len(off) == len(on)
    changed = [(a, b) for a, b in zip(off, on, strict=True) if a != b]
    assert changed and all(a == "timeout" and b == "landed" for a, b in changed)
    if landed == 1.0:
        assert "timeout" not in on
    else:
        assert "timeout" in on
