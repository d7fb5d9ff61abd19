"""Which planned turns a cell's stress knobs take (generator 5 on; issue #46, ours), pure.

One reading of the dosed stresses of :mod:`protocol.stress.doses` and
:mod:`protocol.stress.spoof` for the readers that show or compare them without running an
agent: ``ladder generate`` marks the stressed turns, ``ladder validate`` refuses two doses of a
grid that stress the same turns. The tool-failure and corruption knobs draw per call and per
display, on what an agent does, so no planned turn carries them.
"""

from __future__ import annotations

from protocol.config import DEFAULT_DOSE, UserStyle
from protocol.records import Episode
from protocol.stress.doses import user_turns
from protocol.stress.spoof import planned_forgeries

__all__ = ["StressPlan", "stress_plan"]

# planned index -> (the stress, the turn's text as served: the style's words, or the user's
# words with the forwarded forgery after them)
StressPlan = dict[int, tuple[str, str]]


def stress_plan(
    episode: Episode,
    *,
    spoof: str = "none",
    spoof_dose: float = DEFAULT_DOSE,
    user_style: UserStyle = "cooperative",
    user_dose: float = DEFAULT_DOSE,
) -> StressPlan:
    """The planned turns the knobs stress (generator 5 on; earlier generators place no dose,
    so nothing is planned: ``{}``)."""
    if episode.spec.generator < 5:
        return {}
    out: StressPlan = {
        i: (f"user_style={user_style}", t.text)
        for i, t in user_turns(episode, user_style, user_dose).items()
    }
    if spoof != "none":
        for i, forged in planned_forgeries(episode, spoof, spoof_dose).items():
            base = out.get(i, ("", episode.turns[i].text))[1]
            out[i] = (f"spoof={spoof}", f"{base}\n{forged}")
    return dict(sorted(out.items()))
