"""``OPENAI_BASE_URL`` is honoured the same way by every command that talks to an endpoint,
and its errors name the URL (issue 28, item 8)."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from tests.reliability_kit import ladder


def _closed_url() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"  # nothing listens there now: connection refused


def _commands(out: Path) -> dict[str, list[str]]:
    return {
        "run": ["run", "--seeds", "100", "--arms", "raw", "--out", str(out / "r"), "--no-live"],
        "paraphrase": [
            "paraphrase",
            "--model",
            "m",
            "--out",
            str(out / "p.json"),
            "--attempts",
            "1",
            "--call-attempts",
            "1",
        ],
    }


@pytest.mark.parametrize("command", ["run", "paraphrase"])
def test_openai_base_url_names_the_endpoint_and_its_errors(command: str, tmp_path: Path) -> None:
    url = _closed_url()
    result = ladder(*_commands(tmp_path)[command], env={"OPENAI_BASE_URL": url}, timeout=60)
    assert f"endpoint {url} (from OPENAI_BASE_URL)" in result.stdout, result.stdout
    assert result.returncode == 2
    err = result.stderr.strip().splitlines()
    assert len(err) == 1 and url.removesuffix("/v1") in err[0], err


@pytest.mark.parametrize("command", ["run", "paraphrase"])
def test_base_url_beats_the_environment(command: str, tmp_path: Path) -> None:
    url, other = _closed_url(), "http://127.0.0.1:9/v1"
    argv = [*_commands(tmp_path)[command], "--base-url", url]
    result = ladder(*argv, env={"OPENAI_BASE_URL": other}, timeout=60)
    assert "from OPENAI_BASE_URL" not in result.stdout and other not in result.stderr
    assert result.returncode == 2 and url.removesuffix("/v1") in result.stderr
