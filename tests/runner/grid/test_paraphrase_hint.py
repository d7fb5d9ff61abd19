"""A missing paraphrase cache says in one line how a scripted run builds it (#46)."""

from __future__ import annotations

from pathlib import Path

import pytest

from runner.grid.paraphrase_cache import ParaphraseCacheError, load_paraphrases


def test_a_missing_cache_names_the_scripted_rewriter(tmp_path: Path) -> None:
    path = tmp_path / "paraphrase_cache.json"
    with pytest.raises(ParaphraseCacheError) as e:
        load_paraphrases(path, ["procurement"], 5)
    msg = str(e.value)
    assert "\n" not in msg
    assert f"ladder paraphrase --model scripted/perfect --base-url embedded --out {path}" in msg


def test_the_askback_wording_grid_says_how_to_build_it() -> None:
    grid = Path(__file__).parents[3] / "runner" / "grids" / "askback-wording.toml"
    text = grid.read_text()
    assert "ladder paraphrase --model scripted/perfect --base-url embedded" in text
