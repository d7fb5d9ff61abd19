"""Bad input: each mistake ends with one clear line on stderr (no traceback) and a non-zero
exit, before any request is sent, and never changes an existing run directory (its files are
hashed before and after).

Malformed TOML, unknown keys (with "did you mean"), out-of-range values, an output directory
holding a different grid (refused; resumed only with --allow-grid-change), unreadable,
truncated and newer-schema logs for ``ladder run`` (resume) and ``ladder score``.
"""

from __future__ import annotations

import asyncio
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec
import pytest
from typer.testing import CliRunner, Result

from ladder.app import app
from protocol.records import EpisodeRecord
from runner.rundir.logs import read_logs
from tests.reliability_kit import grid_data, grid_toml, ladder, tree_digest

SEEDS = "100-101"


@pytest.fixture(autouse=True)
def _default_loop_policy() -> Iterator[None]:
    yield
    asyncio.set_event_loop_policy(None)  # `ladder run` installs uvloop's; keep tests apart


def _grid(**kw: Any) -> dict[str, Any]:
    base: dict[str, Any] = {"seeds": SEEDS, "steps": 5, "arms": ("raw", "directive")}
    return grid_data(**{**base, **kw})


def _invoke(*args: str) -> Result:
    return CliRunner().invoke(app, list(args))


