"""The scripted agents against the protocol's own ground truth (Appendix A.1).

The key test drives 512 generated episodes (seeds 100..163, S in {5, 10, 15, 18}, both
domains, amended brief) turn by turn against one in-process endpoint, concurrently.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterable
from typing import Any

import aiohttp
import pytest

from protocol import EpisodeSpec, Turn, Verdict
from serve.endpoint.app import start_server, stop_server
from serve.endpoint.parse import ChatRequest
from tests.serve_driver import Outcome, drive, view_fields

SEEDS = range(100, 164)
SIZES = (5, 10, 15, 18)
DOMAINS = ("procurement", "release")
FEW = range(100, 106)

Endpoint = tuple[aiohttp.ClientSession, str]


@pytest.fixture
async def endpoint() -> AsyncIterator[Endpoint]:
    runner, url = await start_server()
    async with aiohttp.ClientSession(
        connector=aiohttp.TCPConnector(limit=64), headers={"Content-Type": "application/json"}
    ) as session:
        yield session, url
    await stop_server(runner)


async def play(
    endpoint: Endpoint, specs: Iterable[EpisodeSpec], width: int = 48, **kw: Any
) -> list[tuple[EpisodeSpec, Outcome]]:
    """Every spec's episode, ``width`` at a time."""
    session, url = endpoint
    queue = list(specs)
    results: list[tuple[EpisodeSpec, Outcome]] = []

    async def worker() -> None:
        while queue:
            spec = queue.pop()
            results.append((spec, await drive(session, url, spec, **kw)))

    await asyncio.gather(*(worker() for _ in range(width)))
    return results


def failures(results: list[tuple[EpisodeSpec, Outcome]]) -> list[object]:
    return [(s.seed, s.steps, s.domain, o.errors[:3]) for s, o in results if o.errors]


def specs(seeds: Iterable[int] = FEW, steps: Iterable[int] = (10,), **kw: Any) -> list[EpisodeSpec]:
    return [EpisodeSpec(seed=s, steps=n, density=0.15, **kw) for s in seeds for n in steps]


async def test_perfect_agent_answers_every_turn_of_512_episodes(endpoint: Endpoint) -> None:
    grid = [
        EpisodeSpec(seed=s, steps=n, density=0.15, domain=d)
        for d in DOMAINS
        for n in SIZES
        for s in SEEDS
    ]
    results = await play(endpoint, grid)
    assert len(results) == 512
    assert failures(results) == []


@pytest.mark.parametrize(
    "variant",
    [
        {"arm": "checklist"},
        {"arm": "checklist", "replace": True},
        {"arm": "matched", "replace": True},
        {"arm": "raw", "thinking": True},
        {"arm": "directive"},
        {"arm": "directive", "system_role": True},
        {"arm": "ledger"},
        {"arm": "tools"},
        {"arm": "enforce"},
        {"arm": "enforce", "same_turn": True},
    ],
    ids=lambda v: "-".join(str(x) for x in v.values()),
)
async def test_perfect_agent_in_every_arm_variant(
    endpoint: Endpoint, variant: dict[str, Any]
) -> None:
    grid = specs(steps=(5, 15)) + specs(steps=(10,), domain="release")
    assert failures(await play(endpoint, grid, **variant)) == []


@pytest.mark.parametrize(
    "spec_kw",
    [
        {"brief": "original"},
        {"ambiguous_rate": 0.5},
        {"paraphrase_tier": 1},
        {"density": 0.3},
    ],
    ids=lambda v: "-".join(f"{k}={x}" for k, x in v.items()),
)
async def test_perfect_agent_on_spec_variants(endpoint: Endpoint, spec_kw: dict[str, Any]) -> None:
    density = spec_kw.pop("density", 0.15)
    grid = [EpisodeSpec(seed=s, steps=12, density=density, **spec_kw) for s in FEW]
    assert failures(await play(endpoint, grid)) == []
    assert failures(await play(endpoint, grid, arm="directive")) == []


async def test_ledger_replies_carry_a_full_ledger(endpoint: Endpoint) -> None:
    [(_, out)] = await play(endpoint, specs(seeds=[100], steps=(5,)), arm="ledger")
    assert not out.errors
    assert all(r.count("LEDGER RC-") == 5 for r in out.replies)


def _flip_eligible(turn: Turn, verdict: Verdict) -> Verdict:
    """A corrupted module: every eligible step is shown as already DONE."""
    return Verdict("done") if verdict.label == "eligible" else verdict


async def test_perfect_agent_obeys_a_corrupted_directive_and_fails(endpoint: Endpoint) -> None:
    results = await play(endpoint, specs(), arm="directive", corrupt=_flip_eligible)
    assert all(o.errors for _, o in results)
    assert {e.channel for _, o in results for _, _, e in o.errors} == {"omission"}


@pytest.mark.parametrize("same_turn", [False, True])
async def test_perfect_agent_reads_rejection_notices(endpoint: Endpoint, same_turn: bool) -> None:
    """A gate that wrongly refuses two correct bookings costs exactly those two turns: the
    agent learns from the notice that the step is not done, and every later turn is right."""
    results = await play(endpoint, specs(), arm="enforce", refuse=2, same_turn=same_turn)
    for _, out in results:
        assert len(out.errors) == 2, out.errors
        assert {e.channel for _, _, e in out.errors} <= {"omission", "refused_redo"}


