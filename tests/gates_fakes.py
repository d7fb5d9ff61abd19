"""Test doubles for the gate tests: an in-process chat endpoint and ground-truth answers.

``FakeChat`` stands where ``runner.client.endpoint.Endpoint`` stands for ``runner.gates.helper_models.Helpers``:
an object with the same ``chat`` coroutine, answering from a handler and counting calls. The
ground-truth compiler and matcher answers are written from the generator's episode, which
only a test may read.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Mapping, Sequence

from protocol import strings
from protocol.records import CallRecord, Episode, EpisodeRecord, Role
from protocol.state.machine import Error
from protocol.user import ScriptedUser
from runner.client.endpoint import Reply

Handler = Callable[[Sequence[Mapping[str, str]], str], str]

__all__ = ["FakeChat", "graph_json", "matcher_json", "replay_errors", "revision_json", "truth"]


class FakeChat:
    """A chat endpoint in-process; ``handler(messages, role) -> content``."""

    def __init__(self, handler: Handler, *, delay: float = 0.0) -> None:
        self.handler = handler
        self.delay = delay
        self.calls: list[tuple[str, list[dict[str, str]]]] = []

    async def chat(
        self,
        model: str,
        messages: Sequence[Mapping[str, str]],
        *,
        max_tokens: int,
        role: Role = "agent",
        thinking: bool = False,
        extra: Mapping[str, object] | None = None,
        temperature: float = 0.0,
    ) -> Reply:
        self.calls.append((role, [dict(m) for m in messages]))
        if self.delay:
            await asyncio.sleep(self.delay)
        content = self.handler(messages, role)
        return Reply(
            content=content,
            reasoning="",
            call=CallRecord(
                role=role, prompt_tokens=10, completion_tokens=5, max_tokens=max_tokens
            ),
        )

    async def embed(
        self, model: str, inputs: Sequence[str]
    ) -> tuple[list[list[float]], CallRecord]:
        """The embeddings half of ``MemoryEndpoint``: a chat-only fake serves none."""
        raise AssertionError("FakeChat serves no embeddings")

    def count(self, role: str) -> int:
        return sum(r == role for r, _ in self.calls)


def graph_json(ep: Episode) -> str:
    return json.dumps({"steps": {s.id: {"deps": list(s.deps), "code": s.code} for s in ep.steps}})


def revision_json(ep: Episode) -> str:
    rev = ep.revision
    return json.dumps(
        {
            "cancel": rev.cancel,
            "rewires": {w: list(d) for w, d in rev.rewires.items()},
            "relax": list(rev.relax) if rev.relax else None,
        }
    )


def matcher_json(ep: Episode, prompt: str) -> str:
    """The scripted step of the turn whose text the matcher prompt carries."""
    message = prompt.split("USER MESSAGE: ", 1)[1].split("\nWhich single step", 1)[0]
    for t in ep.turns:  # a forged line (the spoof knob) follows the text on a new line
        if message == t.text or message.startswith(t.text + "\n"):
            return json.dumps({"step": t.step, "explicit_redo": t.kind == "legit_redo"})
    for s in ep.steps:  # dynamic re-asks quote the step's text
        if s.text in message:
            return json.dumps({"step": s.id, "explicit_redo": False})
    return json.dumps({"step": None, "explicit_redo": False})


def truth(episodes: Mapping[str, Episode]) -> Handler:
    """Perfect compiler and matcher answers for episodes keyed by their brief."""

    def handler(messages: Sequence[Mapping[str, str]], role: str) -> str:
        content = messages[0]["content"]
        if role == "compiler":
            if content.endswith(strings.COMPILER_GRAPH_PROMPT):
                return graph_json(episodes[content[: -len(strings.COMPILER_GRAPH_PROMPT) - 2]])
            for e in episodes.values():
                if e.revision.text in content:
                    return revision_json(e)
            raise AssertionError("no episode for this compiler prompt")
        for e in episodes.values():
            if all(f"- {s.id}: {s.text}\n" in content for s in e.steps):
                return matcher_json(e, content)
        raise AssertionError("no episode for this matcher prompt")

    return handler


def replay_errors(record: EpisodeRecord, ep: Episode) -> list[Error]:
    """Errors of a logged episode under the scripted user's ground truth (strict scoring);
    also checks that the logged turns are the ones the user would have served."""
    user = ScriptedUser(ep)
    errors: list[Error] = []
    for tr in record.turns:
        turn = user.next_turn()
        assert turn is not None and turn.index == tr.index and turn.text == tr.user_text
        verdict = user.begin(turn)
        executed = list(dict.fromkeys(b.step for b in tr.admitted if b.step is not None))
        errors += user.finish(turn, verdict, executed)
    assert user.next_turn() is None, "the log ends before the episode does"
    return errors
