"""The run details block (#40, item 8): a manifest's served models, decoding, seeds, axes,
generator, git revision, versions, start, resumes and overrides, as (field, value) pairs."""

from __future__ import annotations

from scoring.report.details import run_details

MANIFEST = {
    "generator_version": 4,
    "git_revision": "abc123",
    "versions": {"python": "3.11.7"},
    "started": 0.0,
    "grid": {
        "run": {"seeds": "100-131", "steps": [5, 10], "density": [0.15], "arms": ["raw"],
                "domains": ["procurement"], "briefs": ["amended"]},
        "endpoints": [{"name": "e", "base_url": "http://gpu:8000/v1", "base_urls": []}],
        "models": [{"name": "qwen3-235b", "served": "scripted/synthetic", "endpoint": "e"}],
        "decoding": {"temperature": 0.7, "top_p": 0.9, "reply_budget": {"no-think": 300}},
    },
    "history": [{"time": 0.0, "overrides": {"--seeds": "100-131"}}, {"time": 60.0}],
}  # fmt: skip


def test_the_details_of_a_manifest() -> None:
    details = dict(run_details(MANIFEST))
    assert details["model"] == "qwen3-235b <- scripted/synthetic (no-think) at http://gpu:8000/v1"
    assert details["decoding"] == "temperature 0.7; top_p 0.9; reply budget no-think 300"
    assert details["seeds"] == "100-131" and details["graphs"] == "S=5 rho=0.15, S=10 rho=0.15"
    assert details["git revision"] == "abc123" and details["generator"] == "4"
    assert details["started"] == "1970-01-01 00:00:00 UTC"
    assert details["resumed"] == "1 times, last 1970-01-01 00:01:00 UTC"
    assert details["overrides (run 1)"] == "--seeds 100-131"


def test_a_missing_or_odd_manifest_gives_what_it_has() -> None:
    assert run_details({}) == []
    assert run_details({"grid": "not a grid", "history": "x"}) == []
