"""The ``premature`` wordings are optional in a pack (issue #37): only generators 1-2 read
them (``protocol.episode.wording.wording_v1``; version 3 on words a premature ask with ``asks``). A
pack without them passes every check and serves generators 3 on with the very episodes of the
same pack with them; generators 1-2 refuse it in one line. The built-in packs keep theirs, so
old logs regenerate and rescore unchanged, and every pack that has them keeps its digest."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import msgspec
import pytest

from protocol.config import EpisodeSpec
from protocol.domains.known import BUILTIN, forget, register
from protocol.domains.packs import PackError, check_pack, pack_digest, pack_toml, parse_pack
from protocol.domains.shape import DomainPool
from protocol.episode.generate import generate
from protocol.episode.versions import SpecError, check_spec
from protocol.records import Episode
from tests.pack_kit import pack_text, pool

SRC = "my.toml"
EXAMPLE = Path(__file__).parent.parent.parent.parent / "examples" / "domains" / "trial_startup.toml"

# Computed on main before the field became optional (the commit of generator 5).
DIGESTS = {
    "procurement": "f7f6c62318e5fab5",
    "release": "8601d1355f1d2756",
    "garden": "b2e1a94eca18ba14",  # tests/pack_kit.py
    "trial-startup": "fd69fae67753e0af",  # examples/domains/trial_startup.toml
}


def _without(p: DomainPool) -> DomainPool:
    ts = tuple(msgspec.structs.replace(t, premature=()) for t in p.templates)
    return msgspec.structs.replace(p, templates=ts)


@contextmanager
def _loaded(p: DomainPool) -> Iterator[str]:
    digest = register(p)
    try:
        yield digest or ""
    finally:
        forget(p.name)


def _episodes(p: DomainPool, generator: int, seeds: range) -> list[Episode]:
    with _loaded(p) as digest:
        return [
            generate(
                EpisodeSpec(
                    seed=s,
                    steps=6 + s % 12,
                    density=0.3,
                    domain=p.name,
                    generator=generator,
                    domain_digest=digest,
                    paraphrase_tier=s % 2,
                )
            )
            for s in seeds
        ]


def test_packs_that_have_them_keep_their_digest_and_wordings() -> None:
    example = parse_pack(EXAMPLE.read_text(encoding="utf-8"), str(EXAMPLE))
    for p in (*BUILTIN.values(), pool(), example):
        assert pack_digest(p) == DIGESTS[p.name]
        assert all(len(t.premature) == 3 for t in p.templates), p.name


def test_a_pack_without_them_passes_every_check_and_round_trips() -> None:
    text = pack_text(_without(pool()))
    assert "premature" not in text
    p = parse_pack(text, SRC)
    assert check_pack(p, SRC) == []
    assert all(t.premature == () for t in p.templates)
    assert parse_pack(pack_toml(p), SRC) == p
    # an explicit empty list is the same pack
    assert parse_pack(text.replace("phase = 0\n", "phase = 0\npremature = []\n", 1), SRC) == p


def test_a_partial_list_is_one_line() -> None:
    text = pack_text(at="garden-soil", premature=("Soil work now ({wo}).", "Soil work ({wo})!"))
    with pytest.raises(PackError) as e:
        parse_pack(text, SRC)
    assert e.value.problems == [
        f"{SRC}: template garden-soil: premature: 2 wordings, need exactly 3 or none "
        "(generators 1-2 only)"
    ]


def test_wordings_given_are_still_checked() -> None:
    bad = ("Soil work again ({wo}) [TASK-STATE]", "Soil work ({wo}).", "Soil test ({wo}).")
    with pytest.raises(PackError) as e:
        parse_pack(pack_text(at="garden-soil", premature=bad), SRC)
    assert e.value.problems == [
        f"{SRC}: template garden-soil: premature[0]: reads like an arm's, a receipt's or a "
        "forwarded message's text (reserved)"
    ]


@pytest.mark.parametrize("generator", [1, 2])
def test_generators_1_and_2_word_premature_asks_with_them(generator: int) -> None:
    p = pool()
    premature = {w for t in p.templates for w in t.premature}
    eps = _episodes(p, generator, range(6))
    used = [
        turn
        for ep in eps
        for turn in ep.turns
        if turn.kind == "premature"
        and any(turn.text == w.format(wo=turn.work_order) for w in premature)
    ]
    assert used and all(t.kind == "premature" for t in used)


@pytest.mark.parametrize("generator", [3, 4, 5])
def test_generators_3_on_never_read_them(generator: int) -> None:
    """The same episodes, turn for turn, with the wordings and without them."""
    with_them = _episodes(pool(), generator, range(6))
    without = _episodes(_without(pool()), generator, range(6))
    for a, b in zip(with_them, without, strict=True):
        assert a.spec.domain_digest != b.spec.domain_digest
        assert a.turns == b.turns and a.steps == b.steps and a.brief == b.brief
    assert any(t.kind == "premature" for ep in with_them for t in ep.turns)


@pytest.mark.parametrize("generator", [1, 2])
def test_generators_1_and_2_refuse_a_pack_without_them_in_one_line(generator: int) -> None:
    p = _without(pool())
    with _loaded(p) as digest:
        spec = EpisodeSpec(seed=1, steps=8, density=0.3, domain=p.name, generator=generator,
                           domain_digest=digest)  # fmt: skip
        for call in (check_spec, generate):
            with pytest.raises(SpecError) as e:
                call(spec)
            assert str(e.value) == (
                "domain pack 'garden' has no premature wordings (template garden-soil and 17 "
                "more); generators 1-2 word premature asks with them: add three to each "
                "template, or use generator 3 or later"
            )
    # one template missing them is named alone
    ts = tuple(
        msgspec.structs.replace(t, premature=()) if t.slug == "garden-jam" else t
        for t in pool().templates
    )
    with _loaded(msgspec.structs.replace(pool(), templates=ts)) as digest:
        spec = msgspec.structs.replace(spec, domain_digest=digest)
        with pytest.raises(SpecError, match=r"\(template garden-jam\); generators 1-2"):
            check_spec(spec)
