"""runner.gates.helper_models: compile and matcher caches (single flight, persistence, corruption), the
matcher's one retry and outcomes, precompile, and the call records each helper call returns."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import msgspec
import pytest

from protocol import EpisodeSpec, generate, strings
from protocol.records import CellKey, Episode, Turn
from runner.gates.helper_models import Helpers, MatchAnswer
from runner.grid.expand import Grid, Task, parse_grid
from tests.gates_fakes import FakeChat, truth


def _grid(**model: object) -> Grid:
    return parse_grid(
        {
            "run": {
                "seeds": "100-103",
                "steps": [10],
                "density": [0.3],
                "arms": ["raw", "directive", "enforce"],
                "generator": 1,  # EP's (compile keys hold the generator version)
            },
            "models": [{"name": "m", **model}, {"name": "c"}],
        }
    )


EP = generate(EpisodeSpec(seed=100, steps=10, density=0.3))
CELL = CellKey(model="m", steps=10, density=0.3, arm="directive")


def _helpers(tmp: Path, chat: FakeChat, **model: object) -> Helpers:
    return Helpers(_grid(**model), tmp, {"embedded": chat})


def _ask_turn(ep: Episode = EP) -> Turn:
    return next(t for t in ep.turns if t.kind == "ask")


async def test_compile_single_flight(tmp_path: Path) -> None:
    chat = FakeChat(truth({EP.brief: EP}), delay=0.05)
    h = _helpers(tmp_path, chat)
    results = await asyncio.gather(*(h.compile(CELL, EP) for _ in range(20)))
    assert chat.count("compiler") == 2  # one graph and one revision request, for 20 episodes
    assert all(r[0] == results[0][0] for r in results)
    assert h.stats.compile_calls == 2 and h.stats.compile_saved == 19
    calls = [c for _, records in results for c in records]
    made = [c for c in calls if not c.cached]
    assert len(made) == 2 and {c.role for c in made} == {"compiler"}
    # every other episode logs the same two calls as shared, with their real tokens
    shared = [c for c in calls if c.cached]
    assert len(shared) == 38 and all(c.shared for c in shared)
    assert all((c.prompt_tokens, c.completion_tokens) == (10, 5) for c in shared)
    # the graph prompt is the brief followed by the paper's graph prompt, one user message
    graph_call = next(
        m for r, m in chat.calls if m[0]["content"].endswith(strings.COMPILER_GRAPH_PROMPT)
    )
    assert graph_call == [
        {"role": "user", "content": EP.brief + "\n\n" + strings.COMPILER_GRAPH_PROMPT}
    ]
    assert results[0][0].graph.steps["s1"].code == EP.step("s1").code


async def test_compile_persists_across_instances(tmp_path: Path) -> None:
    chat = FakeChat(truth({EP.brief: EP}))
    first, _ = await _helpers(tmp_path, chat).compile(CELL, EP)
    files = list((tmp_path / "cache" / "compile").glob("*.json"))
    assert len(files) == 1

    def refuse(messages: object, role: str) -> str:
        raise AssertionError("a persisted compile must not be recomputed")

    h2 = _helpers(tmp_path, FakeChat(refuse))
    again, calls = await h2.compile(CELL, EP)
    assert again == first and h2.stats.disk_hits == 1 and h2.stats.compile_calls == 0
    assert [c.cached for c in calls] == [True, True]
    assert [c.prompt_tokens for c in calls] == [10, 10]  # the stored calls' real tokens
    # arms and knobs are not part of the key
    enforce = CellKey(model="m", steps=10, density=0.3, arm="enforce")
    await h2.compile(enforce, EP)
    assert h2.stats.compile_calls == 0


async def test_compile_key_fields(tmp_path: Path) -> None:
    chat = FakeChat(truth({EP.brief: EP}))
    h = _helpers(tmp_path, chat, compile_model="c")
    assert h.compiler.model_for(CELL).name == "c"
    key = h.compiler.key(h.compiler.model_for(CELL), EP)
    assert {"model", "domain", "seed", "steps", "density", "revision"} <= set(key)
    assert key["generator"] == 1  # the graph depends on the generator version
    assert "brief" not in key  # Appendix B.3: cached per (seed, S, rho), the briefs share it
    await h.compile(CELL, EP)
    original = generate(EpisodeSpec(seed=100, steps=10, density=0.3, brief="original"))
    chat.handler = truth({original.brief: original, EP.brief: EP})
    shared, _ = await h.compile(CELL, original)
    assert chat.count("compiler") == 2  # the original brief's episode shares the compile
    # compiled from the grid's first brief (amended here), whichever episode comes first
    chat2 = FakeChat(truth({original.brief: original, EP.brief: EP}))
    first, _ = await _helpers(tmp_path / "b", chat2).compile(CELL, original)
    (graph_call, _) = [m for _, m in chat2.calls]
    assert graph_call[0]["content"].startswith(EP.brief)
    assert (first.graph, first.revision) == (shared.graph, shared.revision)


async def test_compile_keyed_by_brief_on_request(tmp_path: Path) -> None:
    grid = parse_grid(
        {
            "run": {"seeds": "100", "steps": [10], "density": [0.3], "compile_cache": "brief"},
            "models": [{"name": "m"}],
        }
    )
    original = generate(EpisodeSpec(seed=100, steps=10, density=0.3, brief="original"))
    chat = FakeChat(truth({original.brief: original, EP.brief: EP}))
    h = Helpers(grid, tmp_path, {"embedded": chat})
    assert "brief" in h.compiler.key(h.compiler.model_for(CELL), EP)
    await h.compile(CELL, EP)
    await h.compile(CELL, original)
    assert chat.count("compiler") == 4  # another brief, another key
    prompt = strings.COMPILER_GRAPH_PROMPT
    graphs = [m[0]["content"] for _, m in chat.calls if m[0]["content"].endswith(prompt)]
    assert any(g.startswith(original.brief) for g in graphs)


async def test_corrupt_compile_entry_is_dropped_and_recomputed(tmp_path: Path) -> None:
    chat = FakeChat(truth({EP.brief: EP}))
    await _helpers(tmp_path, chat).compile(CELL, EP)
    (path,) = (tmp_path / "cache" / "compile").glob("*.json")
    data = json.loads(path.read_text())
    data["payload"]["graph_reply"] = data["payload"]["graph_reply"].replace("RC-", "RX-")
    path.write_text(json.dumps(data))
    chat2 = FakeChat(truth({EP.brief: EP}))
    h = _helpers(tmp_path, chat2)
    compiled, _ = await h.compile(CELL, EP)
    assert h.stats.corrupt == 1 and chat2.count("compiler") == 2
    assert compiled.graph.steps["s1"].code == EP.step("s1").code
    fixed = json.loads(path.read_text())
    assert "RC-" in fixed["payload"]["graph_reply"]
    path.write_bytes(path.read_bytes()[:40])  # a torn file
    h3 = _helpers(tmp_path, FakeChat(truth({EP.brief: EP})))
    await h3.compile(CELL, EP)
    assert h3.stats.corrupt == 1 and h3.stats.compile_calls == 2


async def test_compile_failure_reaches_every_waiter_and_is_not_cached(tmp_path: Path) -> None:
    from runner.client.endpoint import CallFailed

    def fail(messages: object, role: str) -> str:
        raise CallFailed("endpoint_error", "boom", 6)

    chat = FakeChat(fail, delay=0.01)
    h = _helpers(tmp_path, chat)
    results = await asyncio.gather(*(h.compile(CELL, EP) for _ in range(5)), return_exceptions=True)
    assert all(isinstance(r, CallFailed) for r in results)
    assert not list((tmp_path / "cache").rglob("*.json"))
    chat.handler = truth({EP.brief: EP})
    await h.compile(CELL, EP)  # the key is free again


async def test_matcher_single_flight_and_records(tmp_path: Path) -> None:
    chat = FakeChat(truth({EP.brief: EP}), delay=0.05)
    h = _helpers(tmp_path, chat)
    turn = _ask_turn()
    results = await asyncio.gather(*(h.match(CELL, EP, turn) for _ in range(8)))
    assert [a for a, _ in results] == [MatchAnswer(turn.step, False)] * 8
    assert {a.outcome for a, _ in results} == {"answered"}
    assert chat.count("matcher") == 1
    assert h.stats.matcher_calls == 1 and h.stats.matcher_saved == 7
    assert sum(len(records) for _, records in results) == 8
    assert sum(not r.cached for _, records in results for r in records) == 1
    role, messages = chat.calls[0]
    assert role == "matcher" and len(messages) == 1
    assert messages[0]["content"].startswith("You route user messages for a project agent.")
    # filler and revision turns bypass the matcher
    filler = next(t for t in EP.turns if t.kind == "filler")
    revision = next(t for t in EP.turns if t.kind == "revision")
    assert await h.match(CELL, EP, filler) == (MatchAnswer(None, False), [])
    assert await h.match(CELL, EP, revision) == (MatchAnswer(None, False), [])
    assert chat.count("matcher") == 1


async def test_matcher_persists_and_survives_a_torn_line(tmp_path: Path) -> None:
    chat = FakeChat(truth({EP.brief: EP}))
    h = _helpers(tmp_path, chat)
    turns = [t for t in EP.turns if t.kind in ("ask", "legit_redo")]
    for t in turns:
        await h.match(CELL, EP, t)
    assert chat.count("matcher") == len(turns)
    h2 = _helpers(tmp_path, FakeChat(truth({EP.brief: EP})))
    legit = next(t for t in turns if t.kind == "legit_redo")
    assert (await h2.match(CELL, EP, legit))[0] == MatchAnswer(legit.step, True)
    assert h2.stats.matcher_calls == 0 and h2.stats.disk_hits == 1
    # tear the last line of the shard holding the legit redo's answer
    key = h2.matcher.key(h2.matcher.grid.model("m"), _prompt(legit))
    shard = tmp_path / "cache" / "matcher" / f"{key[:2]}.jsonl"
    lines = shard.read_bytes().splitlines(keepends=True)
    idx = next(i for i, ln in enumerate(lines) if key.encode() in ln)
    shard.write_bytes(b"".join(lines[:idx] + lines[idx + 1 :]) + lines[idx][:30])
    chat3 = FakeChat(truth({EP.brief: EP}))
    h3 = _helpers(tmp_path, chat3)
    assert (await h3.match(CELL, EP, legit))[0] == MatchAnswer(legit.step, True)
    assert h3.stats.corrupt == 1 and chat3.count("matcher") == 1
    h4 = _helpers(tmp_path, FakeChat(truth({EP.brief: EP})))
    assert (await h4.match(CELL, EP, legit))[0] == MatchAnswer(legit.step, True)
    assert h4.stats.matcher_calls == 0 and h4.stats.corrupt == 1  # the torn half stays skipped


def _prompt(turn) -> str:  # type: ignore[no-untyped-def]
    from protocol.arms.render import render_matcher_prompt

    return render_matcher_prompt(list(EP.steps), turn.text)


@pytest.mark.parametrize("second", ["good", "bad"])
async def test_matcher_malformed_json_asks_once_more(tmp_path: Path, second: str) -> None:
    good = truth({EP.brief: EP})
    replies = iter(["Sure, it is step s4.", None if second == "good" else "still not json"])

    def handler(messages, role):  # type: ignore[no-untyped-def]
        reply = next(replies)
        return reply if reply is not None else good(messages[:1], role)

    chat = FakeChat(handler)
    h = _helpers(tmp_path, chat)
    turn = _ask_turn()
    answer, records = await h.match(CELL, EP, turn)
    assert chat.count("matcher") == 2 and h.stats.matcher_retries == 1
    _, retry = chat.calls[1]
    assert retry[1] == {"role": "assistant", "content": "Sure, it is step s4."}
    assert retry[2] == {"role": "user", "content": strings.MATCHER_RETRY}
    assert len(records) == 2
    if second == "good":
        assert (answer.step, answer.redo) == (turn.step, False) and answer.outcome == "corrected"
        assert h.stats.matcher_malformed == 0
    else:
        assert (answer.step, answer.redo) == (None, False) and answer.outcome == "malformed"
        assert h.stats.matcher_malformed == 1
    # the answer is cached either way (its outcome too): no third call
    assert (await h.match(CELL, EP, turn))[0] == answer and chat.count("matcher") == 2
    h2 = _helpers(tmp_path, FakeChat(good))
    assert (await h2.match(CELL, EP, turn))[0].outcome == answer.outcome  # read back from disk


async def test_precompile_compiles_each_key_once(tmp_path: Path) -> None:
    grid = _grid(compile_model="c")  # model m is compiled by c, as c is: one key per seed
    from runner.grid.expand import expand

    tasks: list[Task] = list(expand(grid))
    episodes = {generate(t.spec).brief: generate(t.spec) for t in tasks}
    chat = FakeChat(truth(episodes), delay=0.01)
    h = Helpers(grid, tmp_path, {"embedded": chat})
    n = await h.precompile(tasks, concurrency=3)
    assert n == 4  # 4 seeds x 2 models x 3 arms: raw needs none, the rest share by seed
    assert chat.count("compiler") == 8
    assert len(list((tmp_path / "cache" / "compile").glob("*.json"))) == 4
    # the first episode to read a precompiled compile is charged its two calls (#41: the
    # compile charged to an arm that read it), every later reader is served them
    _, calls = await h.compile(CELL, EP)
    assert chat.count("compiler") == 8 and len(calls) == 2
    assert not any(c.cached or c.shared for c in calls)
    _, again = await h.compile(CELL, EP)
    assert chat.count("compiler") == 8 and all(c.cached and c.shared for c in again)
    assert [c.prompt_tokens for c in again] == [c.prompt_tokens for c in calls]
    # the precompile's requests are in the run's helper log once, with their tokens
    log = [json.loads(x) for x in (tmp_path / "helpers.jsonl").read_text().splitlines()]
    assert len(log) == 4 and all(len(x["calls"]) == 2 for x in log)
    assert sum(c["prompt_tokens"] for x in log for c in x["calls"]) == 80


@pytest.mark.parametrize(("matcher_cache", "calls"), [("shared", 1), ("arm", 3)])
async def test_matcher_answers_are_shared_across_the_gate_arms_unless_keyed_by_arm(
    tmp_path: Path, matcher_cache: str, calls: int
) -> None:
    grid = _grid()
    grid = msgspec.structs.replace(
        grid, run=msgspec.structs.replace(grid.run, matcher_cache=matcher_cache)
    )
    chat = FakeChat(truth({EP.brief: EP}))
    h = Helpers(grid, tmp_path, {"embedded": chat})
    turn = _ask_turn()
    for arm in ("directive", "enforce", "hybrid"):
        answer, _ = await h.match(msgspec.structs.replace(CELL, arm=arm), EP, turn)
        assert answer == MatchAnswer(turn.step, False)
    assert chat.count("matcher") == calls
