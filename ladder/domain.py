"""``ladder domain check|show|new``: a domain pack file checked, shown, or started.

``check FILE`` runs every rule of :func:`protocol.domains.packs.check_pack` (one problem a line,
exit 1 when any); ``show NAME|FILE`` prints a pack as the generator sees it (each step's
phase, brief text, key words and wordings); ``new NAME`` writes a commented skeleton whose
pool-wide parts are filled and whose 18 step templates the user fills (docs/domains.md).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated

import typer

from ladder.domain_read import read_back
from ladder.errors import UsageError, shown
from protocol.domains.known import BUILTIN, PROCUREMENT
from protocol.domains.packs import (
    LEGACY_WORDINGS,
    PARAPHRASES,
    PER_PHASE,
    PHASES,
    WORDING_FIELDS,
    PackError,
    key_words,
    pack_digest,
    pack_overlaps,
)
from protocol.domains.shape import DomainPool
from runner.files import write_new
from runner.grid.packs import is_pack_file, read_pack
from runner.rundir.packs import load_run_packs
from scoring.plural import plural

__all__ = ["builtin_clashes", "domain_app", "load_packs_of", "skeleton", "summary"]

domain_app = typer.Typer(
    help="Domain packs: check a pack file, show a pack, or write a new skeleton.",
    no_args_is_help=True,
)


def load_packs_of(logdir: Path, files: Sequence[Path] = ()) -> None:
    """Load the domain packs a run directory's logs need (``files`` first, then the run's
    copies); a :class:`UsageError` for a pack that changed since the run."""
    try:
        load_run_packs(logdir, files)
    except PackError as e:
        raise UsageError("\n".join(e.problems)) from None


def builtin_clashes(pool: DomainPool, file: Path) -> list[str]:
    """A pack's name or template slugs that a built-in pack uses (``run`` would refuse them:
    the scripted agents index every loaded pack's wordings by slug); one line each."""
    if pool.name in BUILTIN:
        if pool == BUILTIN[pool.name]:
            return []
        return [f"{file}: name: {pool.name!r} is a built-in domain's; give the pack another name"]
    slugs = {t.slug: p.name for p in BUILTIN.values() for t in p.templates}
    return [
        f"{file}: template {t.slug}: slug: also in the built-in {slugs[t.slug]} pack"
        for t in pool.templates
        if t.slug in slugs
    ]


def summary(pool: DomainPool) -> list[str]:
    """The pack's wording lengths and key-word overlaps beside the built-in packs'."""
    out = ["pack: mean words per wording (asks, redo probes, status), fillers, overlaps"]
    for name, p in [(pool.name, pool), *((n, b) for n, b in BUILTIN.items() if n != pool.name)]:
        lengths = [
            sum(len(w.split()) for t in p.templates for w in getattr(t, f))
            / max(1, sum(len(getattr(t, f)) for t in p.templates))
            for f in ("asks", "redo_probes", "status")
        ]
        shown = ", ".join(f"{x:.1f}" for x in lengths)
        out.append(f"  {name}: {shown}; {len(p.fillers)} fillers; {len(pack_overlaps(p))} ties")
    for slug, at, other in pack_overlaps(pool):
        out.append(f"  tie: {slug} {at} names as many of {other}'s own key words as of its own")
    return out


@domain_app.command("check")
def check(
    file: Annotated[Path, typer.Argument(help="A domain pack (TOML).")],
    show_summary: Annotated[
        bool,
        typer.Option(
            "--summary",
            help="Also compare the pack's wording lengths and key-word overlaps with the "
            "built-in packs'.",
        ),
    ] = False,
    model: Annotated[
        str | None,
        typer.Option(
            help="Also have this served model read every wording back and list where it reads "
            "a step or an order otherwise than the pack labels it (docs/domains.md)."
        ),
    ] = None,
    base_url: Annotated[
        str | None,
        typer.Option(
            help="The reader's OpenAI-compatible base URL, or 'embedded' (scripted); default "
            "$OPENAI_BASE_URL, else http://127.0.0.1:8000/v1.",
            show_default=False,
        ),
    ] = None,
    api_key_env: Annotated[
        str | None,
        typer.Option(help="Environment variable holding the reader's API key."),
    ] = None,
) -> None:
    """Check a domain pack: every problem on its own line (exit 1 when any; 2 when the file
    cannot be read); with --model, a served model reads every wording back (exit 1 when it
    reads any otherwise than the pack labels it)."""
    if not file.is_file():  # nothing to check: a usage error, one line (#40)
        raise UsageError(f"cannot read domain pack {file}: no such file")
    try:
        pool, _ = read_pack(file)
    except PackError as e:
        for line in e.problems:
            typer.echo(line)
        typer.echo(shown(f"error: {file}: {plural(len(e.problems), 'problem')}"), err=True)
        raise typer.Exit(1) from None
    if clashes := builtin_clashes(pool, file):
        for line in clashes:
            typer.echo(line)
        raise typer.Exit(1)
    if show_summary:
        typer.echo("\n".join(summary(pool)))
    typer.echo(
        f"{file}: pack {pool.name!r} passes every check: {len(pool.templates)} templates, "
        f"{PER_PHASE} per phase 0..{len(PHASES) - 1}, {len(pool.fillers)} fillers; "
        f"digest {pack_digest(pool)}"
    )
    if model is not None and read_back(pool, file, model, base_url, api_key_env):
        raise typer.Exit(1)


