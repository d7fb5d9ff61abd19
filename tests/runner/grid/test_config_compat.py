"""The configuration's encodings stay byte-compatible (issue #26, "One configuration struct"):
every shipped grid's cells keep their slugs, JSON and labels, and logs (tests/data: written
before generator versions, and by ``ladder demo``) decode, re-encode and rescore unchanged.
The digests were computed on the commit before the configuration got one home."""

from __future__ import annotations

import hashlib
import tomllib
from pathlib import Path

import msgspec
import pytest

from protocol.config import CellKey, EpisodeSpec, Knobs, config_label
from protocol.records import EpisodeRecord
from runner.grid.expand import Grid
from scoring.results.cells import config_of
from scoring.results.lines import ContrastLine, line_json
from scoring.results.offline import rescore

GRIDS = Path(__file__).parent.parent.parent.parent / "runner" / "grids"
DATA = Path(__file__).parent.parent.parent / "data"
ENC = msgspec.json.Encoder()
# Defaulted fields added to Knobs (the knobs of issue #31) and to TurnRecord since the
# digests and logs were written: at their defaults, their bytes are all a cell or a record
# gains, and stripped they give back the old bytes.
KNOBS_ADDED = (
    b',"spoof":"none"',
    b',"tool_failure":0.0',
    b',"user_style":"cooperative"',
    # the ask-back knobs (issue #38)
    b',"show":false',
    b',"ask":"off"',
    b',"escalate":false',
    b',"spoof_dose":0.25',  # the stress doses (issue #37)
    b',"user_dose":0.25',
    b',"tool_failure_landed":0.0',  # at-most-once (issue #37)
    b',"budget":0',  # the rules beyond one-shot state (issue #48)
    b',"expiry":0',
    b',"sessions":0',  # several sessions (issue #48)
    b',"handoff":"none"',
    b',"next_model":""',
    b',"exclusive":0',
)
TURNS_ADDED = (
    b',"injected":""',
    b',"matcher_replies":[]',  # #41
    b',"graph_reply":null,"revision_reply":null',  # #41, in the compile record
    # the ask-back exchanges (issue #38)
    b',"question":null',
    b',"answer":null',
    b',"ask_reason":null',
    b',"first_match":null',
    b',"askback_calls":0',
    b',"escalations":[]',
    b',"draw_turn":""',  # the turn part of the draw key (#46)
)
CELL_ADDED = (b',"served_by":""',)  # honest labels (#40): "" unless a scripted model serves
RECORD_ADDED = (b',"trial":0',)  # repeated trials (#40): 0 unless --trials K > 1


def _old(encoded: bytes) -> bytes:
    for added in (b',"retry_notices":[]', *KNOBS_ADDED, *TURNS_ADDED, *CELL_ADDED, *RECORD_ADDED):
        encoded = encoded.replace(added, b"")
    return encoded


