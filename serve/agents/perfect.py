"""The perfect agent: acts exactly by Section 3.1 on what the transcript shows (Appendix A.1)."""

from __future__ import annotations

from serve.agents.answer import Answer
from serve.agents.decide import decide
from serve.agents.reading import View
from serve.agents.reply import reasoning, render_reply

__all__ = ["respond"]


def respond(view: View) -> Answer:
    d = decide(view)
    return Answer(content=render_reply(view, d), reasoning=reasoning(view, d))
