"""One stop-word list (issue #45): the scripted agents' fuzzy reading of a request and the
pack checks' key words read the same words."""

from __future__ import annotations

from protocol.domains import packs
from protocol.domains.stop_words import STOP_WORDS
from serve.agents import resolve


def test_the_resolver_reads_the_packs_list() -> None:
    assert resolve._content(" ".join(sorted(STOP_WORDS))) == set()  # every word of it
    assert {"you", "now", "each", "first"} <= STOP_WORDS
    # a word of the list carries no step identity in either reader
    assert "each" not in packs.key_words("Approve each purchase order")
    assert resolve._content("please approve each purchase order now") == {
        "approve",
        "purchase",
        "order",
    }