# grid file -> (cells, digest of each cell's slug, JSON and configuration label)
CELLS = {
    # the ask-back grids (issue #38)
    "askback-escalate.toml": (
        20,
        "73f9f67c54fde5ab605532e88d7e58ab79cc8709405716ee6a26678e55fe1966",
    ),
    "askback-wording.toml": (
        30,
        "2dcda63edbae43239d66ef255effefc84bd841034302cf025ef5644be3bbe56d",
    ),
    # at-most-once under tool failure (issue #37)
    "at-most-once.toml": (40, "c895de5ce9559f48507813a239fe3704eac05452aa34dada78cbdbcbe20563e6"),
    # the rules beyond one-shot state (issue #48)
    "budget.toml": (20, "5cd13bba562285c777660e81bb15625f504d5fc01067ac54e415e1947d1c2529"),
    "expiry.toml": (15, "238b7fb05dd52d182e5a664ccbbdf02f2c4ae9db1ff3dd833eba29b6503e9020"),
    "sessions.toml": (20, "0f786c63bda1a4b510bb741fcf70efd3da9d2666fecbbf92d349254490c5e431"),
    # the handed variants run for the first model alone (a variant's `models`, #48): the 24
    # cells pinned before (24c6bf50...) less the second model's four handed to itself
    "sessions-handoff.toml": (
        20,
        "311cf507f89253d27136ed4f3ea4e8a0581720fd2d2c8ea51bfc58223d872dfd",
    ),
    "sessions-harness.toml": (
        12,
        "29b519de090bc388d3cc62c73772d3de130b053ed693c9954357eccebc019289",
    ),
    "exclusive.toml": (15, "4e95cbfed78cef975e853e7f838462ce706c22a2a7c1bc087e7e47a058370e38"),
    "corruption.toml": (4, "e1b993627f808ad06a27dee95579974f0e8cf76fe6da7a2005f8c4fa52204792"),
    "deepseek-v4-pro.toml": (
        32,
        "36982311b1411745b0fe3d14e583799c3ce9f5303508fb737d8e7ee9ee74ef7f",
    ),
    "demo.toml": (6, "a0aafffab448b4a81697df2160b8690ca44e06db031f9d8af3d8bbd715c839c4"),
    "memory.toml": (20, "398551d5c3501254e47a146be1069be6252154b861e4f0020d3320c0ac41d5c3"),
    "notice.toml": (4, "e83264825867d7672c6398b3844947bd8daa76322985819be65326d08fcc98f6"),
    "original.toml": (80, "2476b89d6e62000512d861cc5d325d4f52c031648e2a2e23e5248fbb8bceaa4d"),
    "paper.toml": (40, "379f76c4574ab6cb80029da383f36d5d84b028645fcc61934dab36a30fb4f921"),
    "qwen3.6-35b.toml": (16, "4bb853cf3875407ffa5005db8e0b7a8883253d9db4c04dcea8d66733e82933a5"),
    "release.toml": (4, "069c042c88dfbd6c73a88d94e93bd6f49b3aff3505603b4822ec62e14f5c860f"),
    "rendering-qwen3.6-35b.toml": (
        8,
        "ae0ecf5fad719ad2dd791705d4e0b28dd4553f62cba6bb79a02c787a6e46fa11",
    ),
    "rendering.toml": (16, "739ceae2c4f2f0403cb164e66085b19ccc93588addc3ec728ff14d5abf02902a"),
    # spoof and user-style gained dose sweeps (#37); their cells at the default dose keep the
    # digests pinned before (30 cells: 7519aa51..., 20 cells: a10ea2db...)
    # spoof.toml gained `redo` (#46: five arms, raw and enforce at 0.1) and dropped the
    # directive forgery's dose 1 on raw and enforce (generator 6: its two eligible turns are
    # those of 0.25, which `ladder validate` refuses); before: 50 cells, 0f0b27e1...
    "spoof.toml": (55, "17fc0f252873c7c275ab3723eb56b9b8466e43ae7fc222aa9c19d1620eb13a8b"),
    "tool-failure.toml": (30, "168c8141ec601ea32a38e22f283ef382fa7e1aa62e96ade5d4f3726d3f466f33"),
    "tools.toml": (10, "33806c3a567f17d3b763bc9e8c228814d42f9bcf72f1d9b7df4c37032211cb0f"),
    # user-style.toml gained restate's plain control (#46: five arms, raw and enforce at 0.1
    # and 1); before: 32 cells, 2c6e925f...; then double's plain control the same way (#46;
    # the 41 cells without it keep 10fe45e4...)
    "user-style.toml": (50, "1c15dc1ccbd149e5ee298a1c90a0045a726bd8184270aa97aede762ac4db6b1b"),
    "wording.toml": (12, "cee399d09a2009cef97adc69ed7bf9ce2adb58485dbd5ce00493aa3eedbeabfa"),
}


class _Golden(msgspec.Struct, kw_only=True):
    record: EpisodeRecord


def _records(name: str) -> tuple[list[bytes], list[EpisodeRecord]]:
    lines = (DATA / name).read_bytes().splitlines()
    if name == "v1_logs.jsonl":  # each line wraps the record with its expected score
        return lines, [msgspec.json.decode(x, type=_Golden).record for x in lines]
    return lines, [msgspec.json.decode(x, type=EpisodeRecord) for x in lines]


def test_every_shipped_grid_is_pinned() -> None:
    assert sorted(p.name for p in GRIDS.glob("*.toml")) == sorted(CELLS)


@pytest.mark.parametrize("name", sorted(CELLS))
def test_shipped_grid_cells_keep_their_slugs_json_and_labels(name: str) -> None:
    # decoded without the checks that need keys and caches: the cells are what is pinned
    grid = msgspec.convert(tomllib.loads((GRIDS / name).read_text()), Grid)
    digest = hashlib.sha256()
    for c in grid.cells():
        digest.update(c.slug().encode() + b"\n" + _old(ENC.encode(c)) + b"\n")
        digest.update(config_label(config_of(c)).encode() + b"\n")
    assert (len(grid.cells()), digest.hexdigest()) == CELLS[name]


