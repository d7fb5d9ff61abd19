"""Shown, never obeyed (#47): a pack whose names or wordings hold a control character (ESC,
RLO, NUL, zero-width) is refused in one line naming where, before any check reads it; the
terminal escape function shows zero-width and direction marks too."""

from __future__ import annotations

from importlib.resources import files

import pytest

from protocol.domains.packs import PackError, parse_pack
from protocol.visible import control_problems, visible

TEXT = files("protocol.domains").joinpath("builtin", "procurement.toml").read_text("utf-8")


def test_the_builtin_pack_holds_no_control_character() -> None:
    parse_pack(TEXT, "procurement.toml")


@pytest.mark.parametrize("bad", ["\\u001b]0;x\\u0007", "\\u202e", "\\u0000", "\\u200b"])
def test_a_control_character_in_a_wording_is_refused_naming_it(bad: str) -> None:
    text = TEXT.replace('({wo})."', "({wo})." + bad + '"', 1)
    assert text != TEXT
    with pytest.raises(PackError) as refused:
        parse_pack(text, "hostile.toml")
    (line,) = refused.value.problems
    assert line.startswith("hostile.toml: re_asks[0] holds the control character \\")


def test_visible_shows_zero_width_and_direction_marks() -> None:
    for c in ("\u200b", "\u200c", "\u200d", "\u200e", "\u200f", "\u061c", "\u2060", "\ufeff"):
        assert visible(f"a{c}b") == f"a\\u{ord(c):04x}b"
    assert control_problems({"a": ["ok", {"b\x1b": 1}]}) == [
        "a[1] holds the control character \\x1b"
    ]
