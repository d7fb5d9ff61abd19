"""Aggregation by cell and ladder, and the streaming scorer against the offline aggregation."""

from __future__ import annotations

import random

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import scoring.results.cells as cells_mod
from protocol import CellKey, EpisodeRecord, Turn
from scoring.replay.episode_score import EpisodeScore, Scoring
from scoring.results.cells import cell_line
from scoring.results.families import score_lines
from scoring.results.lines import CellLine, ContrastLine, ResultLine, decode_line, line_json
from scoring.results.offline import rescore, score_records
from scoring.results.stats import wilson
from scoring.results.stream import StreamingScorer
from tests.scoring_records import Act, build, cell, episode, perfect, ref_line

SEEDS = range(6)
ARMS = ["raw", "checklist", "directive", "enforce", "memory-topk"]


def _turn(ep_turns: tuple[Turn, ...], kind: str) -> Turn:
    return next(t for t in ep_turns if t.kind == kind)


def _record(arm: str, seed: int) -> EpisodeRecord:
    """The hand-decided ladder: who fails which seed, and how."""
    ep = episode(seed=seed, steps=5)
    key = cell(arm, ep.spec)
    probe = _turn(ep.turns, "redo_probe")
    cue = _turn(ep.turns, "superseded_cue")
    assert probe.step is not None and cue.step is not None
    re_execute = {probe.index: Act(ref_line(ep, probe.step, probe.work_order))}
    cited = {
        cue.index: Act(
            f"Step {cue.step} was cancelled, so I declined it.\n"
            f"{ref_line(ep, cue.step, cue.work_order)}"
        )
    }
    if (arm == "raw" and seed in (0, 1, 2, 3)) or (arm == "checklist" and seed in (0, 1)):
        return build(ep, key, perfect(ep, re_execute))
    if arm == "directive" and seed == 0:
        return build(ep, key, perfect(ep, cited))
    if arm == "enforce" and seed == 5:
        return build(ep, key, perfect(ep), termination="timeout", stop_after=7)
    return build(ep, key, perfect(ep))


RECORDS = [_record(arm, seed) for arm in ARMS for seed in SEEDS]


@pytest.fixture(scope="module")
def lines() -> list[ResultLine]:
    return rescore(RECORDS)


def _cells(lines: list[ResultLine]) -> dict[str, CellLine]:
    return {c.cell.arm: c for c in lines if isinstance(c, CellLine)}


def _contrasts(lines: list[ResultLine], scoring: str) -> dict[tuple[str, str], ContrastLine]:
    return {(c.a, c.b): c for c in lines if isinstance(c, ContrastLine) and c.scoring == scoring}


def test_cell_lines(lines: list[ResultLine]) -> None:
    cells = _cells(lines)
    assert list(cells) == ARMS  # ladder order, memory arm last
    raw = cells["raw"]
    assert raw.n == 6 and raw.strict_successes == 2 and raw.strict == pytest.approx(2 / 6)
    assert raw.strict_ci == pytest.approx(wilson(2, 6))
    assert raw.channels["re_execution"] == 4
    # Table 9 rate: 4 re-executions over the 12 turns labelled done (two redo probes each).
    assert raw.labels["done"] == 12
    assert raw.channel_rates["re_execution"] == pytest.approx(4 / 12)
    assert raw.channel_rates["unrequested"] == 0
    assert raw.turn_accuracy == pytest.approx(1 - 4 / (6 * 44))
    directive = cells["directive"]
    assert directive.strict_successes == 5 and directive.decline_aware_successes == 6
    assert directive.citations == 1
    assert directive.channels["superseded"] == 1
    assert directive.decline_aware_channels["superseded"] == 0
    enforce = cells["enforce"]
    assert enforce.n == 5 and enforce.infrastructure_errors == 1
    assert enforce.strict_successes == 5 and enforce.seeds == (0, 1, 2, 3, 4)
    assert enforce.cell == enforce_key()
    written = line_json(enforce)
    assert written["cell"] == {
        "arm": "enforce", "model": "scripted/golden", "regime": "no-think", "steps": 5,
        "density": 0.15, "domain": "procurement", "brief": "amended",
        "schedule": None, "paraphrase_tier": 0, "ambiguous_rate": 0.0, "served_by": "",
        "label": "scripted/golden",  # the served-by label beside the model (#49)
        **msgspec.structs.asdict(enforce_key().knobs),
        "knobs": msgspec.structs.asdict(enforce_key().knobs),
    }  # fmt: skip
    assert msgspec.convert(written["cell"], CellKey) == enforce_key()
    for line in lines:  # every line survives the JSON round trip
        assert decode_line(msgspec.json.encode(line_json(line))) == line


