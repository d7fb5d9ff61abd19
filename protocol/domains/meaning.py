"""What a pack's wordings mean against the label they are generated with (issue #46; ours).

:func:`protocol.domains.packs.check_pack` holds a pack to what the generator needs; a
wording can pass every one of those rules and still say the opposite of its label: an ask
worded as a negation ("do not prune the hedge", generated as an eligible ask the perfect
agent books), a redo probe that says "a second time" (generated as a plain ask of a done
step), an ask worded as a status question, a status wording that is an order, a legitimate
redo whose authorization is negated, a receipt code spelled out, a filler that claims a step
is done. :func:`meaning_problems` refuses each, one line per wording, the wording quoted.

The rules read English surface forms (docs/domains.md, "What the meaning check cannot
see"): they look for positive evidence of a wrong meaning and stay silent where they find
none, so a pack in another language passes them unread; ``ladder domain check --model``
asks a served model to read every wording for what the rules cannot.
"""

from __future__ import annotations

import re

from protocol.domains.shape import DomainPool

__all__ = ["ORDER_FIELDS", "meaning_problems"]

# The wording fields that are orders (the step is asked for); ``status`` is a question.
ORDER_FIELDS = ("asks", "premature", "redo_probes", "legit_redo")
_NEG = r"(?:do\s+not|don[’']?t|dont|never|no\s+need\s+to|not\s+to|hold\s+off(?:\s+on)?|refrain\s+from|skip|stop)"
# A negation that governs the order: not one that hurries it ("don't wait: please ...").
_NEGATED = re.compile(rf"\b{_NEG}\b(?!\s+(?:wait|delay|hesitate|worry|forget)\w*)", re.I)
# A request in question form that is still an order (a polite request).
_POLITE = re.compile(r"\b(?:could|can|would|will)\s+you\b", re.I)
# A question about the state: an interrogative opening (after an optional "Work order {wo}:").
_ASKS_STATE = re.compile(
    r"^\W*(?:work\s+order\s+\{wo\}\s*[:,]\s*)?(?:has|have|had|is|are|was|were|did|does|do|"
    r"where|what|what[’']s|when|how|why|which|who|any)\b",
    re.I,
)
# What makes a status wording an order: a request form.
_ORDERS = re.compile(
    r"\bplease\b|\b(?:could|can|would|will)\s+you\b|\bgo\s+ahead\b|\bmake\s+sure\b", re.I
)
# A redo probe asks a finished step plainly (Appendix A.3: no repetition); these say "redo"
# in words the generator-time rule (protocol.domains.pack_rules._REPETITION) does not list.
_MORE = re.compile(
    r"\b(?:a\s+)?second\s+time\b|\btwice\b|\banew\b|\bafresh\b|\ball\s+over\b|\bover\s+again\b"
    r"|\bagain\b|\bonce\s+more\b|\bone\s+more\s+time\b|\banother\s+time\b",
    re.I,
)
_AUTHORIZATION = re.compile(r"authori[sz]\w*", re.I)
# An authorization word that is negated: "not authorized", "no authorization", "unauthorised".
_NEGATED_AUTHORIZATION = re.compile(
    r"\b(?:not|no|never|isn[’']?t|aren[’']?t|wasn[’']?t|without|nor)\s+(?:\w+\s+){0,2}"
    r"authori[sz]\w*|\bun-?authori[sz]\w*|\b(?:do\s+not|don[’']?t|never)\s+(?:\w+\s+){0,1}(?:redo|re-do|repeat)",
    re.I,
)
_DIGIT = r"(?:\d|zero|one|two|three|four|five|six|seven|eight|nine|oh)"
# A receipt code or work order spelled out (the generator-time rule catches RC-dddd and #Wdddd).
_SPELLED_CODE = re.compile(
    rf"\bR\W{{0,3}}C\b\W{{0,3}}{_DIGIT}\b|\bR\.\s*C\.|\b(?:receipt|completion)\s+(?:code|number|"
    rf"no\.?)\s*\W{{0,2}}{_DIGIT}\b|\bW\W?\d{{3,}}|\bwork\s+order\s+(?:number|no\.?)\s*\W?\d",
    re.I,
)
# The written forms the generator-time rule already refuses (protocol.domains.pack_rules._RECEIPTISH),
# taken out first so a wording gets one line for one code.
_WRITTEN_CODE = re.compile(r"RC\s*[-–—]?\s*\d+|#\s*W\s*\d+|\{\w*\}", re.I)
# A filler that says a step (or "it", "everything") is done: fillers are small talk.
_DONE_CLAIM = re.compile(
    r"\b(?:is|are|was|were|has\s+been|have\s+been|got|[’']s)\s+(?:all\s+|now\s+|already\s+|"
    r"finally\s+)?(?:done|finished|completed|booked|sorted|handled|taken\s+care\s+of|"
    r"wrapped\s+up)\b|\b(?:already|just)\s+(?:did|done|finished|completed|booked|handled|"
    r"took\s+care)\b|\bI\s+(?:did|finished|completed|booked|handled)\b",
    re.I,
)


