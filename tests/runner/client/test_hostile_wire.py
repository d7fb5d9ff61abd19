"""The wire is untrusted (#36): every mode of the hostile loopback endpoint ends a call as a
typed reply or a :class:`CallFailed` with a one-line reason; no other exception escapes."""

from __future__ import annotations

import pytest

from runner.client.endpoint import CallFailed, Endpoint
from runner.client.wire import reply_cap
from tests.hostile_server import MODES, hostile_endpoint

MSG = [{"role": "user", "content": "hi"}]

REPLIES = {
    "content_parts": "I will look into it.",
    "escapes": None,  # any content: shown escaped, never obeyed (the display's tests)
    "deep_json": None,
    "action_flood": None,
}
NO_REPLY = {"content_null": "empty_reply", "content_empty": "empty_reply"}
NO_REPLY["content_filter"] = "content_filter"
CLIENT_ERRORS = {"redirect_file", "redirect_loop", "error_escapes", "error_string", "error_list"}


@pytest.mark.parametrize("mode", MODES)
async def test_every_hostile_reply_is_a_reply_or_a_one_line_failure(mode: str) -> None:
    async with hostile_endpoint() as url:
        ep = Endpoint([url(mode)], attempts=2, backoff_s=0.001, backoff_max_s=0.01, timeout_s=20)
        async with ep:
            try:
                reply = await ep.chat("m", MSG, max_tokens=64)
            except CallFailed as failed:
                assert mode not in REPLIES, f"{mode}: {failed}"
                message = str(failed)
                assert "\n" not in message and len(message) < 400, message
                assert "\x1b" not in message, "an escape reached an error message"
                if mode in NO_REPLY:
                    assert failed.termination == NO_REPLY[mode]
                elif mode in CLIENT_ERRORS:
                    assert failed.termination == "client_error" and failed.attempts == 1
                else:
                    assert failed.termination == "endpoint_error", (mode, failed.termination)
                return
    assert mode in REPLIES, f"{mode} became a reply: {reply.content[:80]!r}"
    want = REPLIES[mode]
    assert want is None or reply.content == want
    assert isinstance(reply.call.finish_reason, str | None)


async def test_a_redirect_is_refused_naming_its_location() -> None:
    async with hostile_endpoint() as url, Endpoint([url("redirect_file")], attempts=1) as ep:
        with pytest.raises(CallFailed, match=r"redirect to 'file:///etc/passwd' not followed"):
            await ep.chat("m", MSG, max_tokens=8)


async def test_an_oversize_reply_is_cut_at_the_cap() -> None:
    async with hostile_endpoint() as url:
        for mode, what in (("flood", "bytes"), ("gzip_bomb", "bytes decompressed")):
            async with Endpoint([url(mode)], attempts=1, timeout_s=20) as ep:
                with pytest.raises(CallFailed, match=f"reply over {reply_cap(64)} {what}"):
                    await ep.chat("m", MSG, max_tokens=64)


async def test_retry_after_is_capped_at_the_backoff_maximum() -> None:
    """999999 s (and 400 nines, which float() reads as inf) wait backoff_max_s at most: the
    call ends at once, where the uncapped delay hung it for days."""
    async with hostile_endpoint() as url:
        for mode in ("retry_after_huge", "retry_after_nines"):
            ep = Endpoint([url(mode)], attempts=3, backoff_max_s=0.01)
            async with ep:
                with pytest.raises(CallFailed, match="429") as failed:
                    await ep.chat("m", MSG, max_tokens=8)
            assert failed.value.attempts == 3


def test_the_reply_cap_grows_with_the_budget() -> None:
    assert reply_cap(0) == 1 << 20
    assert reply_cap(12_000) == (1 << 20) + 2 * 128 * 12_000


@pytest.mark.parametrize("coding", ["gzip", "deflate"])
async def test_a_compressed_reply_is_inflated(coding: str) -> None:
    from aiohttp import web

    from tests.fakes import Script, fake_endpoint, ok

    def compressed(body: dict[str, object]) -> web.StreamResponse:
        resp = ok("squeezed")(body)
        resp.enable_compression(web.ContentCoding(coding))
        return resp

    async with fake_endpoint(Script(compressed)) as url, Endpoint([url], attempts=1) as ep:
        reply = await ep.chat("m", MSG, max_tokens=8)
    assert reply.content == "squeezed"
