"""Each domain's compile request is the one shared template filled in
(tau2gate.strings.compile_prompt), byte for byte the text it had as three literals: a
changed prompt would invalidate every compile cache and move the gate's compiles."""

from __future__ import annotations

import hashlib

from tau2gate.airline.strings import COMPILE_PROMPT as AIRLINE
from tau2gate.retail.strings import COMPILE_PROMPT as RETAIL
from tau2gate.telecom.strings import COMPILE_PROMPT as TELECOM

# sha256 of each domain's prompt as written out in full before the template
PINNED = {
    "airline": "e3274d5e9dc7c12754fcc695f6e7a0e83bd288501a621464eeaa3d7f6a2a58f0",
    "retail": "7295cb80b35e317fa2a15210f12b6c4430d05fb3489abb0ead2f04f2bd36159f",
    "telecom": "a5f6eb8b5a30d8b66e7d10b1371dcfa8a09f8573e7229358b50a67b7af08c5da",
}


def test_each_domain_prompt_is_its_old_text() -> None:
    got = {
        name: hashlib.sha256(text.encode()).hexdigest()
        for name, text in (("airline", AIRLINE), ("retail", RETAIL), ("telecom", TELECOM))
    }
    assert got == PINNED


def test_the_prompt_names_its_domain_and_asks_for_now_only_where_needed() -> None:
    assert AIRLINE.startswith("You are compiling an airline customer-service policy")
    assert '"now"' in AIRLINE and '"now"' in TELECOM and '"now"' not in RETAIL
    for text in (AIRLINE, RETAIL, TELECOM):
        assert "@" not in text  # every slot filled
        assert text.format(tools="T", facts="F", policy="P").endswith("<policy>\nP\n</policy>")
