"""Every score of a fixed synthetic grid log, pinned by digest (#50): the rescoring hot path
was rewritten for speed with no score allowed to move. The log is the rescoring bench's
(``bench.bench_rescore.build_log``: 2 models x 5 configurations x the 6 arms it plays, with
re-executions, citations, refusals with and without refusal language, stale re-displays and
self-ledger lines); the digest is of each record's detailed and compact scores, encoded. A
change that moves a score changes it: say so in CHANGELOG.md and pin the new digest."""

from __future__ import annotations

import hashlib
from pathlib import Path

import msgspec

from bench.bench_rescore import build_log
from runner.rundir.logs import LogReport, read_logs
from scoring.results.offline import score_records

DIGEST = "9c763a3f70f6e210c8a2f303e5bf4386db4f6f159abad8f36e60753e712de992"


def test_the_bench_logs_scores_are_pinned(tmp_path: Path) -> None:
    assert build_log(tmp_path, 2) == 120
    records = list(read_logs(tmp_path, LogReport()).values())
    digest = hashlib.sha256()
    for detail in (True, False):
        for score in score_records(records, detail=detail):
            digest.update(msgspec.json.encode(score))
    scores = score_records(records)
    assert sum(s.citations for s in scores) and sum(s.false_completions for s in scores)
    assert sum(s.redisplays for s in scores) and sum(s.refused for s in scores)
    assert digest.hexdigest() == DIGEST
