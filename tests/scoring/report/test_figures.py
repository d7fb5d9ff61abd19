"""The paper's figures (scoring.report.figures) on hand-built result lines whose answer is known:
Figure 5(a)'s channel decomposition per arm and Figure 5(b)'s panels per configuration."""

from __future__ import annotations

import io
from typing import Any

from matplotlib.container import ErrorbarContainer
from matplotlib.patches import Rectangle

from protocol.records import CellKey, Knobs
from protocol.state.machine import CHANNELS
from scoring.analyses.corruption_replay import CORRUPTION_KINDS, FAILURE_KINDS, CorruptionLine
from scoring.replay.episode_score import LABELS
from scoring.report.figure_data import ChannelRate, UnrequestedCount
from scoring.report.figures import PER_EPISODES, channel_points
from scoring.report.paper_figures import paper_figures
from scoring.results.lines import CellLine
from scoring.results.stats import wilson


def _key(arm: str, steps: int = 15, density: float = 0.3, **kw: Any) -> CellKey:
    return CellKey(model="m", steps=steps, density=density, arm=arm, **kw)


def _line(key: CellKey, n: int, channels: dict[str, int], labels: dict[str, int]) -> CellLine:
    ch: dict[str, int] = {str(c): channels.get(c, 0) for c in CHANNELS}
    lab = {x: labels.get(x, 0) for x in LABELS}
    return CellLine(
        cell=key, slug=key.slug(), n=n, strict_successes=n // 2, strict=0.5,
        strict_ci=wilson(n // 2, n), decline_aware_successes=n // 2, decline_aware=0.5,
        decline_aware_ci=wilson(n // 2, n), infrastructure_errors=0, unscorable=0,
        mismatched_episodes=0, channels=ch, decline_aware_channels=ch, labels=lab,
        channel_rates={}, refused=0, false_completions=0, citations=0, redisplays=0, unknown=0,
        turn_accuracy=None, seeds=tuple(range(n)),
    )  # fmt: skip


LABELS_16 = {"done": 16, "cancelled": 16, "blocked": 32, "eligible": 160}  # no redo turn


def _lines() -> list[CellLine]:
    return [
        # listed out of ladder order: the figure puts raw before enforce
        _line(_key("enforce"), 16, {"omission": 4}, LABELS_16),
        _line(_key("raw"), 16, {"re_execution": 8, "premature": 3, "unrequested": 4}, LABELS_16),
        _line(
            _key("raw", 10, 0.15),
            32,
            {"superseded": 1, "unrequested": 1},
            {"cancelled": 32, "redo": 2},
        ),
        # not canonical: a variant and a tier-2 wording stay out of Figure 5(a)
        _line(_key("enforce", knobs=Knobs(corruption=1e-2)), 16, {"omission": 15}, LABELS_16),
        _line(_key("raw", paraphrase_tier=2), 16, {"re_execution": 16}, LABELS_16),
    ]


def test_figure_5a_rates_over_table_9_denominators() -> None:
    pts = channel_points(_lines())
    dense = "m (no-think), S=15 rho=0.3, amended brief"
    small = "m (no-think), S=10 rho=0.15, amended brief"
    assert {p.panel for p in pts} == {dense, small}
    by = {(p.panel, p.x, p.series): p for p in pts}

    def rate(key: tuple[str, str, str]) -> ChannelRate:
        point = by[key]
        assert isinstance(point, ChannelRate), point
        return point

    def unrequested(key: tuple[str, str, str]) -> UnrequestedCount:
        point = by[key]
        assert isinstance(point, UnrequestedCount), point
        return point

    reexec = rate((dense, "raw", "re_execution"))
    assert (reexec.y, reexec.errors, reexec.n) == (0.5, 8, 16)
    assert (reexec.lo, reexec.hi) == wilson(8, 16)
    premature = rate((dense, "raw", "premature"))
    assert (premature.y, premature.n) == (3 / 32, 32)
    assert by[(dense, "enforce", "omission")].y == 4 / 160
    assert by[(dense, "enforce", "re_execution")].y == 0.0  # a zero over a label: a point
    # no redo turn in the dense cells: no refused-redo point; the S = 10 cell had two
    assert (dense, "raw", "refused_redo") not in by
    assert rate((small, "raw", "refused_redo")).n == 2
    assert (small, "raw", "premature") not in by  # no blocked turn there
    # unrequested executions: a count per 128 episodes, no label
    assert by[(dense, "raw", "unrequested")].y == 4 * PER_EPISODES / 16 == 32
    assert by[(small, "raw", "unrequested")].y == 1 * PER_EPISODES / 32 == 4
    assert unrequested((dense, "enforce", "unrequested")).count == 0
    # the variant (omission 15/160) and the tier-2 cell (re-execution 16/16) are left out
    assert len([p for p in pts if p.panel == dense and p.x == "enforce"]) == 5
    assert rate((dense, "raw", "re_execution")).errors == 8


def test_figure_5a_panels_arms_in_ladder_order_and_png() -> None:
    figs = paper_figures(_lines())
    caption, fig, data = figs["figure5a"]
    assert caption.startswith("Figure 5(a)") and data == channel_points(_lines())
    titles = [ax.get_title() for ax in fig.axes if ax.get_title()]
    assert sorted(titles) == [  # the model on a line of its own
        "m (no-think)\nS=10 rho=0.15, amended brief",
        "m (no-think)\nS=15 rho=0.3, amended brief",
    ]
    # each panel one axes: the rates above, the unrequested counts in a band below them,
    # arms in ladder order
    assert len(fig.axes) == 2
    dense = next(ax for ax in fig.axes if ax.get_title().startswith("m (no-think)\nS=15"))
    assert [t.get_text() for t in dense.get_xticklabels()] == ["raw", "enforce"]
    # the row's counts' ticks (up to its highest count of both panels) under the rates' 0
    # to 1, labelled on the first panel only (the row shares its y scales)
    assert dense.get_yticklabels() == []
    small = next(ax for ax in fig.axes if ax is not dense)
    ticks = [t.get_text() for t in small.get_yticklabels()]
    assert ticks[-6:] == ["0.0", "0.2", "0.4", "0.6", "0.8", "1.0"] and ticks[0] == "0"
    counts = [float(t) for t in ticks[:-6]]
    peak = max(d.y for d in data if isinstance(d, UnrequestedCount))
    assert peak > 4 and counts == sorted(counts) and peak / 2 <= counts[-1] <= peak * 1.15
    assert max(small.get_yticks()) == 1 and list(small.get_yticks()) == list(dense.get_yticks())
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    assert buf.getvalue()[:4] == b"\x89PNG"
    # no canonical cell with episodes: no Figure 5(a)
    assert "figure5a" not in paper_figures(_lines()[3:])
    assert "figure5a" not in paper_figures([_line(_key("raw"), 0, {}, {})])


def _corruption(key: CellKey, omissions: dict[str, int]) -> CorruptionLine:
    zero = dict.fromkeys(CORRUPTION_KINDS, 0)
    return CorruptionLine(
        cell=key, epsilon=key.knobs.corruption, episodes=16, failures=5, events=zero,
        omissions={k: omissions.get(k, 0) for k in FAILURE_KINDS}, single_events=zero,
        single_fatal=zero, directive_changed=0, directive_restored=0, booking_changed=0,
        booking_restored=0, replay_mismatches=0, rng_mismatches=0,
    )  # fmt: skip


def test_figure_5b_one_panel_per_configuration() -> None:
    lines = [
        _corruption(_key("enforce", knobs=Knobs(corruption=e)), {"obeyed_done": k})
        for e, k in ((1e-3, 1), (1e-2, 7))
    ] + [_corruption(_key("enforce", 10, 0.15, knobs=Knobs(corruption=1e-3)), {"other": 2})]
    _, fig, rows = paper_figures([], lines)["figure5b"]
    panels = {r["panel"] for r in rows}  # type: ignore[index]
    assert panels == {"m (no-think), S=15 rho=0.3, amended brief",
                      "m (no-think), S=10 rho=0.15, amended brief"}  # fmt: skip
    dense = next(ax for ax in fig.axes if ax.get_title().startswith("m (no-think)\nS=15"))
    assert [t.get_text() for t in dense.get_xticklabels()] == ["0.001", "0.01"]
    heights: list[float] = []
    for p in dense.patches:
        assert isinstance(p, Rectangle), p  # a bar
        heights.append(p.get_height())
    assert sum(heights) == 8 and max(heights) == 7


LONG_MODEL = "Qwen/Qwen3.6-35B-A3B-Instruct-2507-FP8-dynamic-long-served-name"


def _multi_config_lines() -> tuple[list[CellLine], list[CorruptionLine]]:
    """A demo over several configurations: two models (one with a long served name), two
    briefs, two graphs, a second domain, the four rungs, the corrupted enforcement gate."""
    dense, small = {"steps": 15, "density": 0.3}, {"steps": 10, "density": 0.15}
    configs: list[dict[str, object]] = [
        {"model": model, "brief": brief, **dense}
        for model in ("m", LONG_MODEL)
        for brief in ("amended", "original")
    ]
    configs += [
        {"model": "m", "brief": "amended", **small},
        {"model": LONG_MODEL, "brief": "amended", **small},
        {"model": LONG_MODEL, "brief": "original", "domain": "release", **small},
    ]
    cells, corruption = [], []
    for config in configs:
        for j, arm in enumerate(("raw", "checklist", "directive", "enforce")):
            key = CellKey(arm=arm, **config)  # type: ignore[arg-type]
            cells.append(_line(key, 16, {"re_execution": 8 - 2 * j}, LABELS_16))
        if config["model"] == LONG_MODEL and config["steps"] == 15:
            for eps in (1e-3, 1e-2):
                key = CellKey(arm="enforce", knobs=Knobs(corruption=eps), **config)  # type: ignore[arg-type]
                cells.append(_line(key, 16, {"omission": 2}, LABELS_16))
                corruption.append(_corruption(key, {"obeyed_done": 3, "other": 1}))
    return cells, corruption


def test_every_figure_of_a_multi_configuration_run_keeps_its_text_inside() -> None:
    from scoring.report.figure_text import clipped_texts, covered_labels
    from scoring.report.markdown import figure_channels, figure_success

    cells, corruption = _multi_config_lines()
    figs = {name: fig for name, (_, fig, _) in paper_figures(cells, corruption).items()}
    assert set(figs) == {"figure1", "figure4", "figure5a", "figure5b", "figure6"}
    figs["success"] = figure_success(cells)
    figs["success-decline-aware"] = figure_success(cells, "decline_aware")
    figs["channels"] = figure_channels(cells)
    # one configuration alone: one panel, the narrowest figures (the legend's five channels
    # and the title once ran past both edges there)
    one = [c for c in cells if c.cell.model == LONG_MODEL and c.cell.domain == "release"
           and c.cell.brief == "original" and c.cell.steps == 10]  # fmt: skip
    figs["figure5a-one"] = paper_figures(one)["figure5a"][1]
    figs["channels-one"] = figure_channels(one)
    figs["success-one"] = figure_success(one)
    for name, fig in figs.items():
        assert clipped_texts(fig) == [], name
        assert covered_labels(fig) == [], name  # a legend under its axes' x label
    # the model's name is never cut: each Figure 5(a) panel title carries it whole
    titles = [ax.get_title() for ax in figs["figure5a"].axes if ax.get_title()]
    assert sum(t.replace("\n", "").startswith(LONG_MODEL) for t in titles) == 4 == len(titles) - 3


def test_clipped_texts_finds_a_title_past_the_edge() -> None:
    from matplotlib.figure import Figure

    from scoring.report.figure_text import clipped_texts

    fig = Figure(figsize=(3, 2), layout="constrained")
    ax = fig.add_subplot()
    ax.set_title("a title far too long for a figure three inches wide, cut at both edges")
    assert clipped_texts(fig) == [ax.get_title()]


def test_success_per_arm_is_points_per_configuration_one_title_per_scoring() -> None:
    from scoring.report.markdown import figure_success

    cells = [
        c for c in _multi_config_lines()[0] if c.cell.model == LONG_MODEL and c.cell.steps == 10
    ]
    cells = [c for c in cells if c.cell.knobs == Knobs()]
    strict, aware = figure_success(cells), figure_success(cells, "decline_aware")
    ax = strict.axes[0]
    # no line joins two configurations: every series is markers only
    bars = [c for c in ax.containers if isinstance(c, ErrorbarContainer)]
    assert len(bars) == len(ax.containers)  # every container is an arm's errorbar
    series = [c.lines[0] for c in bars]  # each arm's errorbar: its data line
    assert len(series) == 4 and all(ln.get_linestyle() == "None" for ln in series)
    assert ax.get_title() != aware.axes[0].get_title()
    assert "decline-aware" in aware.axes[0].get_title()
    ticks = [t.get_text() for t in ax.get_xticklabels()]
    # "#k" over what sets configuration k apart (the shared model and graph left out)
    assert ticks == ["#1\nprocurement amended", "#2\nrelease original"]


def test_short_labels_and_wrap() -> None:
    from scoring.report.figure_text import short_labels, wrap

    assert short_labels(["m no-think S=15 a", "m no-think S=15 b"]) == ["a", "b"]
    assert short_labels(["m no-think S=15 a"]) == ["m no-think S=15 a"]  # one: whole
    text = wrap("word " * 40, 2.0, 8)
    assert all(len(line) <= int(2.0 * 72 / (8 * 0.62)) for line in text.split("\n"))
    assert text.split() == ["word"] * 40
