"""Answers to the gate's helper prompts (Appendix B.1), with optional injected defects.

* Matcher: the last user message opens with the matcher prompt (or is the matcher's
  correction request, answered for the matcher prompt before it): ``{"step", "explicit_redo"}``
  from the same resolver the agents use, on the user's own words (a forwarded block, quoted
  under a "Forwarded" line, is information, not a request: the brief's rule; issue #37).
* Compiler graph: a message ends with the graph prompt: ``{"steps": {...}}`` from the brief.
* Compiler revision: the revision prompt: ``{"cancel", "rewires", "relax"}`` from the message.

Defect rates (model-name parameters, default 0; one seeded draw per request, Appendix D.3):
``matcher_malformed`` (not valid JSON), ``matcher_wrong`` (another listed step),
``matcher_none`` (no step where one resolves: the no-resolve rate, issue #38),
``compile_empty_code`` (one completion code empty, a prerequisite's where there is one),
``compile_cancel_left`` (the cancelled step left in a rewired prerequisite list),
``compile_cycle`` (a rewire that closes a two-step cycle; in the revision answer, as the
paper traces it), ``compile_echo`` (OURS: the revision answer is the revision prompt's own
example, as a weak model echoes it).
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence

import orjson

from protocol import rule_strings, strings
from serve.agents.answer import Answer
from serve.agents.brief import parse_brief
from serve.agents.patterns import STEP_ID, template_regex
from serve.agents.reading import Message, last_user
from serve.agents.resolve import resolve
from serve.agents.revision import parse_revision
from serve.agents.transcript import own_words

__all__ = ["HELPER_PARAMS", "helper_answer"]

HELPER_PARAMS = (
    "matcher_malformed",
    "matcher_wrong",
    "matcher_none",
    "compile_empty_code",
    "compile_cancel_left",
    "compile_cycle",
    "compile_echo",
)
_REVISION_EXAMPLE = strings.COMPILER_REVISION_PROMPT.format(steps="", message="")
_ECHO = _REVISION_EXAMPLE[_REVISION_EXAMPLE.index('{"cancel"') :].split("} ", 1)[0] + "}"

_MATCHER_OPENING = strings.MATCHER_PROMPT.split("{steps}")[0]
_MATCHER_MID = strings.MATCHER_PROMPT.split("{steps}")[1].split("{message}")[0]
_MATCHER_TAIL = strings.MATCHER_PROMPT.split("{message}")[1].split("?")[0]
_REVISION_OPENING = strings.COMPILER_REVISION_PROMPT.split("{steps}")[0]
_REVISION_MID = strings.COMPILER_REVISION_PROMPT.split("{steps}")[1].split("{message}")[0]
_REVISION_TAIL = strings.COMPILER_REVISION_PROMPT.split("{message}")[1].split(":")[0]
_STEP_LINE = template_regex(strings.MATCHER_STEP_LINE, anchored=True, id=STEP_ID)


def _step_list(block: str) -> dict[str, str]:
    found = (_STEP_LINE.match(line) for line in block.splitlines())
    return {m["id"]: m["text"] for m in found if m}


def _between(text: str, start: str, mid: str, tail: str) -> tuple[str, str]:
    """The step block and the message of a prompt laid out as start, steps, mid, message,
    tail."""
    steps, _, rest = text[len(start) :].partition(mid)
    return steps, rest.split(tail)[0]


def _matcher(prompt: str, rng: random.Random, p: Mapping[str, float]) -> str:
    block, message = _between(prompt, _MATCHER_OPENING, _MATCHER_MID, _MATCHER_TAIL)
    texts = _step_list(block)
    r = resolve(own_words(message), texts)  # a forwarded block is no request (the brief)
    step = r.step if r.kind == "step" else None
    if rng.random() < p.get("matcher_malformed", 0.0):
        return f'{{"step": "{step}", "explicit_redo": '  # truncated: not JSON
    if rng.random() < p.get("matcher_wrong", 0.0):
        others = [v for v in texts if v != step]
        step = rng.choice(others) if others else step
    if step is not None and p.get("matcher_none", 0.0) and rng.random() < p["matcher_none"]:
        step = None
    return orjson.dumps({"step": step, "explicit_redo": bool(r.redo and step)}).decode()


def _graph(text: str, rng: random.Random, p: Mapping[str, float]) -> str:
    brief = parse_brief(text)
    graph = {s.id: {"deps": list(s.deps), "code": s.code} for s in brief.steps}
    if graph and rng.random() < p.get("compile_empty_code", 0.0):
        prereqs = sorted({u for s in brief.steps for u in s.deps if u in graph})
        victim = rng.choice(prereqs or sorted(graph))
        graph[victim]["code"] = ""
    answer: dict[str, object] = {"steps": graph}
    if rule_strings.BUDGET_COMPILE_PROMPT in text:  # asked for the budgets (issue #48)
        answer["budgets"] = brief.budgets
    if rule_strings.EXPIRY_COMPILE_PROMPT in text:  # asked for the expiry (issue #48)
        answer["expiry"] = brief.expiry
    if rule_strings.EXCLUSIVE_COMPILE_PROMPT in text:  # asked for the pairs (issue #48)
        answer["exclusive"] = [[a, b] for a, b in brief.exclusive.items()]
    return orjson.dumps(answer).decode()


def _revision(prompt: str, rng: random.Random, p: Mapping[str, float]) -> str:
    block, message = _between(prompt, _REVISION_OPENING, _REVISION_MID, _REVISION_TAIL)
    # drawn only when set, so the other defects' draws stay those of earlier versions
    if p.get("compile_echo") and rng.random() < p["compile_echo"]:
        return _ECHO
    texts = _step_list(block)
    rev = parse_revision(message, texts)
    rewires = {w: list(deps) for w, deps in rev.rewires.items()}
    if rev.cancel and rewires and rng.random() < p.get("compile_cancel_left", 0.0):
        first = next(iter(rewires))
        rewires[first] = [*rewires[first], rev.cancel]
    if rewires and rng.random() < p.get("compile_cycle", 0.0):
        _close_cycle(rewires, [v for v in texts if v != rev.cancel])
    relax = list(rev.relax) if rev.relax else None
    return orjson.dumps({"cancel": rev.cancel, "rewires": rewires, "relax": relax}).decode()


def _close_cycle(rewires: dict[str, list[str]], live: Sequence[str]) -> None:
    a = next(iter(rewires))
    others = [v for v in live if v != a]
    if not others:
        return
    b = rewires[a][0] if rewires[a] else others[0]
    if b not in rewires[a]:
        rewires[a] = [*rewires[a], b]
    rewires[b] = [a]


# the graph prompt ends with the paper's sentence, or with a rule's addition (issue #48)
_GRAPH_PROMPT_ENDS = (
    strings.COMPILER_GRAPH_PROMPT,
    rule_strings.BUDGET_COMPILE_PROMPT,
    rule_strings.EXPIRY_COMPILE_PROMPT,
    rule_strings.EXCLUSIVE_COMPILE_PROMPT,
)


def helper_answer(
    messages: Sequence[Message], params: Mapping[str, float], digest: str
) -> Answer | None:
    """The helper answer for a helper prompt, or None when the request is an agent turn."""
    last = last_user(messages)
    rng = random.Random(f"helper|{digest}")
    if last.strip() == strings.MATCHER_RETRY:
        last = next(
            (c for r, c in reversed(messages) if r == "user" and c.startswith(_MATCHER_OPENING)),
            last,
        )
    if last.startswith(_MATCHER_OPENING):
        return Answer(content=_matcher(last, rng, params), reasoning="Routing the message.")
    if last.startswith(_REVISION_OPENING) and _REVISION_MID in last:
        return Answer(content=_revision(last, rng, params), reasoning="Extracting the update.")
    if any(
        c.rstrip().endswith(_GRAPH_PROMPT_ENDS)
        # a list of the system messages, not a generator: no step per message (#50)
        for r, c in (*messages[-1:], *[m for m in messages if m[0] == "system"])
    ):
        text = "\n".join(c for _, c in messages)
        return Answer(content=_graph(text, rng, params), reasoning="Extracting the plan.")
    return None