def _one_line_error(result: Result, *needles: str) -> str:
    """The run failed with exactly one ``error:`` line on stderr naming every needle."""
    assert result.exit_code == 2, (result.exit_code, result.stdout, result.stderr)
    assert isinstance(result.exception, SystemExit), result.exception
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    assert "Traceback" not in result.stdout + result.stderr
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])
    return lines[0]


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished run directory (grid file, manifest, logs, results, caches)."""
    root = tmp_path_factory.mktemp("finished")
    grid_file = root / "grid.toml"
    grid_file.write_text(grid_toml(_grid()))
    result = _invoke("run", str(grid_file), "--out", str(root / "run"), "--no-live")
    asyncio.set_event_loop_policy(None)
    assert result.exit_code == 0, result.stdout + result.stderr
    return root


@pytest.fixture
def run_dir(finished_run: Path, tmp_path: Path) -> Path:
    """A private copy of the finished run (with its grid.toml)."""
    shutil.copytree(finished_run, tmp_path / "copy")
    return tmp_path / "copy"


def _write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


# --- grid files --------------------------------------------------------------------------


def test_malformed_toml(run_dir: Path) -> None:
    bad = _write(run_dir / "bad.toml", '[run]\nseeds = "100-101\narms = ["raw"]\n')
    before = tree_digest(run_dir / "run")
    _one_line_error(
        _invoke("run", str(bad), "--out", str(run_dir / "run")), "malformed TOML", "line 2"
    )
    _one_line_error(_invoke("validate", str(bad), "--offline"), "malformed TOML")
    _one_line_error(_invoke("run", str(run_dir / "missing.toml")), "cannot read grid")
    assert tree_digest(run_dir / "run") == before


UNKNOWN_KEYS = [
    ("[decodng]\nattempts = 2\n", "'decodng'", "did you mean 'decoding'"),
    ('[run]\nseed = "100-101"\n', "'seed' in [run]", "did you mean 'seeds'"),
    ('[[models]]\nname = "m"\nservd = "x"\n', "'servd' in [models]", "did you mean 'served'"),
    (
        '[[endpoints]]\nname = "e"\nmax_inflight = 3\n',
        "in [endpoints]",
        "did you mean 'max_in_flight'",
    ),
    ("[decoding]\nbackof_s = 0.1\n", "in [decoding]", "did you mean 'backoff_s'"),
    (
        '[run]\narms = ["enforcer"]\n[[models]]\nname = "m"\n',
        "unknown arm 'enforcer'",
        "did you mean 'enforce'",
    ),
]


@pytest.mark.parametrize(("text", "where", "hint"), UNKNOWN_KEYS)
def test_unknown_keys_suggest_the_right_one(
    text: str, where: str, hint: str, run_dir: Path
) -> None:
    bad = _write(run_dir / "bad.toml", text)
    before = tree_digest(run_dir / "run")
    _one_line_error(_invoke("run", str(bad), "--out", str(run_dir / "run")), where, hint)
    assert tree_digest(run_dir / "run") == before


OUT_OF_RANGE: list[tuple[dict[str, Any], str]] = [
    ({"run": {"steps": [99]}}, "steps must be between"),
    ({"run": {"density": [1.5]}}, "density must be in [0, 1]"),
    ({"run": {"concurrency": 0}}, "concurrency must be at least 1"),
    ({"run": {"seeds": "110-100"}}, "malformed seed range"),
    ({"run": {"paraphrase_tier": 7}}, "paraphrase tier must be 0, 1 or 2"),
    ({"run": {"ambiguous_rate": 2.0}}, "ambiguous rate must be in [0, 1]"),
    ({"run": {"arms": []}}, "the grid has no cells"),
    ({"run": {"concurrency": "many"}}, "Expected `int`, got `str`"),
    ({"decoding": {"attempts": 0}}, "decoding.attempts must be at least 1"),
    ({"decoding": {"timeout_s": -1.0}}, "decoding.timeout_s must be positive"),
    ({"decoding": {"backoff_s": -0.5}}, "decoding.backoff_s must be at least 0"),
    ({"decoding": {"reply_budget": {"thinking": 4000}}}, "no entry for the 'no-think' regime"),
    (
        {"endpoints": [{"name": "embedded", "base_url": "embedded", "max_in_flight": 0}]},
        "max_in_flight must be at least 1",
    ),
    (
        {
            "endpoints": [
                {
                    "name": "embedded",
                    "base_url": "embedded",
                    "adaptive": True,
                    "start_in_flight": -1,
                }
            ]
        },
        "start_in_flight must be at least 1",
    ),
    (
        {
            "endpoints": [
                {"name": "embedded", "base_url": "embedded", "api_key_env": "LADDER_TEST_UNSET_KEY"}
            ]
        },
        "LADDER_TEST_UNSET_KEY",
    ),
]


def _merge(base: dict[str, Any], patch: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for k, v in patch.items():
        out[k] = {**base[k], **v} if isinstance(v, dict) and isinstance(base.get(k), dict) else v
    return out


@pytest.mark.parametrize(("patch", "message"), OUT_OF_RANGE)
def test_out_of_range_values(
    patch: dict[str, Any], message: str, run_dir: Path, monkeypatch: Any
) -> None:
    monkeypatch.delenv("LADDER_TEST_UNSET_KEY", raising=False)
    bad = _write(run_dir / "bad.toml", grid_toml(_merge(_grid(), patch)))
    before = tree_digest(run_dir / "run")
    _one_line_error(_invoke("run", str(bad), "--out", str(run_dir / "run")), message)
    if message == "LADDER_TEST_UNSET_KEY":  # refused where it would send; --offline warns
        _one_line_error(_invoke("validate", str(bad)), message)
        offline = _invoke("validate", str(bad), "--offline")
        assert offline.exit_code == 0 and message in offline.stderr
    else:
        _one_line_error(_invoke("validate", str(bad), "--offline"), message)
    assert tree_digest(run_dir / "run") == before


# --- run directories ---------------------------------------------------------------------


def test_a_directory_holding_another_grid_is_refused_then_resumed_only_with_the_flag(
    run_dir: Path,
) -> None:
    out = run_dir / "run"
    old = read_logs(out)
    # not a superset (seed 100 dropped): a superset resumes (tests/ladder/test_run.py)
    other = _write(run_dir / "other.toml", grid_toml(_grid(seeds="101-102")))
    before = tree_digest(out)
    refused = _invoke("run", str(other), "--out", str(out), "--no-live")
    assert refused.exit_code == 2 and "Traceback" not in refused.stdout + refused.stderr
    lines = refused.stderr.strip().splitlines()  # one change a line, each "error:" (#49)
    assert all(x.startswith("error: ") for x in lines), refused.stderr
    assert all(len(x) <= 80 for x in lines[1:]), refused.stderr  # the first: the path
    flat = " ".join(refused.stderr.split())
    assert "holds a different grid" in flat and "--allow-grid-change" in lines[-1]
    assert str(out) in flat
    assert tree_digest(out) == before, "a refused run changes nothing"
    result = _invoke("run", str(other), "--out", str(out), "--no-live", "--allow-grid-change")
    assert result.exit_code == 0, result.stdout + result.stderr
    assert "resuming" in result.stdout
    new = read_logs(out)
    assert old.keys() < new.keys(), "the old records are kept, the new seed added"
    assert all(new[k] == old[k] for k in old), "nothing done was rerun"


def test_same_grid_with_other_concurrency_resumes_without_the_flag(run_dir: Path) -> None:
    """Concurrency and endpoint caps are not part of the grid's identity."""
    same = _write(run_dir / "same.toml", grid_toml(_grid(concurrency=3, max_in_flight=2)))
    result = _invoke("run", str(same), "--out", str(run_dir / "run"), "--no-live")
    assert result.exit_code == 0, result.stderr
    assert "0 episodes run" in result.stdout


