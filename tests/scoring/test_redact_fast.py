"""The redaction's quick path (#50): a line without ``bearer`` in its lowercase skips the
case-insensitive ``Bearer`` pattern, and that skips nothing the pattern would replace."""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator

import pytest
from hypothesis import given
from hypothesis import strategies as st

from scoring import redact as redact_mod
from scoring.redact import REDACTED, clear_secrets, redact, redact_bytes


@pytest.fixture(autouse=True)
def _fresh_secrets() -> Iterator[None]:
    clear_secrets()
    yield
    clear_secrets()


def test_no_character_folds_to_a_letter_of_bearer_but_its_own_case() -> None:
    every = "".join(map(chr, range(sys.maxunicode + 1))).encode("utf-8", "surrogatepass")
    text = every.decode("utf-8", "surrogatepass")
    matched = set(re.findall("(?i)[bear]", text))
    assert matched == set("bearBEAR")
    assert {c.lower() for c in matched} == set("bear")


_PIECES = st.sampled_from(
    ["bearer ", "Bearer\t", "BEARER  ", "bEaReR ", "tok3n-abcdef", "xyz_12345678", "of bad news",
     "é", "İ", "ſ", " ", "\n", "abc", "=="]
)  # fmt: skip


@given(st.lists(st.one_of(_PIECES, st.text(max_size=12)), max_size=12))
def test_the_quick_path_equals_the_pattern(parts: list[str]) -> None:
    text = "".join(parts)
    assert redact(text) == redact_mod._BEARER.sub(rf"\g<1>{REDACTED}", text)
    data = text.encode("utf-8", "surrogatepass")
    expected = redact_mod._BEARER_BYTES.sub(rb"\g<1>" + REDACTED.encode(), data)
    assert redact_bytes(data) == expected
