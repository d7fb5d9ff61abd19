"""``ladder compare A B``: two runs' same cells, seed by seed, with the exact McNemar test
(:mod:`scoring.results.compare`)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import orjson
import typer

from ladder.errors import UsageError
from ladder.filters import ArmOption, CellOption, ModelOption, cell_filter
from runner.rundir.records import load_records
from scoring.report.markdown import synthetic_banner
from scoring.report.tables import Labels, text_table
from scoring.results.compare import CompareError, compare_runs
from scoring.results.lines import line_json
from scoring.results.offline import score_records

__all__ = ["compare"]

# With repeated trials a seed is paired by its majority (docs/trials.md); said once (#49).
TRIAL_RULE = (
    "\nWith trials: n counts seeds; A k and B k count the seeds whose trials mostly\n"
    "succeeded (more than half; a tie fails), as the paired test pairs them."
)

HEADER = ("cfg", "arm", "n", "A k", "B k", "B only", "A only", "p", "Holm p")


def _p(x: float | None) -> str:
    return "-" if x is None else (f"{x:.2g}" if x < 0.001 else f"{x:.3f}")


def compare(
    a: Annotated[Path, typer.Argument(help="Run A (a run directory or its logs/ folder).")],
    b: Annotated[Path, typer.Argument(help="Run B.")],
    json_: Annotated[bool, typer.Option("--json", help="One JSON line per pair.")] = False,
    wide: Annotated[bool, typer.Option("--wide", help="Name each configuration in full.")] = False,
    arm: ArmOption = None,
    model: ModelOption = None,
    cell: CellOption = None,
) -> None:
    """Compare two runs cell by cell: the seeds both counted, paired, with exact McNemar
    p-values (Holm within each scoring); a rerun, a second model or another server."""
    keep = cell_filter(arm, model, cell)
    scores = []
    for run in (a, b):
        records, _ = load_records(run)
        scores.append(score_records(keep.chosen(records, str(run))))
    try:
        lines = compare_runs(scores[0], scores[1])
    except CompareError as e:
        raise UsageError(str(e)) from None
    if json_:
        for line in lines:
            data = {**line_json(line), "arm": line.config.arm, "run_a": str(a), "run_b": str(b)}
            typer.echo(orjson.dumps(data).decode())
        return
    labels = Labels((x.config for x in lines), wide=wide)
    typer.echo(f"A: {a}\nB: {b}")
    for text in synthetic_banner(s.cell for side in scores for s in side):
        typer.echo(text)
    if legend := labels.legend():
        typer.echo(legend)
    if any(s.trial for side in scores for s in side):
        typer.echo(TRIAL_RULE)
    for scoring, name in (("strict", "primary scoring"), ("decline_aware", "decline-aware")):
        rows = [
            [
                labels(x.config),
                x.config.arm,
                str(x.n),
                str(x.a_successes),
                str(x.b_successes),
                str(x.b_only),
                str(x.a_only),
                _p(x.p),
                _p(x.p_holm),
            ]
            for x in lines
            if x.scoring == scoring
        ]
        head = ("configuration", *HEADER[1:]) if wide else HEADER
        typer.echo(f"\nA against B, {name} (paired seeds, exact McNemar, Holm)")
        typer.echo(text_table(head, rows))
