"""The extension API: everything a plugin (an arm, a knob reader, a report table, a figure, a
prompt policy, a run observer) imports, from one module (docs/extending.md imports only from
here; ``tests/ladder/test_api.py`` pins the members).

A name here is a promise: it keeps its meaning across releases, or its change is written in
CHANGELOG.md. Everything else in the packages is internal and may move (as ``protocol/`` and
``serve/`` did in issue #45). Nothing imports this module but plugins and their tests: the
command line (``ladder.app``) stays light without it.

What is here: the registries (``ARMS``, ``ANALYSES``, ``FIGURES``, ``KNOBS``, ``POLICIES``;
``Registry``); an arm's row and its traits' readers (``ArmSpec``, ``arm_spec``,
``gate_arms``, ``enforcing_arms``, ``enforced`` ...) and its session's bases (``ArmSession``,
``Gate``); a knob's declaration and readers (``KnobSpec``, ``knob_spec``, ``variants``,
``Knobs``); a report table or figure (``Analysis``, ``Fold``, ``by_cell``, ``markdown_section``,
``PaperFigure``); what they read (records, ``TaskState``, scores); ``RunObserver``.
"""

from __future__ import annotations

from protocol.arms.policy import POLICIES, PromptPolicy
from protocol.arms.render import render_checklist
from protocol.arms.table import (
    ARMS,
    ArmSpec,
    Contrast,
    arm_names,
    arm_spec,
    arm_table,
    enforced,
    enforcing_arms,
    gate_arms,
    ladder,
)
from protocol.config import Knobs, config_label
from protocol.knobs import KNOBS, KnobSpec, knob_spec, variants
from protocol.records import Booking, CellKey, Episode, EpisodeRecord, Turn
from protocol.registry import Registry, RegistryError
from protocol.state.machine import TaskState
from runner.arms.base import Admission, ArmSession, EpisodeContext, Shaped
from runner.arms.gates import DirectiveGate as Gate
from runner.execution.observer import RunObserver
from scoring.analyses.base import Analysis, Fold, Pair, by_cell, markdown_section
from scoring.analyses.registry import ANALYSES
from scoring.replay.episode_score import EpisodeScore
from scoring.replay.ground_truth import EpisodeCache
from scoring.report.paper_figures import FIGURES, PaperFigure
from scoring.results.lines import ResultLine

__all__ = [
    "ANALYSES",
    "ARMS",
    "FIGURES",
    "KNOBS",
    "POLICIES",
    "Admission",
    "Analysis",
    "ArmSession",
    "ArmSpec",
    "Booking",
    "CellKey",
    "Contrast",
    "Episode",
    "EpisodeCache",
    "EpisodeContext",
    "EpisodeRecord",
    "EpisodeScore",
    "Fold",
    "Gate",
    "KnobSpec",
    "Knobs",
    "Pair",
    "PaperFigure",
    "PromptPolicy",
    "Registry",
    "RegistryError",
    "ResultLine",
    "RunObserver",
    "Shaped",
    "TaskState",
    "Turn",
    "arm_names",
    "arm_spec",
    "arm_table",
    "by_cell",
    "config_label",
    "enforced",
    "enforcing_arms",
    "gate_arms",
    "knob_spec",
    "ladder",
    "markdown_section",
    "render_checklist",
    "variants",
]
