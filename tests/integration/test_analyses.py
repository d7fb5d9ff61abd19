"""Worked tests of the log analyses (Tables 4, 10 and 11) on hand-built records whose
answers are known by construction (tests/scoring_records.py plays the policies)."""

from __future__ import annotations

import json
from pathlib import Path

import msgspec
import pytest
from typer.testing import CliRunner

from protocol.arms.render import render_directive
from protocol.records import (
    AccuracyRecord,
    CompiledRevisionRecord,
    CompiledStepRecord,
    CompileRecord,
    CorruptionEvent,
    Episode,
    EpisodeRecord,
    Turn,
    ValidatorRecord,
)
from protocol.state.machine import Verdict
from scoring.analyses.corruption_replay import CORRUPTION, corruption_lines
from scoring.analyses.obedience import OBEDIENCE, obedience_lines
from scoring.analyses.omission_attribution import attribute_overblock, attribution_lines
from scoring.analyses.wording_columns import wording_lines
from scoring.replay.directive_kinds import parse_directive
from scoring.replay.episode_score import score_episode
from tests.scoring_records import Act, build, cell, episode, perfect, ref_line

# Seed 0, S = 6, generator 1 (scoring_records.episode's default): the turns that resolve to a
# step and their verdicts under a perfect agent:
#   1 premature s4 blocked (needs s2)  15 ask s1  19 ask s2  22 revision (cancel s5,
#   rewire s3 -> s1, s2)  25 premature s6 blocked  27 redo_probe s2 done  28 superseded_cue s5
#   cancelled  29 ask s3  30 redo_probe s1 done  35 re_ask s4  39 re_ask s6  42 legit_redo s3


@pytest.fixture(scope="module")
def ep() -> Episode:
    e = episode(seed=0, steps=6)
    assert e.revision.cancel == "s5" and e.step("s3").deps == ("s1", "s5")
    return e


def _with_directives(record: EpisodeRecord, ep: Episode) -> EpisodeRecord:
    """Every turn that resolves to a step gets the directive of its realized verdict."""
    score = score_episode(record, ep)
    turns = []
    for t, s in zip(record.turns, score.primary.turns, strict=True):
        if t.step is not None and s.label in ("eligible", "blocked", "done", "cancelled", "redo"):
            missing = tuple(x for x in ep.step(t.step).deps) if s.label == "blocked" else ()
            t = msgspec.structs.replace(
                t,
                directive=render_directive(t.step, Verdict(s.label, missing)),  # type: ignore[arg-type]
            )
        turns.append(t)
    return msgspec.structs.replace(record, turns=tuple(turns))


def _pairs(records: list[EpisodeRecord], ep: Episode) -> list:  # type: ignore[type-arg]
    return [(r, score_episode(r, ep)) for r in records]


def test_directive_lines_read_back() -> None:
    line = render_directive("s6", Verdict("blocked", ("s2", "s4")))
    d = parse_directive(f"ask text\n\n{line}")
    assert d is not None and (d.kind, d.step, d.missing) == ("blocked", "s6", ("s2", "s4"))
    assert parse_directive("no directive here") is None and parse_directive(None) is None


def _directive_records(ep: Episode) -> list[EpisodeRecord]:
    key = cell("directive", ep.spec)
    # turn 27: the agent books s2 again against an already DONE directive
    book = Act(f"Booking it again.\n{ref_line(ep, 's2', ep.turns[27].work_order)}")
    bad = _with_directives(build(ep, key, perfect(ep, {27: book})), ep)
    good = _with_directives(build(ep, key, perfect(ep)), ep)
    return [bad, good]


def test_table_11_obedience(ep: Episode) -> None:
    (line,) = obedience_lines(_pairs(_directive_records(ep), ep))
    by = {k.kind: k for k in line.kinds}
    # two records: done 27, 30; blocked 1, 25; cancelled 28; redo 42; eligible 15 19 29 35 39
    assert {k: (c.n, c.obeyed) for k, c in by.items()} == {
        "done": (4, 3),
        "blocked": (4, 4),
        "cancelled": (2, 2),
        "redo": (2, 2),
        "eligible": (10, 10),
    }
    assert (line.trap_n, line.trap_obeyed) == (10, 9)
    assert line.trap_rate == pytest.approx(0.9)
    lo, hi = line.trap_ci
    assert lo < 0.9 < hi and hi < 1.0
    assert (line.episodes, line.zero_disobedience) == (2, 1)
    assert by["redo"].trap is False and by["done"].trap is True