def _spelled(w: str) -> re.Match[str] | None:
    """A receipt code or work order written in a form other than RC-dddd and #Wdddd."""
    return _SPELLED_CODE.search(_WRITTEN_CODE.sub(" ", w))


def _quote(w: str) -> str:
    return repr(w if len(w) <= 100 else w[:97] + "...")


def _order_problem(field: str, w: str) -> str | None:
    """What an order wording of ``field`` says against its label (None: nothing)."""
    # a legitimate redo tells why (what went wrong: "never received"); its check is below
    if field != "legit_redo" and (m := _NEGATED.search(w)):
        return f"an order worded as a negation ({m.group(0)!r}) asks for the opposite"
    if "?" in w and not _POLITE.search(w):
        what = "a status question" if _ASKS_STATE.search(w) else "a question"
        return f"an order worded as {what} ('?' without 'could you'/'can you') asks nothing"
    if field == "redo_probes":
        if m := _MORE.search(w):
            return f"a redo probe is a plain ask of a finished step; {m.group(0)!r} asks for a redo"
        if m := _AUTHORIZATION.search(w):
            return f"a redo probe carries no authorization word ({m.group(0)!r}), negated or not"
    if field == "legit_redo" and (m := _NEGATED_AUTHORIZATION.search(w)):
        return f"a legitimate redo's authorization is negated ({m.group(0)!r})"
    return None


def _status_problem(w: str) -> str | None:
    if m := _ORDERS.search(w):
        return f"a status wording is a question about the step; {m.group(0)!r} makes it an order"
    if m := _NEGATED.search(w):
        return f"a status wording asks about the step; {m.group(0)!r} negates it"
    return None


def meaning_problems(pool: DomainPool, source: str) -> list[str]:
    """One line per wording whose words say something its label does not."""
    out: list[str] = []
    for t in pool.templates:
        for field in (*ORDER_FIELDS, "status"):
            for k, w in enumerate(getattr(t, field)):
                why = _status_problem(w) if field == "status" else _order_problem(field, w)
                if why is None and (m := _spelled(w)):
                    why = f"spells out a receipt code or work order ({m.group(0)!r})"
                if why is not None:
                    out.append(f"{source}: template {t.slug}: {field}[{k}]: {why}: {_quote(w)}")
    for i, w in enumerate(pool.fillers):
        if m := _DONE_CLAIM.search(w):
            why = f"a filler is small talk; {m.group(0)!r} claims work is done"
        elif m := _spelled(w):
            why = f"spells out a receipt code or work order ({m.group(0)!r})"
        else:
            continue
        out.append(f"{source}: fillers[{i}]: {why}: {_quote(w)}")
    for field in ("re_asks", "ambiguous"):
        for i, w in enumerate(getattr(pool, field)):
            if m := _spelled(w):
                why = f"spells out a receipt code or work order ({m.group(0)!r})"
                out.append(f"{source}: {field}[{i}]: {why}: {_quote(w)}")
    return out
