"""API keys kept out of every stored or printed string (OURS, #47).

Pure text in, text out, so it lives in ``scoring``, the one layer both ``runner`` and
``tau2gate`` may import (docs/architecture.md): the run's writers and the gate's
(:mod:`tau2gate.files`) share one set of keys. ``runner.redact`` re-exports it.

An endpoint registers its key (:func:`add_secret`) when it is made; from then on
:func:`redact` (text) and :func:`redact_bytes` (a line about to be written) replace the key,
its lowercase and its uppercase with ``[redacted]``, and the value after any ``Bearer``
(an ``Authorization`` header a server echoed) too, whatever the source: a model's reply
quoting the key, a server's error body echoing it lowercased, a traceback's text.

The one appender and ``write_atomic`` (:mod:`runner.files`, and the gate's
:mod:`tau2gate.files`) redact every line and file they
write, the endpoint redacts replies and error messages as they arrive (so the run and its
log agree), and the CLI's one-line errors are redacted where they are made
(:class:`ladder.errors.UsageError`).

A key shorter than :data:`MIN_SECRET` characters is not replaced: a placeholder such as
vLLM's ``EMPTY`` is no secret, and replacing ``empty`` in a log would corrupt its records
(``empty_reply``). A ``Bearer`` value is replaced when it looks like a token: at least 8
characters of the token alphabet with a digit, ``-`` or ``_`` among them (so "bearer of
bad news" is left alone). A line with no key and no ``bearer`` (in any case) is returned
as it came, after a substring test per key and one for ``bearer`` on its lowercase: the
``Bearer`` pattern, a case-insensitive scan tens of times slower than the test (#50), runs
only on a line that holds the word, so every reply and every log line pays microseconds.
"""

from __future__ import annotations

import re

__all__ = ["MIN_SECRET", "REDACTED", "add_secret", "clear_secrets", "redact", "redact_bytes"]

MIN_SECRET = 8
REDACTED = "[redacted]"

_TOKEN = r"(?=[A-Za-z0-9._~+/-]*[0-9_-])[A-Za-z0-9._~+/-]{8,}=*"
_BEARER = re.compile(rf"(?i)(\bbearer[ \t]+){_TOKEN}")
_BEARER_BYTES = re.compile(rf"(?i)(\bbearer[ \t]+){_TOKEN}".encode())
_keys: list[str] = []
_keys_bytes: list[bytes] = []


def add_secret(key: str | None) -> None:
    """Redact ``key`` (and its lowercase and uppercase) from now on in this process."""
    if not key or len(key) < MIN_SECRET:
        return
    for form in dict.fromkeys((key, key.lower(), key.upper())):
        if form not in _keys:
            _keys.append(form)
            _keys_bytes.append(form.encode("utf-8"))
    _keys.sort(key=len, reverse=True)
    _keys_bytes.sort(key=len, reverse=True)


def clear_secrets() -> None:
    """Forget every registered key (tests)."""
    _keys.clear()
    _keys_bytes.clear()


def redact(text: str) -> str:
    """``text`` with every registered key and every ``Bearer`` token replaced."""
    for key in _keys:
        if key in text:
            text = text.replace(key, REDACTED)
    # No character folds to one of b, e, a, r but its own case (re's IGNORECASE), so the
    # pattern can match only where the lowercase holds "bearer".
    if "bearer" not in text.lower():
        return text
    return _BEARER.sub(rf"\g<1>{REDACTED}", text)


def redact_bytes(data: bytes) -> bytes:
    """:func:`redact` on UTF-8 bytes (a JSON line stays valid JSON: the replacement holds
    no quote and no backslash, and a token holds neither)."""
    for key in _keys_bytes:
        if key in data:
            data = data.replace(key, REDACTED.encode())
    if b"bearer" not in data.lower():  # ASCII case folding, as the bytes pattern's
        return data
    return _BEARER_BYTES.sub(rb"\g<1>" + REDACTED.encode(), data)
