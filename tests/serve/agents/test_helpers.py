"""Matcher and compiler answers against the generator, and the injected compile defects."""

from __future__ import annotations

from collections.abc import AsyncIterator

import openai
import orjson
import pytest

from protocol import EpisodeSpec, ScriptedUser, TaskState, generate, strings
from protocol.arms.render import render_matcher_prompt, render_revision_prompt
from serve.endpoint.app import start_server, stop_server
from tests.sdk_messages import sdk_messages

SPECS = [
    EpisodeSpec(seed=s, steps=n, density=0.15, domain=d, ambiguous_rate=0.3)
    for s in (100, 101, 102)
    for n in (5, 18)
    for d in ("procurement", "release")
]


@pytest.fixture
async def client() -> AsyncIterator[openai.AsyncOpenAI]:
    runner, url = await start_server()
    async with openai.AsyncOpenAI(base_url=url, api_key="none", max_retries=0) as c:
        yield c
    await stop_server(runner)


async def ask(client: openai.AsyncOpenAI, model: str, messages: list[dict[str, str]]) -> str:
    r = await client.chat.completions.create(model=model, messages=sdk_messages(messages))
    return r.choices[0].message.content or ""


async def test_matcher_agrees_with_the_scripted_step(client: openai.AsyncOpenAI) -> None:
    for spec in SPECS:
        ep = generate(spec)
        user = ScriptedUser(ep)
        while (turn := user.next_turn()) is not None:
            user.begin(turn)
            user.finish(turn, None, [])
            if turn.kind in ("filler", "revision"):
                continue  # bypassed by schedule metadata, as in the paper
            prompt = render_matcher_prompt(list(ep.steps), turn.text)
            got = orjson.loads(
                await ask(client, "scripted/perfect", [{"role": "user", "content": prompt}])
            )
            assert got == {"step": turn.step, "explicit_redo": turn.kind == "legit_redo"}, turn


async def test_matcher_answers_the_papers_example_and_the_retry(client: openai.AsyncOpenAI) -> None:
    ep = generate(EpisodeSpec(seed=100, steps=5, density=0.15))
    prompt = render_matcher_prompt(
        list(ep.steps), "Send the RFQ out to the shortlisted vendors (#W4242)."
    )
    first = await ask(client, "scripted/perfect", [{"role": "user", "content": prompt}])
    assert orjson.loads(first) == {"step": None, "explicit_redo": False}
    retry = [
        {"role": "user", "content": prompt},
        {"role": "assistant", "content": "s1?"},
        {"role": "user", "content": strings.MATCHER_RETRY},
    ]
    assert orjson.loads(await ask(client, "scripted/perfect", retry)) == orjson.loads(first)


async def test_matcher_defects(client: openai.AsyncOpenAI) -> None:
    ep = generate(EpisodeSpec(seed=101, steps=10, density=0.15))
    turn = next(t for t in ep.turns if t.kind == "ask")
    msgs = [{"role": "user", "content": render_matcher_prompt(list(ep.steps), turn.text)}]
    with pytest.raises(orjson.JSONDecodeError):
        orjson.loads(await ask(client, "scripted/perfect?matcher_malformed=1", msgs))
    wrong = orjson.loads(await ask(client, "scripted/perfect?matcher_wrong=1", msgs))
    assert wrong["step"] != turn.step and wrong["step"] in {s.id for s in ep.steps}


def graph_of(reply: str) -> dict[str, dict[str, object]]:
    steps: dict[str, dict[str, object]] = orjson.loads(reply)["steps"]
    return steps


async def test_compiler_graph_is_the_generator_graph(client: openai.AsyncOpenAI) -> None:
    for spec in SPECS:
        ep = generate(spec)
        truth = {s.id: {"deps": list(s.deps), "code": s.code} for s in ep.steps}
        in_user = [{"role": "user", "content": f"{ep.brief}\n\n{strings.COMPILER_GRAPH_PROMPT}"}]
        split = [
            {"role": "system", "content": ep.brief},
            {"role": "user", "content": strings.COMPILER_GRAPH_PROMPT},
        ]
        assert graph_of(await ask(client, "scripted/perfect", in_user)) == truth
        assert graph_of(await ask(client, "scripted/always-book", split)) == truth


async def test_compiler_revision_is_the_generator_revision(client: openai.AsyncOpenAI) -> None:
    for spec in SPECS:
        ep = generate(spec)
        prompt = render_revision_prompt(list(ep.steps), ep.revision.text)
        got = orjson.loads(
            await ask(client, "scripted/perfect", [{"role": "user", "content": prompt}])
        )
        rev = ep.revision
        assert got == {
            "cancel": rev.cancel,
            "rewires": {w: list(p) for w, p in rev.rewires.items()},
            "relax": list(rev.relax) if rev.relax else None,
        }


async def test_compile_defects(client: openai.AsyncOpenAI) -> None:
    ep = generate(EpisodeSpec(seed=102, steps=10, density=0.15))
    graph_msgs = [{"role": "user", "content": f"{ep.brief}\n\n{strings.COMPILER_GRAPH_PROMPT}"}]
    graph = graph_of(await ask(client, "scripted/perfect?compile_empty_code=1", graph_msgs))
    empty = [v for v, e in graph.items() if e["code"] == ""]
    assert len(empty) == 1
    assert any(empty[0] in s.deps for s in ep.steps)  # a prerequisite: it over-blocks

    rev_msgs = [
        {"role": "user", "content": render_revision_prompt(list(ep.steps), ep.revision.text)}
    ]
    left = orjson.loads(await ask(client, "scripted/perfect?compile_cancel_left=1", rev_msgs))
    assert any(ep.revision.cancel in deps for deps in left["rewires"].values())

    cyc = orjson.loads(await ask(client, "scripted/perfect?compile_cycle=1", rev_msgs))
    state = TaskState({s.id: s.deps for s in ep.steps})
    state.apply_revision(cyc["cancel"], cyc["rewires"], tuple(cyc["relax"]))
    assert not state.is_acyclic()
    clean = TaskState({s.id: s.deps for s in ep.steps})
    clean.apply_revision(ep.revision.cancel, ep.revision.rewires, ep.revision.relax)
    assert clean.is_acyclic()


async def test_helper_answers_of_the_synthetic_agent_are_labelled(
    client: openai.AsyncOpenAI,
) -> None:
    ep = generate(EpisodeSpec(seed=100, steps=5, density=0.15))
    msgs = [{"role": "user", "content": f"{ep.brief}\n\n{strings.COMPILER_GRAPH_PROMPT}"}]
    r = await client.chat.completions.create(
        model="scripted/synthetic", messages=sdk_messages(msgs)
    )
    assert r.system_fingerprint == "synthetic"
