"""The paper's figures drawn from the cells present (pure: Figure objects and their data).

Each figure is built only when its cells are in the lines, with points (no connecting
lines) across categorical configurations, Wilson 95% intervals, labelled axes, and the data
behind every point (:class:`Point`) so that ``ladder report`` writes it as JSON beside the
PNG. Cells with non-default knobs (variants) and non-canonical wordings are left out of the
Figure 1 / 4(a) / 4(b) / 6 panels; the corrupted-state panel takes the enforcement cells
that differ from their configuration only in ``corruption``.

* Figure 1: strict success by rung across the capability points (one series per model and
  regime, amended brief, S = 15 dense).
* Figure 4 (amended brief): (a) graph-size axis (x: S and density, one series per arm and
  model), (b) model axis (x: model and regime at S = 15 dense, one series per arm), (c) the
  corrupted-state ablation (x: epsilon, the enforcement gate, one series per model and
  graph).
* Figure 5(b): the corruption replay's omission attribution per epsilon (counts, stacked
  bars; from :mod:`scoring.corruption_replay`).
* Figure 6: the original-brief ladder at S = 15 dense, one series per model and regime.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import msgspec

from protocol.arms import LADDER, arm_rank
from protocol.records import CellKey, Knobs
from scoring.corruption_replay import FAILURE_KINDS, CorruptionLine
from scoring.lines import CellLine, ResultLine

__all__ = ["Point", "paper_figures"]

DENSE = (15, 0.3)


class Point(msgspec.Struct, frozen=True, kw_only=True):
    series: str
    x: str
    y: float
    lo: float
    hi: float
    n: int


def _figure(width: float, height: float) -> Any:
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height), layout="constrained")


def _canonical(c: CellKey) -> bool:
    return c.knobs == Knobs() and c.paraphrase_tier == 0 and c.ambiguous_rate == 0.0


def _model(c: CellKey) -> str:
    name = c.model if len(c.model) <= 32 else c.model[:29] + "..."
    return f"{name} ({c.regime})"


def _points(
    cells: Sequence[CellLine],
    keep: Callable[[CellKey], bool],
    x: Callable[[CellKey], str],
    series: Callable[[CellKey], str],
) -> list[Point]:
    out = []
    for c in cells:
        rate = c.rate("strict")
        if rate is None or not keep(c.cell):
            continue
        lo, hi = c.ci("strict")
        out.append(Point(series=series(c.cell), x=x(c.cell), y=rate, lo=lo, hi=hi, n=c.n))
    return out


def _draw(points: Sequence[Point], ax: Any, xlabel: str, xs: Sequence[str]) -> None:
    names = list(dict.fromkeys(p.series for p in points))
    width = 0.7 / max(1, len(names))
    for j, name in enumerate(names):
        mine = [p for p in points if p.series == name]
        ax.errorbar(
            [xs.index(p.x) + (j - (len(names) - 1) / 2) * width for p in mine],
            [p.y for p in mine],
            yerr=[[p.y - p.lo for p in mine], [p.hi - p.y for p in mine]],
            fmt="o",
            capsize=3,
            label=name,
        )
    ax.set_xticks(range(len(xs)), xs, fontsize=7)
    ax.set_xlim(-0.6, len(xs) - 0.4)
    ax.set_ylim(-0.02, 1.02)
    ax.set_xlabel(xlabel, fontsize=8)
    ax.set_ylabel("strict success (Wilson 95% CI)", fontsize=8)
    ax.grid(axis="y", alpha=0.3)
    if names:
        ax.legend(fontsize=6, loc="upper center", bbox_to_anchor=(0.5, -0.18), ncols=2)


def _order(xs: Sequence[str], key: Callable[[str], Any]) -> list[str]:
    return sorted(dict.fromkeys(xs), key=key)


def _rung_key(x: str) -> Any:
    return arm_rank(x)


def paper_figures(
    lines: Sequence[ResultLine], corruption: Sequence[CorruptionLine] = ()
) -> dict[str, tuple[str, Any, list[Point] | list[dict[str, Any]]]]:
    """``name -> (caption, Figure, data)`` for every figure whose cells are present."""
    cells = [x for x in lines if isinstance(x, CellLine)]
    out: dict[str, tuple[str, Any, list[Point] | list[dict[str, Any]]]] = {}
    ladder = set(LADDER)

    def rungs(brief: str) -> list[Point]:
        return _points(
            cells,
            lambda c: _canonical(c) and c.brief == brief and (c.steps, c.density) == DENSE
            and c.arm in ladder and c.domain == "procurement",
            lambda c: c.arm,
            _model,
        )  # fmt: skip

    for name, brief, caption in (
        ("figure1", "amended", "Figure 1: strict success by rung across the capability points "
         "(amended brief, S = 15 dense)"),
        ("figure6", "original", "Figure 6: the original-brief ladder at S = 15 dense under "
         "both regimes"),
    ):  # fmt: skip
        pts = rungs(brief)
        if len({p.series for p in pts}) >= 1 and len({p.x for p in pts}) >= 2:
            fig = _figure(6.0, 4.0)
            ax = fig.add_subplot()
            _draw(pts, ax, "rung", _order([p.x for p in pts], _rung_key))
            ax.set_title(caption.split(": ", 1)[1], fontsize=9)
            out[name] = (caption, fig, pts)

    size = _points(
        cells,
        lambda c: _canonical(c) and c.brief == "amended" and c.arm in ladder,
        lambda c: f"S={c.steps} rho={c.density:g}",
        lambda c: f"{c.arm}, {_model(c)}",
    )
    models = _points(
        cells,
        lambda c: _canonical(c) and c.brief == "amended" and (c.steps, c.density) == DENSE
        and c.arm in ladder,
        _model,
        lambda c: c.arm,
    )  # fmt: skip
    eps = _points(
        cells,
        lambda c: c.arm == "enforce" and c.brief == "amended"
        and msgspec.structs.replace(c.knobs, corruption=0.0) == Knobs()
        and c.paraphrase_tier == 0 and c.ambiguous_rate == 0.0,
        lambda c: f"{c.knobs.corruption:g}",
        lambda c: f"{_model(c)}, S={c.steps} rho={c.density:g}",
    )  # fmt: skip
    panels: list[tuple[list[Point], str, Callable[[str], Any]]] = [
        (size, "graph size", lambda x: tuple(float(v.split("=")[1]) for v in x.split())),
        (models, "model (regime), S = 15 dense", str),
        (eps, "corruption rate epsilon", float),
    ]
    present = [(p, label, key) for p, label, key in panels if len({x.x for x in p}) >= 2]
    if present:
        fig = _figure(5.0 * len(present), 4.0)
        data: list[dict[str, Any]] = []
        for i, (pts, label, key) in enumerate(present):
            ax = fig.add_subplot(1, len(present), i + 1)
            _draw(pts, ax, label, _order([p.x for p in pts], key))
            data += [{"panel": label, **msgspec.to_builtins(p)} for p in pts]
        out["figure4"] = (
            "Figure 4: the graph-size axis, the model axis and the corrupted-state ablation "
            "(panels drawn from the cells present)",
            fig,
            data,
        )

    if corruption:
        fig = _figure(6.0, 4.0)
        ax = fig.add_subplot()
        labels = [f"{c.epsilon:g}\n{c.cell.arm}" for c in corruption]
        bottom = [0] * len(corruption)
        rows: list[dict[str, Any]] = []
        for kind in FAILURE_KINDS:
            values = [c.omissions[kind] for c in corruption]
            ax.bar(range(len(corruption)), values, bottom=bottom, label=kind.replace("_", " "))
            bottom = [b + v for b, v in zip(bottom, values, strict=True)]
        for c in corruption:
            rows.append({"epsilon": c.epsilon, "arm": c.cell.arm, "model": _model(c.cell),
                         "episodes": c.episodes, **c.omissions})  # fmt: skip
        ax.set_xticks(range(len(corruption)), labels, fontsize=7)
        ax.set_xlabel("corruption rate epsilon, arm", fontsize=8)
        ax.set_ylabel("omissions (count)", fontsize=8)
        ax.set_title("Corruption replay: omissions by the corrupted decision", fontsize=9)
        ax.legend(fontsize=7)
        ax.grid(axis="y", alpha=0.3)
        out["figure5b"] = (
            "Figure 5(b): the corruption replay, omissions attributed per epsilon",
            fig,
            rows,
        )
    return out
