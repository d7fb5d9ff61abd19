"""protocol.registry: one registry for every extension point."""

from __future__ import annotations

import pytest

from protocol.registry import Registry, RegistryError, did_you_mean


def _ints() -> Registry[int]:
    return Registry("number", lambda o: isinstance(o, int), group="toy.numbers")


def test_entries_keep_their_order_and_are_read_live() -> None:
    r = _ints()
    r.add("one", 1)
    names = r.names
    r.add("two", 2)
    assert names() == ("one", "two") and r.entries() == (1, 2) and len(r) == 2
    r.remove("one")
    assert r.names() == ("two",) and "one" not in r and list(r) == ["two"]


def test_a_lazy_entry_is_imported_and_checked_on_first_get() -> None:
    r: Registry[object] = Registry("callable", callable)
    r.add_lazy("dumps", "json:dumps")
    r.add_lazy("pi", "math:pi")
    assert "dumps" in r and not r.loaded("dumps")
    import json

    assert r.get("dumps") is json.dumps and r.loaded("dumps")
    with pytest.raises(RegistryError, match="'pi': math:pi is not a valid callable"):
        r.get("pi")
    r.add_lazy("gone", "json:no_such_thing")
    with pytest.raises(RegistryError, match="is not a valid callable"):
        r.get("gone")


def test_mistakes_are_one_line_each() -> None:
    r = _ints()
    r.add("seven", 7)
    with pytest.raises(RegistryError, match="registered twice"):
        r.add("seven", 8)
    with pytest.raises(RegistryError, match="is not a valid number"):
        r.add("half", 0.5)  # type: ignore[arg-type]
    with pytest.raises(RegistryError, match="not 'module:Object'"):
        r.add_lazy("x", "json.dumps")
    with pytest.raises(RegistryError, match=r"unknown number 'sevne' \(did you mean 'seven'\?\)"):
        r.get("sevne")
    with pytest.raises(RegistryError, match="no number 'nine' to remove"):
        r.remove("nine")
    assert r.find("nine") is None and r.find("nine", 0) == 0 and r.find("seven") == 7


def test_a_name_check_and_a_decorator() -> None:
    def lower(name: str) -> None:
        if name != name.lower():
            raise RegistryError(f"{name!r} is not lower case")

    r: Registry[type] = Registry("class", lambda o: isinstance(o, type), check_name=lower)

    @r.register("thing")
    class Thing:
        pass

    assert r.get("thing") is Thing
    with pytest.raises(RegistryError, match="not lower case"):
        r.add("Thing", Thing)


def test_did_you_mean() -> None:
    assert did_you_mean("enforse", ["raw", "enforce"]) == " (did you mean 'enforce'?)"
    assert did_you_mean("zzz", ["raw"]) == ""
