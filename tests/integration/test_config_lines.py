"""score_lines with a memo of each configuration's lines (scoring/results/families.py
ConfigLines, the viewer's overview as its index fills, #50): the same lines as without it,
a configuration computed again only when its scores changed, lines handed out never
changed by a later call."""

from __future__ import annotations

import msgspec
import pytest

import scoring.results.families as families
from scoring.replay.episode_score import EpisodeScore
from scoring.results.cells import group_scores
from scoring.results.families import ConfigLines, score_lines
from scoring.results.lines import ResultLine
from scoring.results.offline import score_records
from tests.integration.test_families import _records


def _json(lines: list[ResultLine]) -> bytes:
    return msgspec.json.encode(lines)


def test_the_memo_gives_score_lines_and_recomputes_only_what_changed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    scores = score_records(_records("m1") + _records("m2"))
    computed: list[int] = []
    part = families._config_part

    def counted(members: families._Members) -> families._Part:
        computed.append(len(members))
        return part(members)

    monkeypatch.setattr(families, "_config_part", counted)
    configs = len(group_scores(scores))  # 2 models x (default, replace mode)
    assert configs == 4
    memo = ConfigLines()
    first = score_lines(scores, memo=memo)
    assert len(computed) == configs
    first_json = _json(first)
    assert first_json == _json(score_lines(scores))
    n = len(computed)
    again = score_lines(scores, "table", memo=memo)  # another family: the parts reused
    assert len(computed) == n
    assert _json(again) == _json(score_lines(scores, "table"))
    assert _json(first) == first_json  # the first call's contrasts kept their families
    # one score of m2 replaced (an episode read again): m2 alone computed again
    i = next(i for i, s in enumerate(scores) if s.cell.model == "m2")
    changed: list[EpisodeScore] = [*scores]
    changed[i] = msgspec.structs.replace(scores[i], refused=scores[i].refused + 1)
    n = len(computed)
    assert _json(score_lines(changed, memo=memo)) == _json(score_lines(changed))
    assert len(computed) == n + 1 + configs  # its configuration with the memo, all without
    # fewer episodes of m1 (a partial index): computed again, as without the memo
    fewer = [s for s in scores if s.cell.model != "m1" or s.seed < 3]
    assert _json(score_lines(fewer, memo=memo)) == _json(score_lines(fewer))