def _compile(ep: Episode, **changes: object) -> CompileRecord:
    graph = tuple(CompiledStepRecord(id=s.id, deps=s.deps, code=s.code) for s in ep.steps)
    rev = CompiledRevisionRecord(
        cancel=ep.revision.cancel, rewires=dict(ep.revision.rewires), relax=ep.revision.relax
    )
    record = CompileRecord(
        model="scripted/golden",
        graph=graph,
        revision=rev,
        validator=ValidatorRecord(passed=True),
        accuracy=AccuracyRecord(
            exact=True, steps=6, dep=6, code=6, cancel=True, rewire=True, relax=True
        ),
        enforcing=True,
    )
    return msgspec.structs.replace(record, **changes)


def _set(record: EpisodeRecord, index: int, **fields: object) -> EpisodeRecord:
    turns = tuple(
        msgspec.structs.replace(t, **fields) if t.index == index else t for t in record.turns
    )
    return msgspec.structs.replace(record, turns=turns)


def _enforce_records(ep: Episode) -> list[EpisodeRecord]:
    key = cell("enforce", ep.spec)
    eligible = render_directive
    wo = {t.index: t.work_order for t in ep.turns}
    # 1. the agent declines s1 at turn 15 under ELIGIBLE, re-displaying turn 1's receipt
    declined = build(ep, key, perfect(ep, {15: Act(f"Already handled: ref RC-3458/{wo[1]}")}))
    declined = _set(declined, 15, directive=eligible("s1", Verdict("eligible")))
    # 2. at turn 35 it books s4 with a new work order that is not the turn's
    stray = "#W0001"
    assert stray not in wo.values()
    wrong = build(ep, key, perfect(ep, {35: Act(f"Done.\nref {ep.step('s4').code}/{stray}")}))
    wrong = _set(wrong, 35, directive=eligible("s4", Verdict("eligible")))
    # 3. at turn 29 the compiled state keeps cancelled s5 in s3's list: BLOCKED, and the
    #    gate refuses the agent's correct ref
    good = Act(f"Done.\n{ref_line(ep, 's3', wo[29])}", refuse=("s3",))
    blocked = build(ep, key, perfect(ep, {29: good}))
    blocked = _set(blocked, 29, directive=render_directive("s3", Verdict("blocked", ("s5",))))
    rev = CompiledRevisionRecord(cancel="s5", rewires={}, relax=ep.revision.relax)
    flagged = ValidatorRecord(passed=False, flags=("cancelled_in_deps",), cancelled_in_deps=("s3",))
    acc = AccuracyRecord(exact=False, steps=6, dep=6, code=6, cancel=True, rewire=False, relax=True)
    return [
        msgspec.structs.replace(declined, compile=_compile(ep)),
        msgspec.structs.replace(wrong, compile=_compile(ep)),
        msgspec.structs.replace(
            blocked, compile=_compile(ep, revision=rev, validator=flagged, accuracy=acc)
        ),
    ]


def test_table_10_attribution(ep: Episode) -> None:
    records = _enforce_records(ep)
    (line,) = attribution_lines(_pairs(records, ep))
    assert line.episodes == 3 and line.omissions == 3
    assert (line.declined, line.wrong_ref, line.overblock, line.other) == (1, 1, 1, 0)
    assert line.correct_ref == 1
    assert line.root_causes == {"empty": 0, "cancelled": 1, "rewire": 0, "other": 0}
    assert (line.defect, line.differs, line.overblock_in_passing) == (1, 1, 0)
    # the same records in a raw cell are not the enforcement gate's: no line
    raw = [msgspec.structs.replace(r, cell=cell("raw", ep.spec), compile=None) for r in records]
    assert attribution_lines(_pairs(raw, ep)) == []


def test_overblock_root_causes(ep: Episode) -> None:
    d = parse_directive(render_directive("s6", Verdict("blocked", ("s4",))))
    assert d is not None
    graph = tuple(
        CompiledStepRecord(id=s.id, deps=s.deps, code="" if s.id == "s4" else s.code)
        for s in ep.steps
    )
    assert attribute_overblock("s6", d, _compile(ep, graph=graph), ep) == "empty"
    # s6 needs s2, s3, s4 in the generator graph; a compiled rewire adding s1 closes no gap
    rewire = CompiledRevisionRecord(cancel="s5", rewires={"s6": ("s1", "s2")})
    d1 = parse_directive(render_directive("s6", Verdict("blocked", ("s1",))))
    assert d1 is not None
    assert attribute_overblock("s6", d1, _compile(ep, revision=rewire), ep) == "rewire"
    assert attribute_overblock("s6", d, _compile(ep), ep) == "other"
    assert attribute_overblock("s6", d, None, ep) == "other"