async def test_always_book_fails_redo_probes_in_the_raw_arm(endpoint: Endpoint) -> None:
    results = await play(endpoint, specs(), model="scripted/always-book")
    for _, out in results:
        kinds = {(kind, e.channel) for _, kind, e in out.errors}
        assert ("redo_probe", "re_execution") in kinds
        assert ("superseded_cue", "superseded") in kinds


async def test_always_book_scores_clean_behind_the_enforcement_gate(endpoint: Endpoint) -> None:
    results = await play(
        endpoint, specs(steps=(5, 15)), model="scripted/always-book", arm="enforce"
    )
    assert failures(results) == []


async def test_synthetic_agent_is_labelled_and_errs(endpoint: Endpoint) -> None:
    grid = specs(seeds=range(100, 116))
    results = await play(endpoint, grid, model="scripted/synthetic?seed=7")
    assert {fp for _, o in results for fp in o.fingerprints} == {"synthetic"}
    errs = sum(len(o.errors) for _, o in results)
    assert 0 < errs < 5 * len(grid)
    again = await play(endpoint, grid, model="scripted/synthetic?seed=7")
    assert sorted((s.seed, o.replies) for s, o in results) == sorted(
        (s.seed, o.replies) for s, o in again
    )


async def test_synthetic_agent_rates_move_the_errors(endpoint: Endpoint) -> None:
    grid = specs()
    clean = "scripted/synthetic?fresh=0&premature=0&superseded=0&omit=0&refuse_redo=0&cite=0"
    assert failures(await play(endpoint, grid, model=clean)) == []
    results = await play(endpoint, grid, model=clean.replace("fresh=0", "fresh=1"))
    for _, out in results:
        assert {e.channel for _, _, e in out.errors} == {"re_execution"}
    disobey = clean + "&obey=0"
    results = await play(endpoint, grid, model=disobey, arm="directive")
    assert all(o.errors for _, o in results)


async def test_refusals_read_as_refusals_and_citations_as_citations(endpoint: Endpoint) -> None:
    """The perfect agent's refusals carry clear refusal language and no booking line; the
    synthetic agent's cited ref lines sit inside refusals (decline-aware case, Appendix A.2)."""
    from protocol.state.receipts import find_refs
    from scoring.replay.declines import is_citation, is_refusal

    [(_, perfect)] = await play(endpoint, specs(seeds=[101]))
    refusals = [r for r in perfect.replies if "decline" in r or "already done" in r]
    assert refusals and all(is_refusal(r) and not find_refs(r) for r in refusals)
    citing = "scripted/synthetic?fresh=0&premature=0&superseded=0&omit=0&refuse_redo=0&cite=1"
    [(_, synthetic)] = await play(endpoint, specs(seeds=[101]), model=citing)
    cited = [r for r in synthetic.replies if find_refs(r) and is_refusal(r)]
    assert cited
    for reply in cited:
        ref = find_refs(reply)[0]
        assert is_citation(reply, ref.start, ref.end)
    channels = {e.channel for _, _, e in synthetic.errors}
    assert channels <= {"re_execution", "superseded"} and channels  # primary scoring: bookings


@pytest.mark.parametrize("arm", ["raw", "checklist", "enforce"])
async def test_incremental_transcript_reading_equals_reading_it_whole(
    endpoint: Endpoint, monkeypatch: pytest.MonkeyPatch, arm: str
) -> None:
    """The endpoint reads each request's transcript from what the conversation's previous
    request carried plus what it adds (serve.endpoint.conversation); for every request of whole
    episodes the prompt tokens, the digest and the agent's view equal a count, a hash and a
    reading of the whole transcript."""
    import serve.agents as agents_mod
    import serve.endpoint.chat as chat_mod
    import serve.endpoint.conversation as conversation_mod
    from serve.agents.reading import build_view
    from serve.endpoint.tokens import count_messages

    checked: list[int] = []
    differ: list[str] = []  # collected, not raised: the handler would answer 500 instead
    hits0 = conversation_mod._CARRIED.hits
    read = conversation_mod.read_transcript

    def transcript(messages: Any) -> Any:
        got = read(messages)
        whole = ChatRequest(model="m", messages=messages, max_tokens=None, thinking=False)
        if got.prompt_tokens != count_messages(messages):
            differ.append("prompt tokens")
        if got.digest != whole.digest():
            differ.append("digest")
        return got

    def both(messages: Any, *, narration: bool = False, kept: Any = None) -> Any:
        assert kept is not None  # the handler hands the carried reading on
        view = build_view(messages, narration=narration, kept=kept)
        if view_fields(view) != view_fields(build_view(messages, narration=narration)):
            differ.append(f"view at {len(view.history)} exchanges")
        checked.append(len(view.history))
        return view

    monkeypatch.setattr(chat_mod, "read_transcript", transcript)
    monkeypatch.setattr(agents_mod, "build_view", both)
    kw: dict[str, Any] = {"refuse": 2} if arm == "enforce" else {}
    results = await play(endpoint, specs(range(100, 104)), arm=arm, **kw)
    assert differ == [] and max(checked) >= 40
    assert conversation_mod._CARRIED.hits - hits0 >= 100  # the carried path was taken
    assert arm == "enforce" or failures(results) == []  # enforce refuses correct bookings here
