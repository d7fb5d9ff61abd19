"""Generator versions: old logs rescore to their old scores; version 2's scripted user drops a
deferred step once a planned ask of it is served (issue #22, item 1)."""

from __future__ import annotations

import hashlib
from pathlib import Path

import msgspec

from protocol import EpisodeRecord, EpisodeSpec, ScriptedUser, Turn, Verdict, generate
from scoring.replay.episode_score import score_episode
from tests.scoring_records import Act, build, cell, perfect

V1_LOGS = Path(__file__).parent.parent / "data" / "v1_logs.jsonl"
V3_LOGS = Path(__file__).parent.parent / "data" / "v3_logs.jsonl"


class _Golden(msgspec.Struct, kw_only=True):
    policy: str
    record: EpisodeRecord
    success: bool
    channels: dict[str, int]
    n_turns: int


def _rescored_golden(path: Path, generator: int) -> list[_Golden]:
    """The golden lines of ``path``, each rescored to the success, channels and turn count
    it was written with."""
    lines = [msgspec.json.decode(line, type=_Golden) for line in path.read_bytes().splitlines()]
    assert len(lines) == 15
    for g in lines:
        assert g.record.spec.generator == generator
        score = score_episode(g.record)
        assert score.mismatches == (), (g.policy, score.mismatches)
        assert score.primary.success == g.success
        assert score.primary.channels == g.channels
        assert score.primary.n_turns == g.n_turns
    assert {g.success for g in lines} == {True, False}
    return lines


def test_logs_made_with_generator_1_rescore_to_their_old_scores() -> None:
    # tests/data/v1_logs.jsonl was written by the generator and scorer before versions
    # existed (specs without a "generator" field): perfect, never-booking and always-booking
    # agents on five specs (ambiguous probes, tier 1, both briefs, both domains).
    assert b'"generator"' not in V1_LOGS.read_bytes()
    _rescored_golden(V1_LOGS, 1)


def test_logs_made_with_generator_3_rescore_to_their_old_scores() -> None:
    # tests/data/v3_logs.jsonl was written by the generator and scorer before version 4
    # (commit 3a6db6c): perfect, never-booking and always-booking agents on five version-3
    # specs (both schedules, ambiguous probes on the realized state, tier 1, both domains).
    lines = _rescored_golden(V3_LOGS, 3)
    assert any(t.kind == "ambiguous" for g in lines for t in g.record.turns)


def test_generator_1_episodes_are_byte_identical_to_before_versions() -> None:
    digest = hashlib.sha256()
    for spec in (
        EpisodeSpec(seed=100, steps=5, density=0.3),
        EpisodeSpec(seed=101, steps=10, density=0.15, brief="original"),
        EpisodeSpec(seed=102, steps=15, density=0.3, ambiguous_rate=0.15),
        EpisodeSpec(seed=103, steps=18, density=0.15, domain="release"),
        EpisodeSpec(seed=104, steps=15, density=0.3, paraphrase_tier=1),
    ):
        ep = generate(spec)
        digest.update(msgspec.json.encode((ep.steps, ep.revision, ep.turns, ep.brief)))
    # The digest of these episodes computed on the commit before versions existed.
    assert digest.hexdigest() == "897da7a36c35a5b4927a45dc852f4ea09d73814f597477eee4ec2a6e6b5627f4"


def _case(generator: int) -> EpisodeRecord:
    """Issue #22's case: seed 100, S = 5, rho = 0.3. Turn 4 is a premature ask of s3, the
    revision at turn 9 drops its prerequisite, turn 18 is the planned re-ask of s3, which the
    agent omits (and the dynamic re-ask version 1 adds); otherwise the agent is perfect."""
    ep = generate(EpisodeSpec(seed=100, steps=5, density=0.3, generator=generator))
    planned = {t.index: t for t in ep.turns}
    assert planned[4].kind == "premature" and planned[4].step == "s3"
    assert planned[9].kind == "revision" and planned[18].kind == "re_ask"
    assert planned[18].step == "s3"
    perfect_policy = perfect(ep)

    def policy(turn: Turn, verdict: Verdict | None) -> Act:
        if turn.index == 18 or turn.dynamic:
            return Act("I will get to it later.")
        return perfect_policy(turn, verdict)

    return build(ep, cell("raw", ep.spec), policy)


def test_a_missed_planned_re_ask_is_one_omission_from_version_2() -> None:
    old, new = _case(1), _case(2)
    assert len(old.turns) == 45 and sum(t.dynamic for t in old.turns) == 1
    assert score_episode(old).primary.channels["omission"] == 2
    assert len(new.turns) == 44 and not any(t.dynamic for t in new.turns)
    score = score_episode(new)
    assert score.mismatches == ()
    assert score.primary.channels["omission"] == 1
    assert score.primary.errors == 1


def _never(turn: Turn, verdict: Verdict | None) -> Act:
    return Act("Noted.")


def test_a_never_booking_agent_gets_no_dynamic_turn_where_a_planned_re_ask_exists() -> None:
    dynamic = {1: 0, 2: 0}
    for generator in (1, 2):
        for seed in range(100, 228):
            ep = generate(EpisodeSpec(seed=seed, steps=5, density=0.3, generator=generator))
            user = ScriptedUser(ep)
            eligible_asked: set[str] = set()  # planned asks served while eligible
            while (turn := user.next_turn()) is not None:
                verdict = user.begin(turn)
                if turn.dynamic:
                    dynamic[generator] += 1
                    if generator == 2:
                        assert turn.step not in eligible_asked, (seed, turn)
                elif turn.kind in ("ask", "premature", "re_ask") and verdict:
                    eligible_asked |= {turn.step or ""} if verdict.label == "eligible" else set()
                user.finish(turn, verdict, [])
    # Issue #22: version 1 asks 99 dynamic re-asks over these 128 episodes.
    assert dynamic[1] == 99
    assert dynamic[2] < dynamic[1]


def test_the_manifest_records_the_generator_and_refuses_to_resume_under_another(
    tmp_path: Path,
) -> None:
    import orjson
    import pytest

    from runner.grid.expand import parse_grid
    from runner.rundir.manifest import MANIFEST, ManifestError, grid_digest, write_or_check_manifest

    new = parse_grid({"run": {"arms": ["raw"]}, "models": [{"name": "m"}]})
    old = parse_grid({"run": {"arms": ["raw"], "generator": 1}, "models": [{"name": "m"}]})
    assert grid_digest(new) == grid_digest(old)  # the version is checked on its own
    assert write_or_check_manifest(tmp_path, new).resumed is False
    assert orjson.loads((tmp_path / MANIFEST).read_bytes())["generator_version"] == 6
    with pytest.raises(ManifestError, match="run with generator version 6 and this grid uses 1"):
        write_or_check_manifest(tmp_path, old)
    # A manifest written before versions existed is a version-1 run.
    data = orjson.loads((tmp_path / MANIFEST).read_bytes())
    del data["generator_version"]
    (tmp_path / MANIFEST).write_bytes(orjson.dumps(data))
    assert write_or_check_manifest(tmp_path, old).resumed is True
    with pytest.raises(ManifestError, match="set \\[run\\] generator = 1 to resume it"):
        write_or_check_manifest(tmp_path, new)
