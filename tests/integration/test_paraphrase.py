"""`ladder paraphrase` (Appendix A.5) end to end on loopback: the scripted endpoint's rewriter
answers every prompt, each rewrite is checked, a failed check is retried and then reported,
a rerun resumes, and the cache it writes drives tier 2."""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest
from typer.testing import CliRunner

from ladder.app import app
from protocol import strings
from protocol.domains.known import PROCUREMENT, RELEASE
from protocol.episode.generate import generate
from protocol.episode.paraphrases import REWRITES, content_words, rewrite_problems, rewrite_sources
from protocol.records import EpisodeSpec
from runner.grid.paraphrase_cache import load_paraphrases
from runner.paraphrase.rewriter import clean_reply, rewrite_prompt

runner = CliRunner()


def test_the_paper_counts_108_templates() -> None:
    for pool in (PROCUREMENT, RELEASE):
        sources = rewrite_sources(pool)
        assert len(sources) == 108 and len(sources) * REWRITES == 324
        assert {s.kind for s in sources} == {"asks", "redo_probes"}


def test_rewrite_checks() -> None:
    source = rewrite_sources(PROCUREMENT)[0]
    seen: dict[str, str] = {}
    good = f"Could you {source.step_text} ({{wo}})?"
    assert rewrite_problems(good, source, seen) == []
    assert "the same string" in rewrite_problems(good, source, seen)[0]  # not distinct
    assert rewrite_problems(source.wording, source, {})  # the wording itself
    assert rewrite_problems("Could you do it now?", source, {})  # no {wo}, no noun
    nouns = content_words(source.step_text)
    off_topic = "Handle the thing for order {wo}."
    assert not nouns & content_words(off_topic) and rewrite_problems(off_topic, source, {})


def test_prompt_and_reply_cleaning() -> None:
    source = rewrite_sources(PROCUREMENT)[3]
    prompt = rewrite_prompt(source, 2, ["An earlier one ({wo})."])
    assert prompt.startswith(strings.REWRITE_PROMPT.split("{")[0])
    assert f"Request: {source.wording}" in prompt and "rewrite 2 of 3" in prompt
    assert "- An earlier one ({wo})." in prompt and source.step_text in prompt
    assert clean_reply('\n  "Rewrite: Kindly do X ({wo})."\nextra') == "Kindly do X ({wo})."


def _calls(path: Path) -> list[dict[str, object]]:
    log = path.with_name(path.name + ".calls.jsonl")
    return [msgspec.json.decode(line) for line in log.read_bytes().splitlines()]


def test_paraphrase_writes_a_cache_tier_2_reads(tmp_path: Path) -> None:
    out = tmp_path / "cache.json"
    args = ["paraphrase", "--model", "scripted/perfect", "--base-url", "embedded"]
    result = runner.invoke(app, [*args, "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "324 of 324 rewrites" in result.output
    cache = load_paraphrases(out, ["procurement"], 3)  # every check of the grid's loader
    calls = _calls(out)
    assert len(calls) == 324 and all(c["attempt"] == 1 for c in calls)
    assert {c["call"]["role"] for c in calls} == {"rewriter"}  # type: ignore[index]
    # tier 2 reads the rewrites: every ask of the episode is one of them
    spec = EpisodeSpec(seed=100, steps=10, density=0.15, paraphrase_tier=2, generator=3)
    ep = generate(spec, cache)
    rewrites = {
        r.replace("{wo}", "")
        for entry in cache.values()
        for groups in entry.values()
        for g in groups
        for r in g
    }
    asks = [t for t in ep.turns if t.kind in ("ask", "redo_probe") and t.work_order]
    assert asks and all(t.text.replace(t.work_order or "", "") in rewrites for t in asks)
    # a second run finds the cache complete and asks for nothing
    again = runner.invoke(app, [*args, "--out", str(out)])
    assert again.exit_code == 0 and len(_calls(out)) == 324


def test_failed_checks_are_retried_reported_and_resumed(tmp_path: Path) -> None:
    out = tmp_path / "cache.json"
    bad = ["paraphrase", "--model", "scripted/perfect?rewrite_bad=0.3", "--out", str(out)]
    result = runner.invoke(app, [*bad, "--base-url", "embedded"])
    assert result.exit_code == 1, result.output
    failed = [x for x in result.stderr.splitlines() if x.startswith("failed: ")]
    assert failed and all("{wo}" in x for x in failed)
    calls = _calls(out)
    retried = [c for c in calls if c["attempt"] == 3]
    assert len(retried) >= len(failed)  # every reported failure used all three tries
    first = len(calls)
    kept = msgspec.json.decode(out.read_bytes())
    n_kept = sum(len(g) for e in kept.values() for gs in e.values() for g in gs)
    assert 0 < n_kept < 324
    good = ["paraphrase", "--model", "scripted/perfect", "--base-url", "embedded"]
    resumed = runner.invoke(app, [*good, "--out", str(out)])
    assert resumed.exit_code == 0, resumed.output
    assert len(_calls(out)) - first == 324 - n_kept  # only the missing rewrites were asked
    after = msgspec.json.decode(out.read_bytes())
    for slug, entry in kept.items():  # the kept rewrites are unchanged
        for kind, groups in entry.items():
            for g, new in zip(groups, after[slug][kind], strict=True):
                assert new[: len(g)] == g
    load_paraphrases(out, ["procurement"], 3)


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--domain", "nope"], "unknown domain"),
        (["--base-url", "localhost:8000"], "needs http(s)://"),
        (["--regime", "fast"], "unknown regime"),
        (["--api-key-env", "STATE_LADDER_NO_SUCH_KEY"], "is not set"),
        # nothing listens on port 9: one line, not 108
        (["--base-url", "http://127.0.0.1:9/v1", "--call-attempts", "1"], "connection"),
    ],
)
def test_bad_input_is_one_line(tmp_path: Path, extra: list[str], message: str) -> None:
    args = ["paraphrase", "--model", "m", "--out", str(tmp_path / "c.json"), *extra]
    result = runner.invoke(app, args)
    assert result.exit_code == 2
    assert message in result.stderr and len(result.stderr.strip().splitlines()) == 1


def test_paraphrase_takes_a_domain_file(tmp_path: Path) -> None:
    """`ladder paraphrase --domain-file` rewrites a pack's wordings (issue #37)."""
    from protocol.domains.known import forget
    from tests.pack_kit import pack_text

    pack = tmp_path / "garden.toml"
    pack.write_text(pack_text())
    out = tmp_path / "cache.json"
    args = ["paraphrase", "--model", "scripted/perfect", "--base-url", "embedded"]
    try:
        result = runner.invoke(app, [*args, "--domain-file", str(pack), "--out", str(out)])
        assert result.exit_code == 0, result.output
        assert "324 of 324 rewrites" in result.output
        assert load_paraphrases(out, ["garden"], 3)
        bad = tmp_path / "bad.toml"
        bad.write_text(pack_text(fillers=("Only one.",)))
        result = runner.invoke(app, [*args, "--domain-file", str(bad), "--out", str(out)])
        assert result.exit_code != 0 and "need at least 3" in result.output
        assert "Traceback" not in result.output
    finally:
        forget("garden")
