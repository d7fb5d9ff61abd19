"""A domain pack written in the tests (issue #30): 18 made-up steps of a kitchen-garden plan,
three per phase, every wording built around the step's own noun. ``pack_text(**changes)``
gives the TOML text with a template's or the pool's fields changed, for the defect tests."""

from __future__ import annotations

import msgspec

from protocol.domains.packs import pack_toml
from protocol.domains.shape import DomainPool, Template

NOUNS = (
    ("soil", "test"),
    ("compost", "order"),
    ("seed", "catalogue"),
    ("trellis", "build"),
    ("greenhouse", "clean"),
    ("irrigation", "lay"),
    ("tomato", "sow"),
    ("lettuce", "sow"),
    ("bean", "plant"),
    ("mulch", "spread"),
    ("netting", "fit"),
    ("scarecrow", "raise"),
    ("weeding", "schedule"),
    ("pruning", "book"),
    ("harvest", "plan"),
    ("market", "register"),
    ("jam", "label"),
    ("ledger", "close"),
)


def template(i: int, noun: str, verb: str) -> Template:
    text = f"{verb} the {noun} work for the garden"
    return Template(
        slug=f"garden-{noun}",
        phase=i // 3,
        text=text,
        asks=(
            f"Please {text} ({{wo}}).",
            f"Work order {{wo}}: {verb} the {noun} work.",
            f"Go ahead with the {noun} work ({{wo}}).",
        ),
        premature=(
            f"Let's start the {noun} work right now ({{wo}}).",
            f"Work order {{wo}}: the {noun} work cannot wait.",
            f"Time to push on with the {noun} work ({{wo}}).",
        ),
        redo_probes=(
            f"{verb.capitalize()} the {noun} work, please ({{wo}}).",
            f"Work order {{wo}}: please do the {noun} work.",
            f"Please handle the {noun} work ({{wo}}).",
        ),
        status=(
            f"What's the status of the {noun} work ({{wo}})?",
            f"Work order {{wo}}: where do we stand on the {noun} work?",
            f"Is the {noun} work finished yet ({{wo}})?",
        ),
        legit_redo=(
            f"A storm undid it, so I explicitly authorize a redo: {text} again ({{wo}}).",
            f"Work order {{wo}}: the {noun} work was lost, so please do it again; this redo is explicitly authorized.",
            f"Because the weather changed, I explicitly authorize you to redo the {noun} work ({{wo}}).",
        ),
    )


def pool(name: str = "garden") -> DomainPool:
    return DomainPool(
        name=name,
        templates=tuple(template(i, n, v) for i, (n, v) in enumerate(NOUNS)),
        fillers=("Lovely weather today.", "Back in ten minutes.", "Thanks, noted."),
        re_asks=(
            "Following up: please {text} now ({wo}).",
            "Circling back: please {text} ({wo}).",
            "As mentioned, please {text} ({wo}).",
        ),
        ambiguous=(
            "Could you do one of these, {a} or {b} ({wo})?",
            "Work order {wo}: either {a} or {b}, please.",
            "Please take one of {a} or {b} ({wo}).",
        ),
    )


def pack_text(base: DomainPool | None = None, /, at: str | None = None, **changes: object) -> str:
    """The pack's TOML with ``changes`` applied to the template of slug ``at`` (or to the pool)."""
    p = base or pool()
    if at is None:
        return pack_toml(msgspec.structs.replace(p, **changes))
    ts = tuple(msgspec.structs.replace(t, **changes) if t.slug == at else t for t in p.templates)
    return pack_toml(msgspec.structs.replace(p, templates=ts))