def test_table_4_columns() -> None:
    ep = episode(seed=0, steps=6, ambiguous_rate=0.15, generator=3)
    probe = next(t for t in ep.turns if t.kind == "ambiguous")
    ask = next(t for t in ep.turns if t.kind == "ask" and t.step == "s1")
    key = cell("directive", ep.spec)

    def book_first(turn: Turn, verdict: Verdict | None) -> Act:
        # version 3 names the two eligible steps at run time (turn.named)
        return Act(f"Doing the first.\n{ref_line(ep, turn.named[0], turn.work_order)}")

    booked = build(ep, key, perfect(ep, {probe.index: book_first}))
    # the agent omits s1 on its ask; the matcher had resolved the ask to s5
    omitted = build(ep, key, perfect(ep, {ask.index: Act("Noted.")}))
    omitted = _set(omitted, ask.index, matched_step="s5")
    clean = build(ep, key, perfect(ep))
    (line,) = wording_lines(_pairs([booked, omitted, clean], ep))
    assert line.episodes == 3
    assert (line.omission_failures, line.misrouted) == (1, 1)
    n_probes = sum(t.kind == "ambiguous" for r in (booked, omitted, clean) for t in r.turns)
    assert line.ambiguous == n_probes >= 3 and line.ambiguous_booked == 1
    # agreement: only the turns the matcher ran on (here: the one turn given a match)
    assert (line.matched_turns, line.matched_agree, line.agreement) == (0, 0, None)
    agreed = _set(omitted, ask.index, matched_step="s1", matched_redo=False)
    (line,) = wording_lines(_pairs([agreed], ep))
    assert (line.matched_turns, line.matched_agree, line.agreement) == (1, 1, 1.0)
    missed = _set(omitted, ask.index, matched_step="s5", matched_redo=False)
    (line,) = wording_lines(_pairs([missed], ep))
    assert (line.matched_turns, line.matched_agree, line.agreement) == (1, 0, 0.0)


def test_report_shows_the_analyses_and_writes_them_as_json(ep: Episode, tmp_path: Path) -> None:
    from ladder.app import app
    from runner.rundir.logs import LogWriter

    # one directive cell and one enforcement cell, on seeds of their own so each record is
    # its cell's own episode (the log keys records by cell and seed)
    records = [
        msgspec.structs.replace(r, cell=msgspec.structs.replace(r.cell, model=f"golden-{i}"))
        for i, r in enumerate(
            [*_directive_records(ep), *_enforce_records(ep), *_corrupted_records(ep)]
        )
    ]
    with LogWriter(tmp_path / "run") as w:
        for r in records:
            w.write(r)
    out = tmp_path / "out" / "ladder.md"
    result = CliRunner().invoke(app, ["report", str(tmp_path / "run"), "--out", str(out)])
    assert result.exit_code == 0, result.output
    text = out.read_text()
    assert "## Directive obedience (Table 11 shape)" in text
    assert "## Enforcement-gate omissions attributed (Table 10 shape)" in text
    data = json.loads((out.parent / "ladder-analyses.json").read_text())
    obedience = {line["cell"]["model"]: line for line in data["obedience"]}
    assert obedience["golden-0"]["trap_obeyed"] == 4 and obedience["golden-0"]["trap_n"] == 5
    assert obedience["golden-1"]["zero_disobedience"] == 1
    attribution = data["omission_attribution"]  # corrupted cells are Table 12's, not here
    assert sum(line["omissions"] for line in attribution) == 3
    assert sum(line["overblock"] for line in attribution) == 1
    assert sum(line["root_causes"]["cancelled"] for line in attribution) == 1
    assert "## Corrupted state replayed (Table 12 shape)" in text
    corruption = data["corruption"]
    assert len(corruption) == 2 and {c["epsilon"] for c in corruption} == {0.01}
    # the report re-draws the corruption RNG: the hand-placed events are not the ones it
    # draws for these cells, and each line says so
    assert all(c["rng_mismatches"] > 0 for c in corruption)
    assert "RNG mismatches" in text


