"""``scripts/e2e-real.sh`` (#49, item 8): a free port of its own, a taken one refused, the
output folder named after the model and the chat format. Its plan only (``E2E_PLAN=1``):
the real model is not run here."""

from __future__ import annotations

import os
import socket
import subprocess
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "e2e-real.sh"


def _script(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", str(SCRIPT), *args],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_the_plan_names_the_model_and_the_chat_format() -> None:
    plans = {
        (choice, fmt): _script(choice, E2E_PLAN="1", CHAT_FORMAT=fmt).stdout.split()
        for choice, fmt in (("gemma3", ""), ("gemma3", "chatml"), ("smollm2", ""))
    }
    assert plans[("gemma3", "")][-1] == "runs/e2e-real-gemma3-gemma"
    assert plans[("gemma3", "chatml")][-1] == "runs/e2e-real-gemma3-chatml"
    assert plans[("smollm2", "")][-1] == "runs/e2e-real-smollm2-native"
    port = int(plans[("smollm2", "")][1].rstrip(","))
    assert 0 < port < 65536


def test_a_taken_port_is_refused() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        done = _script("smollm2", PORT=str(port))
    assert done.returncode == 2
    assert done.stderr.strip() == (
        f"error: port {port} is taken: a server there would answer for smollm2; stop it or "
        "pick another PORT"
    )
    free = _script("smollm2", PORT=str(port), E2E_PLAN="1")  # closed now: free again
    assert free.returncode == 0 and free.stdout.startswith(f"port {port}, ")
