"""The viewer answers loopback names only (DNS rebinding) and sends a strict CSP (#36)."""

from __future__ import annotations

from pathlib import Path

import aiohttp

from runner.viewer.app import CSP, serve


async def test_host_is_checked_and_every_answer_carries_the_csp(tmp_path: Path) -> None:
    (tmp_path / "logs").mkdir()
    runner, url = await serve(tmp_path, 0)
    try:
        async with aiohttp.ClientSession() as session:
            for host, status in (
                (None, 200),
                ("localhost:1234", 200),
                ("[::1]:80", 200),
                ("evil.example:8080", 403),
                ("127.0.0.1.nip.io", 403),
                ("", 403),
            ):
                headers = {} if host is None else {"Host": host}
                for path in ("", "api/cells", "static/nope.js"):
                    async with session.get(url + path, headers=headers) as resp:
                        want = status if status == 403 or path != "static/nope.js" else 404
                        assert resp.status == want, (host, path, resp.status)
                        assert resp.headers["Content-Security-Policy"] == CSP
                        assert resp.headers["X-Content-Type-Options"] == "nosniff"
    finally:
        await runner.cleanup()
    assert "script-src 'self'" in CSP and "unsafe" not in CSP