def _corrupted_records(ep: Episode) -> list[EpisodeRecord]:
    """Two enforcement episodes at epsilon = 1e-2 with hand-placed corruption events.

    Both: a spurious done bit on s1 before its ask at turn 15, so the gate says already DONE
    and the agent obeys (an omission), and at turn 30 the gate refuses the agent's correct
    booking of s1 (another omission). The first also drops s4's edge to s2 before the
    premature ask at turn 1, so the gate says ELIGIBLE and admits the premature booking.
    """
    key = cell("enforce", ep.spec, corruption=1e-2)
    wo = {t.index: t.work_order for t in ep.turns}
    spurious = CorruptionEvent(turn=15, step="s1", kind="spurious_done")
    dropped = CorruptionEvent(turn=1, step="s4", kind="drop_edge", edge="s2")
    refuse_s1 = Act(f"Done.\n{ref_line(ep, 's1', wo[30])}", refuse=("s1",))
    out = []
    for events in ((dropped, spurious), (spurious,)):
        acts = {15: Act("Step s1 is already done; no new booking."), 30: refuse_s1}
        if dropped in events:
            acts[1] = Act(f"Done.\n{ref_line(ep, 's4', wo[1])}")
        r = build(ep, key, perfect(ep, acts))
        r = _set(r, 15, matched_step="s1", matched_redo=False,
                 directive=render_directive("s1", Verdict("done")))  # fmt: skip
        if dropped in events:
            r = _set(r, 1, matched_step="s4", matched_redo=False,
                     directive=render_directive("s4", Verdict("eligible")))  # fmt: skip
        out.append(msgspec.structs.replace(r, compile=_compile(ep), corruptions=events))
    return out


def test_table_12_corruption_replay_and_receipts_repair(ep: Episode) -> None:
    records = _corrupted_records(ep)
    (line,) = corruption_lines(_pairs(records, ep), source="logged")
    assert (line.epsilon, line.episodes, line.failures) == (1e-2, 2, 2)
    assert line.events == {"spurious_done": 2, "lost_done": 0, "drop_edge": 1}
    assert line.omissions == {
        "obeyed_done": 2,
        "obeyed_blocked": 0,
        "refused_correct": 2,
        "other": 0,
    }
    assert line.single_events == {"spurious_done": 1, "lost_done": 0, "drop_edge": 0}
    assert line.single_fatal["spurious_done"] == 1
    # directives: turn 15's DONE (both episodes) is restored from the receipts, turn 1's
    # ELIGIBLE (the dropped edge) is not; bookings: the refused s1 at turn 30 (both) is
    # restored, the admitted premature s4 (first episode) is not
    assert (line.directive_changed, line.directive_restored) == (3, 2)
    assert (line.booking_changed, line.booking_restored) == (3, 2)
    assert line.replay_mismatches == 0
    # a directive the corrupted replay cannot reproduce is reported
    wrong = _set(records[1], 15, directive=render_directive("s1", Verdict("eligible")))
    (line,) = corruption_lines(_pairs([wrong], ep), source="logged")
    assert line.replay_mismatches == 1
    # uncorrupted cells get no line
    plain = [msgspec.structs.replace(r, cell=cell("enforce", ep.spec)) for r in records]
    assert corruption_lines(_pairs(plain, ep)) == []


