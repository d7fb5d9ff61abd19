"""The built-in domains are data files (issue #30): the packs shipped as package data decode to
the pools the generator always read, so every generator version's episodes are unchanged.
The digests were computed on main before the packs existed (the commit of generator 4)."""

from __future__ import annotations

import hashlib

import msgspec
import pytest

from protocol.config import EpisodeSpec
from protocol.domains.known import BUILTIN, builtin_text
from protocol.domains.packs import check_pack, pack_toml, parse_pack
from protocol.episode.generate import generate
from protocol.episode.versions import GENERATOR_VERSIONS

ENC = msgspec.json.Encoder()

# (generator version, domain) -> SHA-256 of the episodes of seeds 100..227
EPISODES = {
    (1, "procurement"): "6e85abccd51d86106049034442b030c9e755376cf580a4d3b0b9b542290f5117",
    (1, "release"): "d6d4d05da00d5e73afe60c6a8f9618fa27c8508ee5e2f9ce57c20ca414073be3",
    (2, "procurement"): "90f313ec5bb7e722740ce117e4d3cee49c1270719769bd12a65f472a4c01154d",
    (2, "release"): "f32a36e2a4f94953e6f6042a2f3252227257e770799a37ca602054fa43e37bd7",
    (3, "procurement"): "20966a97bc79236dd9e3958ae9334c1696610ad4accab686c925767a76ef69da",
    (3, "release"): "2d9a8fab91bad4835a4322ab75b3af61ab05610e1f3a6f864ea14f06bd21e148",
    (4, "procurement"): "5c019037d25be8b38e8f43a7cd2c8bd679bc1c345334552b812ae5774d2883d3",
    (4, "release"): "6d51cd95cd73a52061695252761561ef2fd95e00b42d25390d045cf7935d9879",
    # generator 5 (issue #37): domain-free streams (domains pair by seed), the brief's clause
    (5, "procurement"): "06c8785a31134253f2117970cb2fb732f5b68467f2a02a9fb037f0df877cc006",
    (5, "release"): "729801ecb7a0fee9756abe76cab68622d86c8731f44de1c93aea8094d684a2c6",
    # generator 6 (issues #46, #48): version 5's episodes (only the spec's version differs:
    # checked when pinned, and by test_version_6_is_version_5s_episodes); its changes are the
    # dose and the rule knobs
    (6, "procurement"): "0094fc385a4f7b675e0262171b5abbae724910a99df6ddc4592cdb8e12ea2234",
    (6, "release"): "a0913cc72bad009b8839626ce87045e88b403b2091db27850343003a970cc450",
}


def _spec(seed: int, version: int, domain: str) -> EpisodeSpec:
    """Sizes, densities, briefs, tiers and ambiguous rates vary with the seed."""
    return EpisodeSpec(
        seed=seed,
        steps=5 + seed % 14,
        density=(0.1, 0.15, 0.3, 0.5)[seed % 4],
        domain=domain,
        brief="original" if seed % 3 == 0 else "amended",
        paraphrase_tier=seed % 2,
        ambiguous_rate=0.25 if seed % 4 == 1 else 0.0,
        generator=version,
    )


def test_every_version_and_domain_is_pinned() -> None:
    assert sorted(EPISODES) == [(v, d) for v in GENERATOR_VERSIONS for d in sorted(BUILTIN)]


def test_version_6_is_version_5s_episodes() -> None:
    for domain in sorted(BUILTIN):
        for seed in range(100, 116):
            five, six = generate(_spec(seed, 5, domain)), generate(_spec(seed, 6, domain))
            assert msgspec.structs.replace(six, spec=five.spec) == five


@pytest.mark.parametrize(("version", "domain"), sorted(EPISODES))
def test_built_in_packs_reproduce_the_episodes_byte_for_byte(version: int, domain: str) -> None:
    digest = hashlib.sha256()
    for seed in range(100, 228):
        digest.update(ENC.encode(generate(_spec(seed, version, domain))) + b"\n")
    assert digest.hexdigest() == EPISODES[version, domain]


@pytest.mark.parametrize("name", sorted(BUILTIN))
def test_built_in_packs_pass_their_checks_and_round_trip(name: str) -> None:
    pool = BUILTIN[name]
    assert check_pack(pool, name) == []
    assert len(pool.templates) == 18 and pool.name == name
    assert parse_pack(pack_toml(pool), name) == pool
    assert parse_pack(builtin_text(name), name) == pool


def test_built_in_packs_share_the_per_phase_histogram() -> None:
    # Appendix E.3: the same per-phase histogram in both domains, three per phase 0..5
    hist = {n: sorted(t.phase for t in p.templates) for n, p in BUILTIN.items()}
    assert hist["procurement"] == hist["release"] == [p for p in range(6) for _ in range(3)]
