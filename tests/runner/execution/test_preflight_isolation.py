"""A failed preflight stops only that model (#47): in a two-endpoint grid whose second
server (a real loopback HTTP server) refuses the model (a 404 at the preflight's tiny
request) or lists other models at ``/models``, that model's cells are skipped and named in
one ``error:`` line (exit 3, as ModelsStopped), while the healthy model's cells run to the
end; when every model fails, nothing runs: exit 2 and no run directory, as before."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ladder.app import app
from tests.reliability_kit import grid_data, grid_toml, records

HEALTHY = "scripted/perfect"
BROKEN = "elsewhere/model"


class _Refusing(BaseHTTPRequestHandler):
    """Lists ``other/model`` at /models; answers every chat request 404 (unknown model), or
    (``answers``) with a one-token reply, so that only the /models check fails."""

    answers = False

    def do_GET(self) -> None:
        self._send(200, {"object": "list", "data": [{"id": "other/model"}]})

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if not self.answers:
            self._send(404, {"error": {"message": "model not found", "type": "not_found"}})
            return
        message = {"role": "assistant", "content": "ok"}
        self._send(200, {
            "id": "x", "object": "chat.completion", "model": BROKEN,
            "choices": [{"index": 0, "message": message, "finish_reason": "length"}],
            "usage": {"prompt_tokens": 5, "completion_tokens": 1, "total_tokens": 6},
        })  # fmt: skip

    def _send(self, status: int, body: object) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: object) -> None:
        pass


class _Answering(_Refusing):
    answers = True


@pytest.fixture(params=[_Refusing, _Answering], ids=["404", "not-listed"])
def refusing_url(request: pytest.FixtureRequest) -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), request.param)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(autouse=True)
def _default_loop_policy() -> Iterator[None]:
    yield
    asyncio.set_event_loop_policy(None)  # `ladder run` installs uvloop's


def _grid(
    tmp_path: Path,
    url: str,
    models: list[dict[str, str]],
    arms: tuple[str, ...] = ("raw", "checklist"),
) -> Path:
    data = grid_data(seeds="100-103", arms=arms, models=models)
    data["endpoints"].append({"name": "far", "base_url": url, "max_in_flight": 4})
    data["decoding"]["timeout_s"] = 30
    grid = tmp_path / "grid.toml"
    grid.write_text(grid_toml(data))
    return grid


def test_a_model_whose_preflight_fails_stops_alone(tmp_path: Path, refusing_url: str) -> None:
    models = [{"name": BROKEN, "endpoint": "far"}, {"name": HEALTHY, "endpoint": "embedded"}]
    out = tmp_path / "run"
    args = ["run", str(_grid(tmp_path, refusing_url, models)), "--out", str(out), "--no-live"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 3, result.output
    assert "Traceback" not in result.output
    lines = [x for x in result.stderr.splitlines() if x.startswith("error:")]
    assert lines and all(len(x) <= 80 for x in lines), lines  # one error, wrapped (#49)
    error = " ".join(x.removeprefix("error:").strip() for x in lines)
    assert error.startswith(f"model '{BROKEN}' stopped: preflight: "), error
    assert "404" in error or "is not served at" in error, error
    assert f"model '{BROKEN}' stopped at the preflight" in result.stdout  # said before the run
    recs = list(records(out).values())
    assert len(recs) == 8 and {r.cell.model for r in recs} == {HEALTHY}
    assert all(r.termination == "completed" for r in recs)


def test_every_model_failing_its_preflight_runs_nothing(tmp_path: Path, refusing_url: str) -> None:
    models = [{"name": BROKEN, "endpoint": "far"}]
    out = tmp_path / "run"
    args = ["run", str(_grid(tmp_path, refusing_url, models)), "--out", str(out), "--no-live"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2, result.output
    assert "404" in result.stderr or "is not served at" in result.stderr
    assert not out.exists()