def enforce_key() -> CellKey:
    return cell("enforce", episode(seed=0, steps=5).spec)


def test_contrasts_pair_seeds_and_adjust_with_holm(lines: list[ResultLine]) -> None:
    strict = _contrasts(lines, "strict")
    assert list(strict) == [
        ("raw", "checklist"),
        ("checklist", "directive"),
        ("directive", "enforce"),
    ]
    rc = strict[("raw", "checklist")]
    assert (rc.n, rc.b_only, rc.a_only) == (6, 2, 0)
    assert rc.p == pytest.approx(0.5)
    cd = strict[("checklist", "directive")]
    assert (cd.b_only, cd.a_only, cd.p) == (1, 0, 1.0)
    de = strict[("directive", "enforce")]
    assert (de.n, de.b_only, de.a_only) == (5, 1, 0)  # the infra seed is unpaired
    assert [c.p_holm for c in strict.values()] == pytest.approx([1.0, 1.0, 1.0])
    aware = _contrasts(lines, "decline_aware")
    assert (
        aware[("checklist", "directive")].b_only,
        aware[("directive", "enforce")].b_only,
    ) == (2, 0)


def test_holm_runs_per_model_by_default_and_per_table_on_request() -> None:
    # Two models: by default (the paper's, Table 2) Holm runs over each model's three strict
    # ladder contrasts; --family table runs it over all six.
    other = [
        msgspec.structs.replace(r, cell=msgspec.structs.replace(r.cell, model="m2"))
        for r in RECORDS
    ]
    scores = score_records(RECORDS + other)
    both = score_lines(scores)
    strict = [c for c in both if isinstance(c, ContrastLine) and c.scoring == "strict"]
    assert len(strict) == 6 and {c.kind for c in strict} == {"ladder"}
    assert {c.family for c in strict} == {
        "Table 15 ladder | scripted/golden no-think",
        "Table 15 ladder | m2 no-think",
    }
    p_min = min(c.p for c in strict)
    assert min(c.p_holm or 0.0 for c in strict) == pytest.approx(min(1.0, 3 * p_min))
    table = score_lines(scores, "table")
    strict = [c for c in table if isinstance(c, ContrastLine) and c.scoring == "strict"]
    assert min(c.p_holm or 0.0 for c in strict) == pytest.approx(min(1.0, 6 * p_min))
    assert {c.family for c in strict} == {"Table 15 ladder | every model"}


def test_streaming_emits_each_cell_when_complete_and_the_ladder_when_all_are() -> None:
    expected = {r.cell: list(SEEDS) for r in RECORDS}
    scorer = StreamingScorer(expected)
    order = list(RECORDS)
    random.Random(4).shuffle(order)
    seen: dict[CellKey, int] = {}
    emitted: list[ResultLine] = []
    for i, record in enumerate(order):
        seen[record.cell] = seen.get(record.cell, 0) + 1
        out = scorer.add(record)
        cells = [x for x in out if isinstance(x, CellLine)]
        contrasts = [x for x in out if isinstance(x, ContrastLine)]
        assert all(x.status == "provisional" for x in out)
        if seen[record.cell] == len(SEEDS):
            assert len(cells) == 1 and cells[0].slug == record.cell.slug()
        else:
            assert cells == []
        assert (len(contrasts) == 6) == (i == len(order) - 1)
        emitted += out
    offline = [x for x in rescore(RECORDS) if isinstance(x, CellLine | ContrastLine)]
    assert all(x.status == "final" for x in offline)
    assert sorted(map(_key, emitted)) == sorted(map(_key, offline))
    by_key = {_key(x): msgspec.structs.replace(x, status="provisional") for x in offline}
    for line in emitted:
        assert line == by_key[_key(line)]  # one ladder: ladder-wise Holm equals global Holm