def _newer_record(out: Path) -> Path:
    log = sorted((out / "logs").glob("*.jsonl"))[0]
    first = msgspec.json.decode(log.read_bytes().splitlines()[0], type=EpisodeRecord)
    newer = msgspec.structs.replace(first, schema_version=99)
    with log.open("ab") as f:
        f.write(msgspec.json.encode(newer) + b"\n")
    return log


def test_logs_of_a_newer_schema(run_dir: Path) -> None:
    out = run_dir / "run"
    log = _newer_record(out)
    before = tree_digest(out)
    grid = str(run_dir / "grid.toml")
    _one_line_error(
        _invoke("run", grid, "--out", str(out), "--no-live"), "schema version 99 is newer", log.name
    )
    _one_line_error(_invoke("score", str(out)), "schema version 99 is newer")
    _one_line_error(_invoke("report", str(out)), "schema version 99 is newer")
    assert tree_digest(out) == before


def test_unreadable_logs(run_dir: Path) -> None:
    out = run_dir / "run"
    (out / "logs" / "not-a-file.jsonl").mkdir()  # read_bytes fails (root reads any mode)
    before = tree_digest(out)
    grid = str(run_dir / "grid.toml")
    _one_line_error(_invoke("run", grid, "--out", str(out), "--no-live"), "not-a-file.jsonl")
    _one_line_error(_invoke("score", str(out)), "cannot read")
    assert tree_digest(out) == before
    _one_line_error(_invoke("score", str(run_dir / "nowhere")), "not a directory")
    (run_dir / "empty").mkdir()
    _one_line_error(_invoke("score", str(run_dir / "empty")), "no episode logs")


def test_truncated_logs_are_reported_and_the_rest_scored(run_dir: Path) -> None:
    """A log cut mid-line (what a kill leaves) scores the whole records and names the cut
    one; the files are left as they are."""
    out = run_dir / "run"
    log = sorted((out / "logs").glob("*.jsonl"))[0]
    data = log.read_bytes()
    log.write_bytes(data[: len(data) - 200])
    before = tree_digest(out)
    result = _invoke("score", str(out))
    assert result.exit_code == 0, result.stderr
    assert "1 truncated (dropped)" in result.stdout and log.name in result.stdout
    assert tree_digest(out) == before


def test_logs_with_no_readable_record(run_dir: Path) -> None:
    out = run_dir / "run"
    for log in (out / "logs").glob("*.jsonl"):
        log.write_bytes(log.read_bytes()[:300])  # every file cut inside its first line
    before = tree_digest(out)
    _one_line_error(_invoke("score", str(out)), "no readable")
    assert tree_digest(out) == before


def test_a_real_process_prints_no_traceback(run_dir: Path) -> None:
    """A refusal from a real ``ladder`` process (not the test runner's capture)."""
    bad = _write(run_dir / "bad.toml", '[run]\nseed = "1"\n')
    done = ladder("run", str(bad), "--out", str(run_dir / "run"))
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.startswith("error: ") and "did you mean 'seeds'" in done.stderr
    assert "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1
