"""The adapter's parts that run without τ²-bench: the one-line import error, the dispatcher
that holds calls back per rung, and the scripted endpoint over real HTTP on loopback."""

from __future__ import annotations

import importlib.util
import json
from collections.abc import Mapping
from datetime import datetime
from types import SimpleNamespace
from typing import Any

import msgspec
import pytest
from openai import OpenAI

from tau2gate import Gate, reference_rules
from tau2gate.adapter._tau2 import Tau2Missing, require_tau2
from tau2gate.adapter.agent import _Dispatcher
from tau2gate.adapter.cli import main
from tau2gate.airline.scripted import ONLY_CANCEL, agent_reply
from tau2gate.scripted import (
    AGENT_MODEL,
    STOP,
    USER_MODEL,
    ScriptedServer,
    user_reply,
)
from tests.tau2gate_fixtures import DB, NOW


def test_a_missing_tau2_bench_is_one_line_naming_the_extra(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    with pytest.raises(Tau2Missing, match=r"pip install -e '\.\[tau2\]'"):
        require_tau2()
    assert main(["gold-replay"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "tau2-bench is not installed" in err


def test_the_chemistry_tau2_is_named_as_the_wrong_package(monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.util.find_spec("json")
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: real if name == "tau2" else None)
    with pytest.raises(Tau2Missing, match="PyPI's `tau2` is an unrelated package"):
        require_tau2()


def test_cli_bad_input_exits_2_with_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["frobnicate"])
    assert exc.value.code == 2
    assert capsys.readouterr().err.count("\n") == 1


class _Row:
    def __init__(self, data: dict[str, Any]) -> None:
        self.data = data

    def model_dump(self, mode: str = "python") -> dict[str, Any]:
        return self.data


def _toolkit() -> Any:
    db = SimpleNamespace(
        **{table: {k: _Row(v) for k, v in rows.items()} for table, rows in DB.items()}
    )
    return SimpleNamespace(db=db)


def _msg(*calls: tuple[str, dict[str, Any]]) -> Any:
    return SimpleNamespace(
        tool_calls=[
            SimpleNamespace(id=f"c{i}", name=n, arguments=a, requestor="assistant")
            for i, (n, a) in enumerate(calls)
        ]
    )


@pytest.fixture
def gate() -> Gate:
    rules = reference_rules().rules
    return Gate(msgspec.structs.replace(rules, now=datetime.fromisoformat(NOW)))


BAD = ("cancel_reservation", {"reservation_id": "OLD001"})  # ineligible
GOOD = ("cancel_reservation", {"reservation_id": "NEW001"})
READ = ("get_reservation_details", {"reservation_id": "OLD001"})


def test_enforce_holds_every_refused_write_and_never_executes_it(gate: Gate) -> None:
    d = _Dispatcher("enforce", gate, _toolkit())
    assert d.hold(_msg(GOOD)) is None and d.hold(_msg(READ)) is None
    for _ in range(2):
        held = d.hold(_msg(BAD))
        assert held is not None and held[0][1].startswith("REFUSED: this cancel_reservation")
    both = d.hold(_msg(GOOD, BAD))
    assert both is not None and both[0][1].startswith("NOT EXECUTED")
    assert (d.log.vetoes, d.log.violating_writes_dispatched) == (3, 0)
    assert d.log.denied == ["cancel-ineligible"] * 3


def test_advisory_holds_once_and_a_repeat_overrides(gate: Gate) -> None:
    d = _Dispatcher("advisory", gate, _toolkit())
    held = d.hold(_msg(BAD))
    assert held is not None and held[0][1].startswith("NOTICE:")
    assert d.hold(_msg(BAD)) is None  # the same call again: executed
    assert (d.log.notices, d.log.overrides, d.log.violating_writes_dispatched) == (1, 1, 1)


@pytest.mark.parametrize("rung", ["none", "shown"])
def test_ungated_rungs_execute_and_count_violations(gate: Gate, rung: Any) -> None:
    d = _Dispatcher(rung, gate, _toolkit())
    assert d.hold(_msg(BAD)) is None and d.hold(_msg(GOOD)) is None
    assert (d.log.violating_writes_dispatched, d.log.vetoes, d.log.notices) == (1, 0, 0)
    assert d.log.violating_call_ids == ["c0"]  # the run counts it if its result is no error


SYSTEM = "guidelines\n\n<scenario>\nReason for call:\n\tCancel EHGLP3 please.\nKnown info:\n\tI am emma_kim_9957.\nTask instructions:\n\tsecret\n</scenario>"


def test_scripted_policies() -> None:
    first = user_reply([{"role": "system", "content": SYSTEM}, {"role": "user", "content": "Hi"}])
    assert "EHGLP3" in first and "emma_kim_9957" in first and "secret" not in first
    assert user_reply([{"role": "assistant", "content": first}]) == STOP
    asked = [{"role": "assistant", "content": "Hi"}, {"role": "user", "content": first}]
    assert agent_reply(asked) == {"tool_call": ("cancel_reservation", {"reservation_id": "EHGLP3"})}
    told: list[Mapping[str, str | None]] = [
        *asked,
        {"role": "assistant", "content": None},
        {"role": "tool", "content": "ok"},
    ]
    assert "processed" in agent_reply(told)["content"]
    assert agent_reply([{"role": "user", "content": "change my flight ABC123"}]) == {
        "content": ONLY_CANCEL
    }


def test_the_scripted_endpoint_answers_an_openai_client_with_tool_calls() -> None:
    with ScriptedServer() as server:
        client = OpenAI(base_url=server.base_url, api_key="x")
        reply = client.chat.completions.create(
            model=AGENT_MODEL, messages=[{"role": "user", "content": "cancel R2D2X9 now"}]
        )
        call = reply.choices[0].message.tool_calls[0]  # type: ignore[index]
        assert reply.choices[0].finish_reason == "tool_calls"
        assert call.function.name == "cancel_reservation"  # type: ignore[union-attr]
        assert json.loads(call.function.arguments) == {"reservation_id": "R2D2X9"}  # type: ignore[union-attr]
        user = client.chat.completions.create(
            model=USER_MODEL,
            messages=[{"role": "system", "content": SYSTEM}, {"role": "assistant", "content": "x"}],
        )
        assert user.choices[0].message.content == STOP
        with pytest.raises(Exception, match="404"):
            client.chat.completions.create(model="nope", messages=[])
        assert server.requests == 3


def test_the_scripted_compiler_round_trips_the_reference_rules() -> None:
    from tau2gate.compile import compile_prompt, read_compile
    from tau2gate.scripted import COMPILE_MODEL

    with ScriptedServer() as server:
        client = OpenAI(base_url=server.base_url, api_key="x")
        reply = client.chat.completions.create(
            model=COMPILE_MODEL, messages=[{"role": "user", "content": compile_prompt("P")}]
        )
    parsed = read_compile(reply.choices[0].message.content or "")
    assert parsed.ok and parsed.rules == reference_rules().rules


def test_executed_writes_keep_only_successful_write_calls_and_llm_args_point_at_the_url() -> None:
    from tau2gate.adapter.simulate import Endpoint, executed_writes, llm_args

    def assistant(*calls: tuple[str, str, dict[str, Any]]) -> Any:
        tool_calls = [SimpleNamespace(id=i, name=n, arguments=a) for i, n, a in calls]
        return SimpleNamespace(role="assistant", tool_calls=tool_calls, is_tool_call=lambda: True)

    def tool(i: str, error: bool) -> Any:
        return SimpleNamespace(role="tool", id=i, error=error)

    messages = [
        assistant(("a", "cancel_reservation", {"reservation_id": "R1"})),
        tool("a", False),
        assistant(("b", "get_user_details", {"user_id": "u"})),
        tool("b", False),
        assistant(("c", "send_certificate", {"user_id": "u", "amount": 5})),
        tool("c", True),
    ]
    calls = executed_writes(messages)
    assert [(c.name, c.arguments) for c in calls] == [
        ("cancel_reservation", {"reservation_id": "R1"})
    ]
    model, kwargs = llm_args(Endpoint(base_url="http://h:1/v1", model="qwen3", api_key="k"))
    assert model == "openai/qwen3"
    assert kwargs == {"api_base": "http://h:1/v1", "api_key": "k", "temperature": 0.0}