async def test_the_corrupted_replay_reproduces_a_real_run(tmp_path: Path) -> None:
    """On a real run of the corrupted-state gates (scripted synthetic agent, embedded
    endpoint on loopback), the corrupted replay reproduces every logged directive, and the
    analyses add up."""
    import io

    from rich.console import Console

    from runner.execution.grid_run import run_async
    from runner.grid.expand import parse_grid
    from runner.rundir.records import load_records
    from scoring.analyses.registry import log_analyses
    from scoring.replay.ground_truth import EpisodeCache
    from scoring.results.offline import score_records

    grid = parse_grid(
        {
            "run": {
                "seeds": "100-107",
                "graphs": [{"steps": 15, "density": 0.3}],
                "arms": ["directive", "enforce"],
                "variants": [
                    {"arm": "enforce", "corruption": 3e-2},
                    {"arm": "directive", "corruption": 3e-2},
                ],
            },
            "models": [{"name": "scripted/synthetic?obey=0.9&fresh=0.35&seed=7"}],
        }
    )
    await run_async(grid, tmp_path, console=Console(file=io.StringIO()), live=False)
    records, _ = load_records(tmp_path)
    cache = EpisodeCache()
    scores = score_records(records, cache, detail=True)
    a = log_analyses(zip(records, scores, strict=True), cache)
    # streamed one cell at a time (as ladder report reads log files), the same analyses
    from scoring.analyses.registry import batched_analyses

    cells: dict[object, list[tuple[EpisodeRecord, object]]] = {}
    for r, sc in zip(records, scores, strict=True):
        cells.setdefault(r.cell, []).append((r, sc))
    assert batched_analyses(list(cells.values()), cache) == a  # type: ignore[arg-type]
    corruption = a.of(CORRUPTION)
    assert len(corruption) == 2
    for line in corruption:
        assert line.episodes == 8 and sum(line.events.values()) > 0
        assert line.replay_mismatches == 0
        assert line.directive_changed > 0 and line.directive_restored <= line.directive_changed
    by_arm = {c.cell.arm: c for c in corruption}
    assert by_arm["enforce"].booking_changed > 0 and by_arm["directive"].booking_changed == 0
    # the corruption RNG is paired across the two gates: as many events, the same dropped
    # edges (a flipped bit's direction follows each arm's own done set)
    e, d = by_arm["enforce"].events, by_arm["directive"].events
    assert sum(e.values()) == sum(d.values()) and e["drop_edge"] == d["drop_edge"]
    omissions = sum(s.primary.channels["omission"] for r, s in zip(records, scores, strict=True)
                    if r.cell.knobs.corruption > 0)  # fmt: skip
    assert sum(sum(c.omissions.values()) for c in corruption) == omissions
    plain = [x for x in a.of(OBEDIENCE) if x.cell.knobs.corruption == 0]
    assert {x.cell.arm for x in plain} == {"directive", "enforce"}
    assert all(x.trap_n > 0 and x.episodes == 8 for x in plain)
    # the report draws the figures these cells allow, each with its points as JSON
    from runner.rundir.report import write_report

    report = write_report(tmp_path, figures=True)
    figures = json.loads((tmp_path / "report-figures.json").read_text())
    # without --figures: the same points, computed without drawing (Figure 5(b)'s too)
    undrawn = write_report(tmp_path, tmp_path / "plain" / "report.md")
    assert (undrawn.parent / "report-figures.json").read_bytes() == (
        tmp_path / "report-figures.json"
    ).read_bytes()
    assert not list(undrawn.parent.glob("*.png"))
    assert set(figures) == {"figure1", "figure4", "figure5a", "figure5b"}  # no original: no Fig. 6
    for name in figures:
        png = tmp_path / f"report-{name}.png"
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.name in report.read_text()
    fig1 = figures["figure1"]["points"]
    assert {p["x"] for p in fig1} == {"directive", "enforce"} and {p["n"] for p in fig1} == {8}
    assert all(p["lo"] <= p["y"] <= p["hi"] for p in fig1)
    eps = [p for p in figures["figure4"]["points"] if p["panel"].startswith("corruption")]
    assert {p["x"] for p in eps} == {"0", "0.03"}
    bars = figures["figure5b"]["points"]
    assert sum(sum(b[k] for k in ("obeyed_done", "obeyed_blocked", "refused_correct", "other"))
               for b in bars) == omissions  # fmt: skip


def test_validator_gated_hybrid_offline(ep: Episode) -> None:
    """Seed 0: the compile is flagged and the enforcement gate refuses a correct booking
    (an omission), the directive gate succeeds. Seed 1: the compile passes, the enforcement
    gate succeeds and the directive gate re-executes a finished step. The hybrid takes the
    directive episode at seed 0 and the enforcement one at seed 1: both succeed."""
    from scoring.analyses.hybrid_counterfactual import hybrid_lines

    blocked = _enforce_records(ep)[2]  # seed 0, flagged, s3's correct ref refused
    other = episode(seed=1, steps=6)
    probe = next(t for t in other.turns if t.kind == "redo_probe")
    assert probe.step is not None
    again = Act(f"Again.\n{ref_line(other, probe.step, probe.work_order)}")
    records = [
        blocked,
        build(ep, cell("directive", ep.spec), perfect(ep)),
        msgspec.structs.replace(
            build(other, cell("enforce", other.spec), perfect(other)), compile=_compile(other)
        ),
        build(other, cell("directive", other.spec), perfect(other, {probe.index: again})),
    ]
    eps = {0: ep, 1: other}
    pairs = [(r, score_episode(r, eps[r.spec.seed])) for r in records]
    (line,) = hybrid_lines(pairs)
    assert (line.n, line.flagged) == (2, 1)
    assert (line.enforce_successes, line.directive_successes, line.hybrid_successes) == (1, 1, 2)
    assert (line.enforce_omissions, line.directive_omissions, line.hybrid_omissions) == (1, 0, 0)
    assert (line.refused_correct, line.refused_correct_flagged) == (1, 1)
    assert line.cell.arm == "enforce"