# Fields added (defaulted) to the log records since tests/data/demo_logs.jsonl was written:
# schema evolution adds defaulted fields only, so an old line re-encodes as itself plus these.
ADDED_SINCE_DEMO_LOGS: dict[str, object] = {
    "retry_notices": [],
    "spoof": "none",
    "tool_failure": 0.0,
    "user_style": "cooperative",
    "spoof_dose": 0.25,
    "user_dose": 0.25,
    "tool_failure_landed": 0.0,
    "injected": "",
    "served_by": "",
    "matcher_replies": [],
    "graph_reply": None,
    "revision_reply": None,
    "show": False,
    "ask": "off",
    "escalate": False,
    "question": None,
    "answer": None,
    "ask_reason": None,
    "first_match": None,
    "askback_calls": 0,
    "escalations": [],
    "trial": 0,
    "draw_turn": "",  # issue #46
    "budget": 0,  # issue #48
    "expiry": 0,
    "sessions": 0,  # issue #48
    "handoff": "none",
    "next_model": "",
    "exclusive": 0,
}


def _without_added(new: object, old: object, added: set[str]) -> object:
    """``new`` less the keys ``old`` lacks (collected in ``added``), recursively."""
    if isinstance(new, dict) and isinstance(old, dict):
        for k in new.keys() - old.keys():
            assert new[k] == ADDED_SINCE_DEMO_LOGS.get(k, object()), k
            added.add(k)
        return {k: _without_added(new[k], old[k], added) for k in old if k in new}
    if isinstance(new, list) and isinstance(old, list) and len(new) == len(old):
        return [_without_added(a, b, added) for a, b in zip(new, old, strict=True)]
    return new


def test_logs_of_the_current_code_re_encode_byte_for_byte() -> None:
    lines, records = _records("demo_logs.jsonl")
    assert len(records) == 3 and {r.cell.arm for r in records} == {"raw", "enforce", "ledger"}
    added: set[str] = set()
    for line, r in zip(lines, records, strict=True):
        old = msgspec.json.decode(line)
        assert _without_added(msgspec.json.decode(ENC.encode(r)), old, added) == old
    # every field but the added ones keeps its bytes: the same order, the same values
    assert added <= set(ADDED_SINCE_DEMO_LOGS)
    stripped = [_old(ENC.encode(r)) for r in records]
    assert stripped == lines


def test_logs_before_versions_re_encode_as_before() -> None:
    _, records = _records("v1_logs.jsonl")
    encoded = [_old(ENC.encode(r)) for r in records]
    digest = hashlib.sha256(b"".join(e + b"\n" for e in encoded))
    assert digest.hexdigest() == "d05dba0d22d37b897fc4d2e95ad68e0966cae148b3533e0c70b17a860e83d4ae"


@pytest.mark.parametrize("name", ["demo_logs.jsonl", "v1_logs.jsonl"])
def test_logs_rescore_the_same_after_a_round_trip(name: str) -> None:
    _, records = _records(name)
    again = [msgspec.json.decode(ENC.encode(r), type=EpisodeRecord) for r in records]
    assert again == records
    before = [ENC.encode(line_json(x)) for x in rescore(records)]
    assert before and [ENC.encode(line_json(x)) for x in rescore(again)] == before
    keys = b"".join(
        _old(ENC.encode(x.config if isinstance(x, ContrastLine) else x.cell))
        for x in rescore(again)
    )
    assert hashlib.sha256(keys).hexdigest() == RESCORED_KEYS[name]


# the cells and configurations of the rescored lines (their statistics are pinned elsewhere);
# demo_logs holds raw, enforce and ledger only: since the paper's Holm families (#27) a
# missing rung breaks the chain, so no raw -> enforce contrast is formed (the cells alone)
RESCORED_KEYS = {
    "demo_logs.jsonl": "d60076c216757507df8e713aa7db9cce417fe5d2b8d65796341d24a8263c4395",
    "v1_logs.jsonl": "5f6b4881ffc155151d9d3795e8cab8eadde2f03ef68a5dff670308b9fac9f706",
}


def test_a_cell_and_its_specs_share_one_config() -> None:
    grid = msgspec.convert(tomllib.loads((GRIDS / "wording.toml").read_text()), Grid)
    for c in grid.cells():
        spec = c.spec(seed=7, generator=grid.run.generator)
        assert spec.config == c.config and (spec.seed, spec.generator) == (7, grid.run.generator)
        assert CellKey.of(c.config, model=c.model, regime=c.regime, arm=c.arm, knobs=c.knobs) == c
        assert EpisodeSpec.of(spec.config, seed=7, generator=spec.generator) == spec


def test_changed_lists_the_knobs_away_from_their_defaults_in_field_order() -> None:
    assert Knobs().changed() == {}
    knobs = Knobs(notice="same_turn", checklist_mode="replace", corruption=0.02)
    assert knobs.changed() == {
        "checklist_mode": "replace",
        "notice": "same_turn",
        "corruption": 0.02,
    }
