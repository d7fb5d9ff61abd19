"""Holm families (issue #12, "Statistics"): a worked example with p-values by hand."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import msgspec
import pytest
from typer.testing import CliRunner

from ladder.app import app
from protocol import CellKey, EpisodeRecord, EpisodeSpec, Turn, Verdict, generate
from runner.rundir.logs import LogWriter
from scoring.results.families import FAMILIES, score_lines
from scoring.results.lines import ResultLine, line_json
from scoring.results.offline import rescore, score_records
from tests.scoring_records import Act, build, cell, perfect

SEEDS = range(6)


def _failing_on(fails: set[int], ep_seed: int, ep: Any) -> Any:
    good = perfect(ep)

    def policy(turn: Turn, verdict: Verdict | None) -> Act:
        return Act("Noted.") if ep_seed in fails else good(turn, verdict)

    return policy


def _records(model: str, spec_kw: dict[str, Any] | None = None) -> list[EpisodeRecord]:
    """raw fails every seed; checklist, directive, enforce none; the replace-mode checklist
    fails seeds 0-4; the ledger seeds 0-3."""
    plan: list[tuple[str, dict[str, Any], set[int]]] = [
        ("raw", {}, set(SEEDS)),
        ("checklist", {}, set()),
        ("directive", {}, set()),
        ("enforce", {}, set()),
        ("checklist", {"checklist_mode": "replace"}, {0, 1, 2, 3, 4}),
        ("ledger", {}, {0, 1, 2, 3}),
    ]
    out = []
    for seed in SEEDS:
        ep = generate(EpisodeSpec(seed=seed, steps=5, density=0.15, **(spec_kw or {})))
        for arm, knobs, fails in plan:
            key = msgspec.structs.replace(cell(arm, ep.spec, **knobs), model=model)
            out.append(build(ep, key, _failing_on(fails, seed, ep)))
    return out


def _strict(typed: list[ResultLine]) -> dict[tuple[str, str, str], dict[str, Any]]:
    lines: list[dict[str, Any]] = [line_json(x) for x in typed]
    return {
        (c["config"]["model"], c["a"], c["b"]): c
        for c in lines
        if c["type"] == "contrast" and c["scoring"] == "strict"
    }


def test_worked_example_of_the_papers_families() -> None:
    lines = score_lines(score_records(_records("m1") + _records("m2")))
    c = _strict(lines)
    # Ladder (Table 15: one family per model and regime): raw -> checklist has 6 discordant
    # pairs, p = 2 / 2**6; the other two rungs have none (p = 1). Holm over the three.
    rc = c[("m1", "raw", "checklist")]
    family = "Table 15 ladder | m1 no-think"
    assert (rc["kind"], rc["family"], rc["b_only"], rc["a_only"]) == ("ladder", family, 6, 0)
    assert rc["p"] == pytest.approx(0.03125)
    assert rc["p_holm"] == pytest.approx(0.09375)
    assert c[("m1", "checklist", "directive")]["p_holm"] == 1.0
    # Section 5.2 (within model): ledger fails 4 seeds the checklist and the directive gate
    # pass (p = 2 / 2**4 = 0.125 each). Holm over the two: 0.25, 0.25.
    side = [c[("m1", "checklist", "ledger")], c[("m1", "directive", "ledger")]]
    assert [s["kind"] for s in side] == ["side"] * 2
    assert {s["family"] for s in side} == {"Section 5.2 contrasts | m1"}
    assert [s["p"] for s in side] == pytest.approx([0.125, 0.125])
    assert [s["p_holm"] for s in side] == pytest.approx([0.25, 0.25])
    # Table 16 (within model): the replace-mode checklist against the checklist (five
    # discordant, p = 2 / 2**5) and the ledger against the replace-mode checklist (one
    # discordant pair, p = 1). Holm over the two: 0.125, 1.
    var = c[("m1", "checklist", "checklist[checklist_mode=replace]")]
    led = c[("m1", "checklist[replace]", "ledger")]
    assert (var["kind"], var["a_only"], var["b_only"], led["kind"]) == ("variant", 5, 0, "side")
    assert var["family"] == led["family"] == "Table 16 contrasts | m1"
    assert var["p"] == pytest.approx(0.0625) and var["p_holm"] == pytest.approx(0.125)
    assert led["p"] == pytest.approx(1.0) and led["p_holm"] == pytest.approx(1.0)
    # --family table: one family per table over both models (ladder: six contrasts).
    table = _strict(score_lines(score_records(_records("m1") + _records("m2")), "table"))
    assert table[("m1", "raw", "checklist")]["family"] == "Table 15 ladder | every model"
    assert table[("m1", "raw", "checklist")]["p_holm"] == pytest.approx(6 * 0.03125)
    assert table[("m1", "checklist", "checklist[checklist_mode=replace]")]["p_holm"] == (
        pytest.approx(4 * 0.0625)
    )
    assert FAMILIES == ("paper", "model", "regime", "table")


def test_wording_brief_and_schedule_contrasts_pair_the_right_cells() -> None:
    records: list[EpisodeRecord] = []
    configs: list[dict[str, Any]] = [
        {"generator": 3, "brief": "original"},  # the original grid (earlier schedule)
        {"generator": 3, "brief": "original", "schedule": "regenerated"},  # schedule control
        {"generator": 3},  # the amended replication
        {"generator": 3, "ambiguous_rate": 0.15},  # a stress of the amended cell
    ]
    for kw in configs:
        for seed in SEEDS:
            ep = generate(EpisodeSpec(seed=seed, steps=5, density=0.15, **kw))
            for arm in ("raw", "enforce"):
                key = CellKey(
                    model="m",
                    steps=5,
                    density=0.15,
                    brief=ep.spec.brief,
                    arm=arm,
                    schedule=ep.spec.schedule,
                    ambiguous_rate=ep.spec.ambiguous_rate,
                )
                records.append(build(ep, key, perfect(ep)))
    lines: list[dict[str, Any]] = [line_json(x) for x in rescore(records)]
    assert all(not line.get("mismatched_episodes") for line in lines if line["type"] == "cell")
    kinds: dict[str, list[tuple[str, str]]] = {}
    for c in lines:
        if c["type"] == "contrast" and c["scoring"] == "strict":
            kinds.setdefault(c["kind"], []).append((c["a"], c["b"]))
    assert sorted(kinds["schedule"]) == [
        ("enforce[earlier]", "enforce[regenerated]"),
        ("raw[earlier]", "raw[regenerated]"),
    ]
    assert sorted(kinds["brief"]) == [
        ("enforce[original]", "enforce[amended]"),
        ("raw[original]", "raw[amended]"),
    ]
    assert sorted(kinds["wording"]) == [
        ("enforce", "enforce[tier=0,amb=0.15]"),
        ("raw", "raw[tier=0,amb=0.15]"),
    ]
    # Table 4: Holm over the arms of one stress, apart from other families.
    families = {c["family"] for c in lines if c.get("kind") == "wording"}
    assert len(families) == 1


def test_ladder_score_family_option(tmp_path: Path) -> None:
    with LogWriter(tmp_path) as w:
        for r in _records("m1") + _records("m2"):
            w.write(r)
    out: dict[str, list[float]] = {}
    for family in ("paper", "table"):
        result = CliRunner().invoke(app, ["score", str(tmp_path), "--json", "--family", family])
        assert result.exit_code == 0, result.output
        rows = [json.loads(x) for x in result.stdout.splitlines() if x.startswith("{")]
        out[family] = [
            r["p_holm"]
            for r in rows
            if r["type"] == "contrast" and r["scoring"] == "strict" and r["a"] == "raw"
        ]
    assert out["paper"] == pytest.approx([0.09375, 0.09375])
    assert out["table"] == pytest.approx([0.1875, 0.1875])
    bad = CliRunner().invoke(app, ["score", str(tmp_path), "--family", "grid"])
    assert bad.exit_code == 2
    assert "unknown --family 'grid'; choose one of paper, model, regime, table" in bad.output
    text = CliRunner().invoke(app, ["score", str(tmp_path)])
    assert "Table 15 ladder | m1 no-think: 3 contrasts" in text.output
    assert "Table 16 contrasts | m2: 2 contrasts" in text.output