def _key(line: ResultLine) -> str:
    if isinstance(line, ContrastLine):
        return f"contrast {line.a} {line.b} {line.scoring}"
    return f"{line.__struct_config__.tag} {line.cell.slug()}"


def test_streaming_replacement_reemits_with_new_numbers() -> None:
    expected = {r.cell: list(SEEDS) for r in RECORDS}
    scorer = StreamingScorer(expected)
    for record in RECORDS:
        scorer.add(record)
    # A later record for (enforce, seed 5) replaces the infrastructure error.
    ep = episode(seed=5, steps=5)
    retry = build(ep, enforce_key(), perfect(ep))
    out = scorer.add(retry)
    cells = [x for x in out if isinstance(x, CellLine)]
    assert cells[0].n == 6 and cells[0].infrastructure_errors == 0
    assert len([x for x in out if isinstance(x, ContrastLine)]) == 6
    assert scorer.add(_record("raw", 0)) != []  # complete cell: re-emitted
    assert len(scorer.complete_cells()) == len(ARMS)


def test_unexpected_cells_never_complete() -> None:
    scorer = StreamingScorer({})
    assert all(scorer.add(r) == [] for r in RECORDS[:6])


def test_cell_line_of_only_infrastructure_errors() -> None:
    scores = score_records([_record("enforce", 5)])
    line = cell_line(enforce_key(), scores)
    assert line.n == 0 and line.strict is None and line.strict_ci == (0.0, 1.0)
    assert line.infrastructure_errors == 1 and line.turn_accuracy is None


def test_score_lines_keeps_the_last_score_per_cell_and_seed() -> None:
    scores = score_records([_record("raw", 0), _record("checklist", 0)])
    replaced = score_records(
        [
            build(
                episode(seed=0, steps=5),
                cell("raw", episode(0, 5).spec),
                perfect(episode(seed=0, steps=5)),
            )
        ]
    )
    lines = score_lines(scores + replaced)
    assert _cells(lines)["raw"].strict_successes == 1


def test_variant_arms_are_contrasted_with_their_reference_not_inside_the_ladder() -> None:
    """The rungs raw -> checklist -> directive -> enforce stay adjacent when the ledger and
    the hybrid run too; the ledger is contrasted with the checklist, the hybrid with the
    enforcement gate; the ledger also with the directive gate (Section 5.2). Side contrasts
    join the family of the table the arm table names; a missing rung breaks the chain."""
    records = []
    for seed in range(3):
        ep = episode(seed=seed, steps=5)
        for arm in ("raw", "checklist", "ledger", "directive", "enforce", "hybrid"):
            records.append(build(ep, cell(arm, ep.spec), perfect(ep, {})))
    pairs = list(_contrasts(rescore(records), "strict"))
    assert pairs == [
        ("raw", "checklist"),
        ("checklist", "directive"),
        ("directive", "enforce"),
        ("checklist", "ledger"),
        ("directive", "ledger"),
        ("enforce", "hybrid"),
    ]
    kinds = {
        (c.a, c.b): (c.kind, c.family)
        for c in rescore(records)
        if isinstance(c, ContrastLine) and c.scoring == "strict"
    }
    assert kinds[("raw", "checklist")] == ("ladder", "Table 15 ladder | scripted/golden no-think")
    assert kinds[("directive", "ledger")] == ("side", "Section 5.2 contrasts | scripted/golden")
    assert kinds[("enforce", "hybrid")] == ("side", "Appendix D.3 contrasts | scripted/golden")
    # Without the checklist, raw and the directive gate are not adjacent.
    gapped = [r for r in records if r.cell.arm != "checklist"]
    assert ("raw", "directive") not in set(_contrasts(rescore(gapped), "strict"))
    assert ("directive", "enforce") in set(_contrasts(rescore(gapped), "strict"))


def _scored(seed: int, trial: int, success: bool) -> EpisodeScore:
    verdict = Scoring(success=success, channels={}, labels={}, turns_ok=0, n_turns=0, turns=())
    return EpisodeScore(
        cell=cell("raw", episode(seed=0, steps=5).spec),
        seed=seed,
        termination="completed",
        infrastructure=False,
        scorable=True,
        primary=verdict,
        decline_aware=verdict,
        refused=0,
        false_completions=0,
        citations=0,
        redisplays=0,
        unknown=0,
        admitted_diffs=0,
        mismatches=(),
        trial=trial,
    )


