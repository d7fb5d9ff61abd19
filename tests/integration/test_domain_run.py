"""A user's domain pack end to end (issue #30): the scripted perfect agent scores 1.0 in
every arm on a pack written in the test, the run directory keeps a copy of the pack, the
specs record its digest, rescoring loads the copy and refuses a pack that changed since."""

from __future__ import annotations

import asyncio
import tomllib
from collections.abc import Iterator
from pathlib import Path

import msgspec
import orjson
import pytest
from typer.testing import CliRunner

from ladder.app import app
from protocol.arms.table import arm_names, harness_arms, memory_arms
from protocol.domains.known import DIGESTS, forget
from protocol.domains.packs import pack_digest, parse_pack
from runner.grid.expand import GridError, parse_grid
from runner.rundir.packs import PACKS_DIR
from scoring.replay.episode_score import score_episode
from tests.pack_kit import pack_text, pool
from tests.reliability_kit import grid_data, records, run_inprocess

NAME = "garden"


@pytest.fixture(autouse=True)
def _unload() -> Iterator[None]:
    yield
    forget(NAME)


def _pack(tmp: Path, text: str | None = None) -> Path:
    path = tmp / "my_domain.toml"
    path.write_text(text or "# my garden\n" + pack_text(), encoding="utf-8")
    return path


def _data(domains: list[str], seeds: str = "100-101") -> dict[str, object]:
    """Every arm: the text arms, the memory arms in augment mode (in record mode the perfect
    agent, which reads its transcript only, fails by design: tests/runner/arms/test_memory_arms.py) and
    the real-tool harness's arms."""
    text = [a for a in arm_names() if a not in memory_arms()]
    data = grid_data(seeds=seeds, steps=8, arms=text, timeout_s=60.0)
    data["models"] = [{"name": "scripted/perfect", "endpoint": "embedded"}]
    data["run"]["domains"] = domains
    data["run"]["variants"] = [
        *({"arm": a, "memory_mode": "augment"} for a in memory_arms()),
        *({"arm": a, "harness": "langgraph"} for a in harness_arms()),
    ]
    return data


N_CELLS = len(arm_names()) + len(harness_arms())


def test_perfect_agent_scores_one_in_every_arm_on_a_user_pack(tmp_path: Path) -> None:
    path = _pack(tmp_path)
    out = tmp_path / "run"
    grid = parse_grid(_data([str(path)], seeds="100-100"))
    assert grid.run.domains == [NAME]
    summary, _ = asyncio.run(run_inprocess(grid, out))
    assert summary["infrastructure"] == 0 and summary["episodes_run"] == N_CELLS
    recs = list(records(out).values())
    assert {r.cell.arm for r in recs} == set(arm_names())
    digest = pack_digest(pool())
    for rec in recs:
        assert (rec.spec.domain, rec.spec.domain_digest) == (NAME, digest)
        assert rec.termination == "completed"
        score = score_episode(rec)
        assert score.primary.success and score.decline_aware.success, rec.cell.arm
    # the run directory keeps the pack as it was read, comments and all
    assert (out / PACKS_DIR / f"{NAME}.toml").read_text() == path.read_text()
    # and its manifest the pack's digest (issue #37)
    manifest = orjson.loads((out / "manifest.json").read_bytes())
    assert manifest["domain_digests"] == {NAME: digest}
    # rescoring in a fresh registry loads that copy
    forget(NAME)
    result = CliRunner().invoke(app, ["score", str(out), "--json"])
    assert result.exit_code == 0, result.output
    cells = [x for x in result.stdout.splitlines() if '"type":"cell"' in x]
    assert len(cells) == N_CELLS and all('"strict":1.0' in c for c in cells)
    forget(NAME)
    result = CliRunner().invoke(app, ["show", str(out)])
    assert result.exit_code == 0 and "garden" in result.stdout, result.output

    # a changed pack is refused in one line, whether given or in place of the copy
    changed = pack_text(at="garden-soil", text="test the soil work for the whole garden")
    forget(NAME)
    edited = tmp_path / "edited.toml"
    edited.write_text(changed, encoding="utf-8")
    result = CliRunner().invoke(app, ["score", str(out), "--domain-file", str(edited)])
    assert result.exit_code == 2
    [line] = result.stderr.strip().splitlines()
    assert "domain pack 'garden' changed since the run" in line and str(edited) in line
    forget(NAME)
    (out / PACKS_DIR / f"{NAME}.toml").write_text(changed, encoding="utf-8")
    result = CliRunner().invoke(app, ["score", str(out)])
    assert result.exit_code == 2 and "changed since the run" in result.stderr
    # the original file, given at rescore time, is the copy to use
    forget(NAME)
    (out / PACKS_DIR / f"{NAME}.toml").unlink()
    result = CliRunner().invoke(app, ["score", str(out), "--json", "--domain-file", str(path)])
    assert result.exit_code == 0, result.output


