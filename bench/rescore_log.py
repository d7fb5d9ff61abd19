"""The rescoring bench's synthetic log (:mod:`bench.bench_rescore`): a grid's episodes played
perfectly with injected errors, written through ``runner.rundir.logs.LogWriter`` (split from
:mod:`bench.bench_rescore`, #50). Replies: re-executions of redo probes, citations inside
refusals, refused bookings (enforce, hybrid) with and without refusal language,
stale-work-order re-displays, prose around every ref line, LEDGER lines closing every reply
of the self-ledger arm; user messages carry an arm addition and each turn one call record,
so the lines are about the size a real run writes."""

from __future__ import annotations

import multiprocessing
import random
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from protocol import (
    CallRecord,
    CellKey,
    Episode,
    EpisodeRecord,
    EpisodeSpec,
    ScriptedUser,
    Turn,
    TurnRecord,
    Verdict,
    generate,
)
from protocol.arms.table import arm_names
from protocol.state.bookings import read_execution
from runner.rundir.logs import LogWriter

__all__ = ["ARMS", "GRAPHS", "MODELS", "build_log"]

MODELS = ("bench/model-a", "bench/model-b")
GRAPHS = ((5, 0.15), (10, 0.15), (15, 0.15), (18, 0.15), (15, 0.3))
# Probability that an episode of an arm carries each injected behaviour.
ERRORS = {
    "raw": {"re_execute": 0.5, "cite": 0.1},
    "checklist": {"re_execute": 0.35, "cite": 0.1},
    "ledger": {"re_execute": 0.25},
    "directive": {"re_execute": 0.1, "cite": 0.3},
    "enforce": {"refuse": 0.3, "refuse_silent": 0.3},
    "hybrid": {"refuse": 0.2},
}
ARMS = tuple(a for a in arm_names() if a in ERRORS)  # the six arms the synthetic log plays


# Each model words its replies its own way (no two records of a grid share a reply).
OPENERS = {
    MODELS[0]: "Carried out {v}: {text}. Everything it needs is in place.",
    MODELS[1]: "**{v}** is complete -- {text}; the receipt is below.",
}


def _reply(
    ep: Episode, turn: Turn, verdict: Verdict | None, done_wo: dict[str, str], model: str
) -> str:
    v, label = turn.step, (verdict.label if verdict is not None else None)
    if v is None or label is None:
        return f"Thanks for the update -- noted ({model}). Let me know what you need next."
    s = ep.step(v)
    if label in ("eligible", "redo"):
        opener = OPENERS[model].format(v=v, text=s.text)
        return f"{opener}\n\nref {s.code}/{turn.work_order}\n\nAnything else?"
    if label == "done":
        return (
            f"Step {v} ({s.text}) was completed earlier under ref {s.code}/{done_wo[v]}; "
            "I have not booked it again."
        )
    if label == "blocked":
        assert verdict is not None
        return f"I can't do {v} yet: it still needs {', '.join(verdict.missing)}."
    return f"Step {v} was cancelled in the revision, so I will not perform it."


def _inject(ep: Episode, turn: Turn, label: str | None, how: str, reply: str) -> tuple[str, bool]:
    """(reply, refused) for an injected behaviour on a trap turn."""
    v = turn.step
    if v is None or label not in ("done", "cancelled"):
        return reply, False
    line = f"ref {ep.step(v).code}/{turn.work_order}"
    if how == "re_execute":
        return f"Done again as asked.\n{line}", False
    if how == "cite":
        return f"Step {v} is already done, no new booking needed.\n{line}", False
    if how == "refuse_silent":
        return f"Done.\n{line}", True
    return f"{v} is {label}; I decline to book it.\n{line}", True  # refuse, with language


def _play(ep: Episode, key: CellKey, how: str | None) -> tuple[TurnRecord, ...]:
    user = ScriptedUser(ep)
    done_wo: dict[str, str] = {}
    addition = f"\n\n[{key.arm}] state: " + " ".join(f"{s.id}:TODO" for s in ep.steps)
    turns = []
    injected = False
    while (turn := user.next_turn()) is not None:
        verdict = user.begin(turn)
        label = verdict.label if verdict is not None else None
        reply = _reply(ep, turn, verdict, done_wo, key.model)
        refused = False
        if how is not None and not injected and label in ("done", "cancelled"):
            reply, refused = _inject(ep, turn, label, how, reply)
            injected = True
        if key.arm == "ledger":  # the self-ledger arm ends every reply with its ledger
            word = {"done": "DONE", "cancelled": "CANCELLED"}
            ledger = (
                f"LEDGER {ep.step(v).code} {word.get(user.state.status(v), 'TODO')}"
                for v in user.state.steps
            )
            reply += "\n" + "\n".join(ledger)
        bookings = read_execution(reply, ep, turn.work_order).bookings
        admitted = () if refused else bookings
        steps = [b.step for b in admitted if b.step is not None]
        user.finish(turn, verdict, steps)
        for b in admitted:
            if b.step is not None and turn.work_order is not None:
                done_wo.setdefault(b.step, turn.work_order)
        turns.append(
            TurnRecord(
                index=turn.index, kind=turn.kind, step=turn.step, work_order=turn.work_order,
                user_text=turn.text, sent_text=turn.text + addition, arm_text=addition,
                reply=reply, admitted=admitted, refused=bookings if refused else (),
                named=turn.named, dynamic=turn.dynamic,
                calls=(CallRecord(role="agent", prompt_tokens=900 + 40 * turn.index,
                                  completion_tokens=len(reply) // 4, server_s=0.4),),
            )
        )  # fmt: skip
    return tuple(turns)


def _behaviour(arm: str, rng: random.Random) -> str | None:
    x = rng.random()
    for how, p in ERRORS[arm].items():
        if x < p:
            return how
        x -= p
    return None


def build_log(run_dir: Path, seeds: int, jobs: int = 1, generator: int = 1) -> int:
    """Write the synthetic grid's records under *run_dir*; the number written. With ``jobs``
    > 1 the (graph, model) parts are written by that many processes at once: each part is
    its own cells' files, written in the same order, so the files are the same bytes.
    ``generator``: the episodes' generator version (the bench's log: 1, as every earlier
    round measured; a run writes :data:`protocol.episode.versions.GENERATOR_VERSION`'s)."""
    parts = [(steps, density, model, generator) for steps, density in GRAPHS for model in MODELS]
    if jobs <= 1:
        return sum(_build_part(run_dir, seeds, *part) for part in parts)
    spawn = multiprocessing.get_context("spawn")  # no copy of the bench process's heap
    with ProcessPoolExecutor(max_workers=jobs, mp_context=spawn) as pool:
        futures = [pool.submit(_build_part, run_dir, seeds, *part) for part in parts]
        return sum(f.result() for f in futures)


def _build_part(
    run_dir: Path, seeds: int, steps: int, density: float, model: str, generator: int
) -> int:
    """One (graph, model) part of :func:`build_log`: its cells' records, seed by seed."""
    n = 0
    with LogWriter(run_dir) as writer:
        for seed in range(seeds):
            spec = EpisodeSpec(seed=seed, steps=steps, density=density, generator=generator)
            ep = generate(spec)
            for arm in ARMS:
                key = CellKey(model=model, steps=steps, density=density, arm=arm)
                how = _behaviour(arm, random.Random(f"{model}|{arm}|{spec}"))
                turns = _play(ep, key, how)
                writer.write(EpisodeRecord(cell=key, spec=spec, turns=turns, synthetic=True))
                n += 1
    return n
