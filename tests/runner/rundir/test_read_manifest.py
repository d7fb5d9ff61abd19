"""One reader of a run's manifest for its readers (report details, viewer header, old
records' labels): a regular JSON object file only, bounded, never through a link."""

from __future__ import annotations

from pathlib import Path

from runner.rundir import manifest
from runner.rundir.manifest import MANIFEST, read_manifest


def test_a_manifest_is_read_and_anything_else_is_empty(tmp_path: Path) -> None:
    run = tmp_path / "run"
    run.mkdir()
    assert read_manifest(run) == {}
    (run / MANIFEST).write_text('{"generator_version": 5}')
    assert read_manifest(run) == {"generator_version": 5}
    (run / MANIFEST).write_text("[1, 2]")
    assert read_manifest(run) == {}
    (run / MANIFEST).write_text("{not json")
    assert read_manifest(run) == {}


def test_a_planted_link_or_an_oversize_manifest_is_not_read(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere.json"
    elsewhere.write_text('{"secret": 1}')
    run = tmp_path / "run"
    run.mkdir()
    (run / MANIFEST).symlink_to(elsewhere)
    assert read_manifest(run) == {}
    (run / MANIFEST).unlink()
    (run / MANIFEST).write_text('{"pad": "' + "x" * manifest.MAX_MANIFEST_BYTES + '"}')
    assert read_manifest(run) == {}