def test_a_built_in_domain_beside_a_pack_keeps_its_spec_encoding(tmp_path: Path) -> None:
    grid = parse_grid(_data(["procurement", str(_pack(tmp_path))]))
    assert grid.run.domains == ["procurement", NAME]
    cells = {c.domain: c for c in grid.cells()}
    built_in = msgspec.json.encode(cells["procurement"].spec(100, 4))
    assert b"domain_digest" not in built_in
    assert cells[NAME].spec(100, 4).domain_digest == DIGESTS[NAME]


def test_a_grid_file_names_a_pack_beside_it(tmp_path: Path) -> None:
    _pack(tmp_path)
    grid_file = tmp_path / "grid.toml"
    grid_file.write_text(
        "domains_note = 1\n".replace("domains_note = 1\n", "")
        + '[run]\nseeds = "100-101"\narms = ["raw"]\ndomains = ["procurement", "./my_domain.toml"]\n'
        + '[[endpoints]]\nname = "e"\nbase_url = "embedded"\n'
        + '[[models]]\nname = "scripted/perfect"\nendpoint = "e"\n'
    )
    result = CliRunner().invoke(app, ["validate", str(grid_file), "--offline"])
    assert result.exit_code == 0, result.output
    assert "4 episodes" in result.stdout


def test_a_broken_pack_in_a_grid_gives_its_lines(tmp_path: Path) -> None:
    path = _pack(tmp_path, pack_text(at="garden-soil", phase=1))
    with pytest.raises(GridError) as e:
        parse_grid(_data([str(path)]))
    assert str(e.value).splitlines() == [
        f"{path}: templates: 18 templates by phase {{0: 2, 1: 4, 2: 3, 3: 3, 4: 3, 5: 3}}; "
        "need 18, 3 in each phase 0..5"
    ]


def test_run_and_generate_take_a_domain_file(tmp_path: Path) -> None:
    path = _pack(tmp_path)
    out = tmp_path / "run"
    result = CliRunner().invoke(
        app,
        [
            "run",
            "--domain-file",
            str(path),
            "--seeds",
            "100-101",
            "--arms",
            "raw,enforce",
            "--out",
            str(out),
            "--no-live",
        ],
    )
    assert result.exit_code == 0, result.output
    recs = list(records(out).values())
    assert len(recs) == 4 and {r.spec.domain for r in recs} == {NAME}
    assert (out / PACKS_DIR / f"{NAME}.toml").exists()
    # resuming with a pack changed since is refused, and the run directory is left as it was
    forget(NAME)
    path.write_text(pack_text(at="garden-soil", text="test the soil work for the whole garden"))
    before = sorted(p.name for p in out.rglob("*"))
    argv = ["run", "--domain-file", str(path), "--seeds", "100-101", "--arms", "raw,enforce"]
    result = CliRunner().invoke(app, [*argv, "--out", str(out), "--no-live"])
    assert result.exit_code == 2 and "domain pack 'garden' changed since" in result.stderr
    assert sorted(p.name for p in out.rglob("*")) == before
    # ... before any endpoint is contacted: a dead server is not what the refusal names (#40)
    forget(NAME)
    dead = ["--base-url", "http://127.0.0.1:9/v1"]
    result = CliRunner().invoke(app, [*argv, *dead, "--out", str(out), "--no-live"])
    assert result.exit_code == 2 and "domain pack 'garden' changed since" in result.stderr
    assert "preflight" not in result.output
    forget(NAME)
    path.write_text(pack_text())
    result = CliRunner().invoke(app, ["generate", "--domain-file", str(path), "--json"])
    assert result.exit_code == 0, result.output
    episode = msgspec.json.decode(result.stdout)
    assert episode["spec"]["domain"] == NAME
    assert episode["spec"]["domain_digest"] == pack_digest(pool())
    texts = {t.text for t in pool().templates}
    assert {s["text"] for s in episode["steps"]} <= texts


