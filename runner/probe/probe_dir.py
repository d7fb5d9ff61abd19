"""The probe directory: ``probe.jsonl`` (one typed :class:`protocol.probe.turns.ProbeRecord`
a line, appended) and ``probe.json`` (the settings it was made with, which a resume must
keep)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec
import orjson

from protocol.probe.turns import ProbeRecord
from runner.files import lines, read_regular, write_atomic
from runner.probe.model_cards import Sampling
from runner.probe.options import SAMPLING_KEYS, ProbeError, ProbeOptions

__all__ = ["PROBE_LOG", "PROBE_META", "check_meta", "read_probe"]

PROBE_LOG = "probe.jsonl"
PROBE_META = "probe.json"  # the settings a probe directory was made with
_DECODER = msgspec.json.Decoder(ProbeRecord)


def read_probe(out: Path) -> list[ProbeRecord]:
    """The probe records in ``out`` (a torn last line, from a kill, is skipped)."""
    path = out / PROBE_LOG
    if not path.exists():
        return []
    records: list[ProbeRecord] = []
    for _, line, _, _ in lines(path):  # a regular file, a line at a time (capped)
        if line is None or not line.strip():
            continue
        try:
            records.append(_DECODER.decode(line))
        except (msgspec.DecodeError, msgspec.ValidationError):
            continue
    return records


def check_meta(out: Path, run_dir: Path, opts: ProbeOptions, sampling: dict[str, Sampling]) -> None:
    """Record the settings that make a probe record what it is (arm, each model's sampling);
    a resumed probe must use the same ones (variants, kinds, samples, limit and the models
    probed may grow)."""
    now = {m: {k: getattr(s, k) for k in SAMPLING_KEYS} for m, s in sampling.items()}
    path = out / PROBE_META
    meta: dict[str, Any] = {"run_dir": str(run_dir.resolve()), "arm": opts.arm, "sampling": {}}
    if path.exists():
        try:
            meta = orjson.loads(read_regular(path, follow=False))
            if not isinstance(meta, dict):
                raise ValueError("not an object")
        except (OSError, ValueError):  # orjson.JSONDecodeError is a ValueError
            raise ProbeError(f"{path} is unreadable; move it away to start over") from None
        if meta.get("arm") != opts.arm:
            raise ProbeError(
                f"{out} was probed with arm={meta.get('arm')!r}; use the same settings or "
                "another --out"
            )
        before: dict[str, Any] = meta.setdefault("sampling", {})
        _check_sampling(out, meta, before, now)
        if all(m in before for m in now):
            return
    meta["sampling"] = {**meta.get("sampling", {}), **now}
    write_atomic(path, orjson.dumps(meta, option=orjson.OPT_INDENT_2))  # never via a link


def _check_sampling(
    out: Path, meta: dict[str, Any], before: dict[str, Any], now: dict[str, dict[str, Any]]
) -> None:
    """Refuse a model probed before at other sampling settings."""
    for m, want in now.items():
        # a probe directory of the first layout held one temperature and top_p
        old = before.get(m) or (
            {"temperature": meta["temperature"], "top_p": meta.get("top_p")}
            if "temperature" in meta
            else None
        )
        if old is None:
            continue
        diff = [k for k in SAMPLING_KEYS if k in old and old[k] != want[k]]
        if diff:
            was = ", ".join(f"{k}={old[k]!r}" for k in diff)
            raise ProbeError(
                f"{out} was probed with {was} for {m}; use the same settings or another --out"
            )