@domain_app.command("show")
def show(
    pack: Annotated[str, typer.Argument(help="A built-in domain's name or a pack file.")],
) -> None:
    """Print a pack as the generator sees it."""
    if is_pack_file(pack) or pack not in BUILTIN:
        try:
            pool, _ = read_pack(Path(pack))
        except PackError as e:
            if not Path(pack).exists():
                raise UsageError(
                    f"unknown domain {pack!r}; choose {', '.join(BUILTIN)} or a pack file"
                ) from None
            raise UsageError("\n".join(e.problems)) from None
        origin = f"file {pack}, digest {pack_digest(pool)}"
    else:
        pool, origin = BUILTIN[pack], "built-in"
    typer.echo(describe(pool, origin))


def describe(pool: DomainPool, origin: str) -> str:
    """The pack as text: per phase, each template's slug, brief text, key words, wordings."""
    out = [f"domain {pool.name} ({origin}): {len(pool.templates)} step templates"]
    own = {t.slug: key_words(t.text) for t in pool.templates}
    for t in pool.templates:
        own[t.slug] = own[t.slug].difference(
            *(key_words(o.text) for o in pool.templates if o is not t)
        )
    for phase in sorted({t.phase for t in pool.templates}):
        out.append(f"\nphase {phase}")
        for t in (t for t in pool.templates if t.phase == phase):
            out.append(f"  {t.slug}: {t.text}")
            out.append(f"    key words: {', '.join(sorted(own[t.slug])) or '(none)'}")
            for f in WORDING_FIELDS:
                out += [f"    {f}[{i}]: {w}" for i, w in enumerate(getattr(t, f))]
    for f in ("re_asks", "ambiguous", "fillers"):
        out.append(f"\n{f}")
        out += [f"  {w}" for w in getattr(pool, f)]
    return "\n".join(out)


@domain_app.command("new")
def new(
    name: Annotated[str, typer.Argument(help="The pack's name (lowercase, hyphenated).")],
    out: Annotated[
        Path | None, typer.Option(help="Where to write it (default ./NAME.toml).")
    ] = None,
) -> None:
    """Write a commented skeleton: fill its 18 step templates, then `ladder domain check`."""
    if not re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", name):
        raise UsageError(f"{name!r}: a pack name is lowercase words joined by hyphens")
    path = out or Path(f"{name}.toml")
    try:  # created exclusively: never over a file, never through a planted link (#47)
        write_new(path, skeleton(name).encode("utf-8"))
    except FileExistsError:
        raise UsageError(f"{path} exists; choose another --out") from None
    except OSError as e:
        raise UsageError(f"cannot write {path}: {e.strerror or e}") from None
    typer.echo(
        f"wrote {path}: fill the {len(PHASES) * PER_PHASE} [[templates]] (slug, text and "
        f"{PARAPHRASES} wordings of each of {', '.join(_REQUIRED)}), then run "
        f"`ladder domain check {path}`"
    )


def _toml(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


_EXAMPLE = PROCUREMENT.templates[0]
_REQUIRED = tuple(f for f in WORDING_FIELDS if f not in LEGACY_WORDINGS)


def skeleton(name: str) -> str:
    """A pack with the pool-wide parts filled and 18 empty step templates, three per phase."""
    ex = "\n".join(
        f"#   {f} = [{', '.join(_toml(w) for w in getattr(_EXAMPLE, f))}]" for f in _REQUIRED
    )
    head = f"""# The domain pack {name!r} (docs/domains.md gives every field and rule).
# Fill the {len(PHASES) * PER_PHASE} [[templates]] below, {PER_PHASE} per phase 0..{len(PHASES) - 1}
# (phase = rough position in the project: dependencies only run from a lower phase to a
# higher one). Then: ladder domain check {name}.toml
#
# Every wording holds exactly one {{wo}} (the work order, e.g. #W1234), names its step by
# words of the step's own text that no other step's text uses (its key words; `ladder
# domain show FILE` lists them), and is used by no other step. Exactly {PARAPHRASES} wordings
# per list. No RC-dddd or #Wdddd codes anywhere. A template may also carry three
# `premature` wordings (urgent asks of a blocked step); only generators 1-2 read them.
#
# An example template (the built-in procurement pack's first):
#   slug = {_toml(_EXAMPLE.slug)}
#   phase = {_EXAMPLE.phase}
#   text = {_toml(_EXAMPLE.text)}
{ex}

name = {_toml(name)}

# Small talk between requests: no work order, no step named.
fillers = [
{"".join(f"  {_toml(f)},{chr(10)}" for f in PROCUREMENT.fillers[:12])}]

# Follow-up asks of a deferred step: {{text}} is the step's text, {{wo}} its work order.
re_asks = [
{"".join(f"  {_toml(f)},{chr(10)}" for f in PROCUREMENT.re_asks)}]

# Probes naming two steps' texts {{a}} and {{b}} (the agent must ask which one).
ambiguous = [
{"".join(f"  {_toml(f)},{chr(10)}" for f in PROCUREMENT.ambiguous)}]
"""
    blocks = []
    for i in range(len(PHASES) * PER_PHASE):
        empty = ", ".join(['""'] * PARAPHRASES)
        blocks.append(
            f'\n[[templates]]\nslug = "{name}-step-{i + 1}"  # unique, lowercase-hyphenated\n'
            f"phase = {i // PER_PHASE}\n"
            'text = ""  # the brief\'s line: a lowercase imperative\n'
            f"asks = [{empty}]  # the ask: a request to do the step\n"
            f"redo_probes = [{empty}]  # a fresh request for a step already done, no reason\n"
            f"status = [{empty}]  # a question about the step's status\n"
            f"legit_redo = [{empty}]  # a reasoned, explicit order to do it again\n"
        )
    return head + "".join(blocks)