def test_domain_check_show_and_new(tmp_path: Path) -> None:
    path = _pack(tmp_path)
    result = CliRunner().invoke(app, ["domain", "check", str(path)])
    assert result.exit_code == 0 and "passes every check" in result.stdout
    bad = _pack(tmp_path, pack_text(at="garden-soil", asks=("x {wo}", "soil {wo}", "soil {wo}.")))
    result = CliRunner().invoke(app, ["domain", "check", str(bad)])
    assert result.exit_code == 1
    assert result.stdout.splitlines() == [
        f"{bad}: template garden-soil: asks[0]: names none of the step's key words (soil, test)"
    ]
    result = CliRunner().invoke(app, ["domain", "show", "release"])
    assert result.exit_code == 0 and "rel-freeze-scope: freeze the release scope" in result.stdout
    result = CliRunner().invoke(app, ["domain", "show", str(_pack(tmp_path))])
    assert result.exit_code == 0 and "key words: soil, test" in result.stdout
    result = CliRunner().invoke(app, ["domain", "new", "My Trial"])
    assert result.exit_code == 2 and "lowercase words joined by hyphens" in result.stderr
    result = CliRunner().invoke(app, ["domain", "show", "nosuch"])
    assert result.exit_code == 2 and "unknown domain 'nosuch'" in result.stderr
    new = tmp_path / "trial.toml"
    result = CliRunner().invoke(app, ["domain", "new", "trial", "--out", str(new)])
    assert result.exit_code == 0 and new.exists()
    result = CliRunner().invoke(app, ["domain", "check", str(new)])
    assert result.exit_code == 1
    # the text and the four required lists of each step (premature is optional, issue #37)
    assert len(result.stdout.splitlines()) == 18 * 5
    assert "premature" not in result.stdout
    # filled in (here with the test pack's templates), the skeleton passes
    filled = new.read_text().split("\n[[templates]]")[0]
    filled += pack_text().split("\n[[templates]]", 1)[1].join(["\n[[templates]]", ""])
    filled = filled.replace('name = "trial"', 'name = "trial"', 1)
    assert parse_pack(filled, "trial.toml").name == "trial"


EXAMPLE = Path(__file__).parent.parent.parent / "examples" / "domains"


def test_the_example_pack_passes_its_checks_and_runs_with_scripted_agents(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["domain", "check", str(EXAMPLE / "trial_startup.toml")])
    assert result.exit_code == 0 and "'trial-startup' passes every check" in result.stdout
    try:
        grid = parse_grid(_data([str(EXAMPLE / "trial_startup.toml")], seeds="100-102"))
        data = msgspec.to_builtins(grid)
        data["run"]["arms"], data["run"]["variants"] = ["raw", "enforce"], []
        data["models"] = [
            {"name": m, "endpoint": "embedded"}
            for m in ("scripted/perfect", "scripted/always-book")
        ]
        summary, _ = asyncio.run(run_inprocess(parse_grid(data), tmp_path / "run"))
        assert summary["infrastructure"] == 0 and summary["episodes_run"] == 12
        by_cell: dict[tuple[str, str], list[bool]] = {}
        for rec in records(tmp_path / "run").values():
            assert rec.spec.domain == "trial-startup"
            ok = score_episode(rec).primary.success
            by_cell.setdefault((rec.cell.model, rec.cell.arm), []).append(ok)
        # the perfect agent passes everywhere; always-book books every redo probe in raw,
        # and the enforce gate blocks those bookings
        assert by_cell[("scripted/perfect", "raw")] == [True] * 3
        assert by_cell[("scripted/perfect", "enforce")] == [True] * 3
        assert by_cell[("scripted/always-book", "raw")] == [False] * 3
        # the example grid names the pack beside it
        grid = parse_grid(
            msgspec.convert(tomllib.loads((EXAMPLE / "grid.toml").read_text()), dict),
            base=EXAMPLE,
        )
        assert grid.run.domains == ["procurement", "trial-startup"]
    finally:
        forget("trial-startup")