def test_with_trials_the_interval_is_clustered_by_seed() -> None:
    """A seed's trials are not independent (#40): 8 seeds, 4 trials each, every trial of a
    seed alike, give the interval of about 8 episodes, not of 32; one trial, plain Wilson."""
    alike = [_scored(s, t, s < 4) for s in range(8) for t in range(4)]
    line = cell_line(alike[0].cell, alike)
    assert line.n == 32 and line.strict_successes == 16 and line.trials == 4
    naive, of_seeds = wilson(16, 32), wilson(4, 8)
    width = line.strict_ci[1] - line.strict_ci[0]
    assert width > naive[1] - naive[0]
    assert width == pytest.approx(of_seeds[1] - of_seeds[0], abs=0.03)
    one = [_scored(s, 0, s < 4) for s in range(8)]
    assert cell_line(one[0].cell, one).strict_ci == wilson(4, 8)


def _sum_naive(dicts: list[dict[str, int]], keys: tuple[str, ...]) -> dict[str, int]:
    total = dict.fromkeys(keys, 0)
    for d in dicts:
        for k, v in d.items():
            total[k] = total.get(k, 0) + v
    return total


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.dictionaries(st.sampled_from("abcdefg"), st.integers(-5, 50), max_size=5),
        min_size=1,
        max_size=6,
    ),
    st.lists(st.integers(0, 5), max_size=40),
    st.lists(st.sampled_from("abcxy"), max_size=3, unique=True),
)
def test_sum_dicts_counts_shared_dicts_once_with_the_same_sums_and_order(
    pool: list[dict[str, int]], picks: list[int], keys: list[str]
) -> None:
    # #50: compact scores share their counts' dicts; the sum adds each distinct one once
    dicts = [pool[i % len(pool)] for i in picks]  # the same objects, repeated
    got = cells_mod._sum_dicts(iter(dicts), tuple(keys))
    want = _sum_naive(dicts, tuple(keys))
    assert got == want and list(got) == list(want)


@settings(max_examples=300, deadline=None)
@given(
    st.permutations(list("abcdefg")),
    st.lists(st.lists(st.integers(0, 50), min_size=7, max_size=7), min_size=1, max_size=30),
    st.lists(st.booleans(), max_size=30),
    st.sampled_from(["", "drop", "extra", "swap"]),
    st.lists(st.sampled_from("abcxy"), max_size=3, unique=True),
)
def test_sum_dicts_by_column_has_the_naive_sums_and_order(
    order: list[str],
    counts: list[list[int]],
    shuffled: list[bool],
    odd: str,
    keys: list[str],
) -> None:
    # #50: the workers' scores come back as separate dicts of one key set (every channel,
    # every label): summed a column at a time; any other key set, a dict at a time
    dicts = [
        dict(zip(order[::-1] if i < len(shuffled) and shuffled[i] else order, row, strict=True))
        for i, row in enumerate(counts)
    ]
    last = dicts[-1]
    if odd == "drop":
        last.pop(order[0])
    elif odd == "extra":
        last["z"] = 3
    elif odd == "swap":  # as many keys as the first, one of them another
        last.pop(order[0])
        last["z"] = 4
    got = cells_mod._sum_dicts(iter(dicts), tuple(keys))
    want = _sum_naive(dicts, tuple(keys))
    assert got == want and list(got) == list(want)


def test_seed_wins_are_kept_per_cell_and_scoring() -> None:
    # #50: an arm's seed outcomes are computed once for all its contrasts, never mixed up
    # between cells or scorings
    won = {(s, 0): _scored(s, 0, s % 2 == 0) for s in range(6)}
    lost = {(s, 0): _scored(s, 0, False) for s in range(6)}
    memo: cells_mod.WinsMemo = {}
    first = cells_mod.seed_wins(won, "strict", memo)
    assert first == {s: s % 2 == 0 for s in range(6)}
    assert cells_mod.seed_wins(lost, "strict", memo) == dict.fromkeys(range(6), False)
    assert cells_mod.seed_wins(won, "strict", memo) is first
    assert cells_mod.seed_wins(won, "decline_aware", memo) is not first
    assert len(memo) == 3
    again = cells_mod.seed_wins(won, "strict")
    assert again == first and again is not first
