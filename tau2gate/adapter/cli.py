"""``python -m tau2gate.adapter``: gold replay, compile, and the rungs on a τ²-bench domain.

Commands (each has ``--help`` and ``--domain airline|retail``, default airline; bad input and
a missing τ²-bench exit 2 with one line):

* ``gold-replay [--rules FILE]``: every gold write action through the gate under the
  reference rules (and under a compile given by ``--rules``); over-blocks listed.
* ``compile (--scripted | --base-url URL --model NAME) [--out FILE]``: the agent model compiles the domain's
  policy into rules; the reply is saved as is and its validation errors printed.
* ``run [--rungs none,shown,advisory,enforce] [--rules FILE] (--scripted | --gold |
  --base-url URL --agent-model M --user-model M) [--tasks N] [--trials K]
  [--concurrency C] [--out DIR]``: each rung on the same tasks and trials; one line per
  rung, the paired pass^1 difference of every rung against ``none``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn

import msgspec

from scoring.analyses.tau2_paired import (
    EpisodeOutcome,
    paired_bootstrap,
    successes_by_task,
    summarize,
)
from scoring.redact import add_secret, redact
from tau2gate.adapter._tau2 import Tau2Missing, require_tau2
from tau2gate.domains import DOMAINS, UnknownDomain, get_domain
from tau2gate.files import read_regular, write_atomic
from tau2gate.gate import RUNGS, Rung
from tau2gate.parse import Parsed, parse_rules
from tau2gate.reference import reference_rules

__all__ = ["main"]


def _say(text: str, *, err: bool = False) -> None:
    """One printed line (to stderr with ``err``), every configured key redacted (#47): a
    model's compile reply, a rules path and an error line may all quote it."""
    print(redact(text), file=sys.stderr if err else sys.stdout)


def _register_keys(argv: Sequence[str]) -> None:
    """Register each key the gate holds for redaction (#47): the value of ``--api-key``
    (taken from ``argv`` before parsing, so a parse error's line is redacted too) and of
    every ``*_API_KEY`` environment variable (τ²-bench's default NL-assertion judge reaches
    its model through litellm, which reads them)."""
    for i, arg in enumerate(argv):
        if arg == "--api-key" and i + 1 < len(argv):
            add_secret(argv[i + 1])
        elif arg.startswith("--api-key="):
            add_secret(arg.partition("=")[2])
    for name, value in os.environ.items():
        if name.endswith("_API_KEY"):
            add_secret(value)


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        _say(f"{self.prog}: {message}", err=True)
        raise SystemExit(2)


def _quiet() -> None:
    try:
        from loguru import logger

        logger.remove()
        logger.add(sys.stderr, level="CRITICAL")
    except ImportError:  # τ²-bench (which brings loguru) is missing: require_tau2 says so
        return
    try:
        import litellm

        litellm.suppress_debug_info = True
        litellm.set_verbose = False
    except ImportError:
        pass


def _load_rules(path: str | None, domain: str) -> tuple[str, Parsed]:
    if path is None:
        return "reference", reference_rules(domain)
    try:
        return path, parse_rules(read_regular(Path(path)).decode("utf-8"), domain)
    except OSError as exc:
        raise _BadInput(f"cannot read rules {ascii(path)[1:-1]}: {exc.strerror}") from None
    except UnicodeDecodeError:
        raise _BadInput(f"cannot read rules {ascii(path)[1:-1]}: not UTF-8 text") from None


class _BadInput(Exception):
    pass


def _tasks(args: argparse.Namespace) -> list[Any]:
    from tau2gate.adapter.replay import domain_tasks

    tasks = domain_tasks(args.domain, None if args.split == "all" else args.split)
    return tasks[: args.tasks] if args.tasks else tasks


def _gold_replay(args: argparse.Namespace) -> int:
    from tau2gate.adapter.replay import gold_replay

    tasks = _tasks(args)
    sets = [_load_rules(None, args.domain)] + (
        [_load_rules(args.rules, args.domain)] if args.rules else []
    )
    for name, parsed in sets:
        writes = gold_replay(parsed.rules, tasks)
        blocked = [w for w in writes if w.denied_by]
        rejected = sum(w.tool_rejects for w in blocked)
        also = f" ({rejected} of them rejected by tau2-bench's own tool too)" if rejected else ""
        _say(
            f"gold replay [{args.domain}, {name}]: {len(tasks)} tasks, {len(writes)} gold write actions, "
            f"{len(parsed.rules.rules)} rules ({len(parsed.errors)} compile errors), "
            f"{len(blocked)} over-blocked{also}"
        )
        for w in blocked:
            note = " (the tool rejects it too)" if w.tool_rejects else ""
            _say(
                f"  over-block: task {w.task_id} {w.action_id} {w.tool} by {','.join(w.denied_by)}{note}"
            )
    return 0


def _compile(args: argparse.Namespace) -> int:
    from openai import OpenAI

    from tau2gate.compile import compile_prompt, read_compile
    from tau2gate.scripted import COMPILE_MODEL, ScriptedServer

    if not args.scripted and not (args.base_url and args.model):
        raise _BadInput("give --scripted, or --base-url with --model")
    env = require_tau2().registry.get_env_constructor(args.domain)()
    with ScriptedServer(args.domain) as server:
        client = OpenAI(
            base_url=server.base_url if args.scripted else args.base_url, api_key=args.api_key
        )
        reply = client.chat.completions.create(
            model=COMPILE_MODEL if args.scripted else args.model,
            messages=[{"role": "user", "content": compile_prompt(env.get_policy(), args.domain)}],
            temperature=0.0,
        )
    text = reply.choices[0].message.content or ""
    write_atomic(Path(args.out), text.encode("utf-8"))
    parsed = read_compile(text, args.domain)
    _say(f"compile: {len(parsed.rules.rules)} rules, {len(parsed.errors)} errors -> {args.out}")
    for error in parsed.errors:
        _say(f"  error: {error}")
    return 0


def _rungs(text: str) -> list[Rung]:
    out: list[Rung] = []
    for name in text.split(","):
        if name not in RUNGS:
            raise _BadInput(f"unknown rung {name!r} (one of {', '.join(RUNGS)})")
        out.append(name)
    return out


def _run(args: argparse.Namespace) -> int:
    from tau2gate.adapter.simulate import Endpoint, run_rung, set_judge
    from tau2gate.scripted import AGENT_MODEL, USER_MODEL, ScriptedServer

    rungs = _rungs(args.rungs)
    name, parsed = _load_rules(args.rules, args.domain)
    if not (args.scripted or args.gold) and not (
        args.base_url and args.agent_model and args.user_model
    ):
        raise _BadInput(
            "give --scripted, --gold, or --base-url with --agent-model and --user-model"
        )
    if args.judge_model and not args.base_url:
        raise _BadInput("--judge-model needs --base-url")
    if args.judge_model:
        set_judge(Endpoint(base_url=args.base_url, model=args.judge_model, api_key=args.api_key))
    tasks = _tasks(args)
    results: dict[str, list[EpisodeOutcome]] = {}
    with ScriptedServer(args.domain) as server:
        base = server.base_url if args.scripted else args.base_url
        agent = (
            None
            if args.gold
            else Endpoint(
                base_url=base,
                model=AGENT_MODEL if args.scripted else args.agent_model,
                api_key=args.api_key,
            )
        )
        user = (
            None
            if args.gold
            else Endpoint(
                base_url=base,
                model=USER_MODEL if args.scripted else args.user_model,
                api_key=args.api_key,
            )
        )
        for rung in rungs:
            results[rung] = run_rung(
                rung,
                parsed.rules,
                tasks,
                agent=agent,
                user=user,
                trials=args.trials,
                concurrency=args.concurrency,
                max_steps=args.max_steps,
                seed=args.seed,
                evaluation=args.evaluation,
            )
    _report(results, name, args)
    return 0


def _report(results: dict[str, list[EpisodeOutcome]], rules: str, args: argparse.Namespace) -> None:
    ks = sorted({1, args.trials})
    _say(
        f"domain: {args.domain}; evaluation: {args.evaluation}; rules: {rules}; agent: {'gold replay' if args.gold else 'scripted' if args.scripted else args.agent_model}"
    )
    _say(
        "rung       tasks  pass^1  "
        + "  ".join(f"pass^{k}" for k in ks[1:])
        + "  wrongful-write eps  violating writes executed  vetoes  notices  overrides"
    )
    lines = []
    for rung, outcomes in results.items():
        s = summarize(rung, outcomes, ks)
        lines.append(msgspec.to_builtins(s))
        extra = "  ".join(f"{s.pass_k.get(k, float('nan')):6.3f}" for k in ks[1:])
        _say(
            f"{rung:<10} {s.n_tasks:5d}  {s.pass_1:6.3f}  {extra}  {s.wrongful_write_episodes:18d}  {s.violating_writes_executed:25d}  {s.vetoes:6d}  {s.notices:7d}  {s.overrides:9d}"
        )
    if "none" in results:
        base = successes_by_task(results["none"])
        for rung, outcomes in results.items():
            if rung == "none":
                continue
            d = paired_bootstrap(base, successes_by_task(outcomes), seed=args.seed)
            lines.append({"contrast": f"{rung} - none", **msgspec.to_builtins(d)})
            _say(
                f"pass^1 {rung} - none: {d.diff:+.3f}, 95% CI [{d.low:+.3f}, {d.high:+.3f}] over {d.n_tasks} paired tasks"
            )
    if args.out:
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        episodes = "".join(
            json.dumps({"rung": rung, **msgspec.to_builtins(o)}) + "\n"
            for rung, outcomes in results.items()
            for o in outcomes
        )
        write_atomic(out / "episodes.jsonl", episodes.encode("utf-8"))
        summary = "".join(json.dumps(x) + "\n" for x in lines)
        write_atomic(out / "summary.jsonl", summary.encode("utf-8"))


def _parser() -> _Parser:
    p = _Parser(
        prog="python -m tau2gate.adapter", description="The tau2-bench gate (airline, retail)."
    )
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser)
    g = sub.add_parser(
        "gold-replay", help="gold write actions through the gate; over-blocks listed"
    )
    g.add_argument("--rules", help="a compiled rule file to audit beside the reference rules")
    _tasks_opts(g)
    c = sub.add_parser("compile", help="compile the domain's policy into rules with a model")
    _domain_opt(c)
    c.add_argument("--base-url")
    c.add_argument("--model")
    c.add_argument("--scripted", action="store_true", help="the scripted compiler (no model)")
    c.add_argument("--api-key", default="EMPTY")
    c.add_argument("--out", default="compiled_rules.json")
    _run_opts(
        sub.add_parser("run", help="run the rungs and score them with tau2-bench's evaluation")
    )
    return p


def _domain_opt(q: argparse.ArgumentParser) -> None:
    q.add_argument(
        "--domain",
        default="airline",
        help=f"tau2-bench domain: {', '.join(DOMAINS)} (default airline)",
    )


def _tasks_opts(q: argparse.ArgumentParser) -> None:
    _domain_opt(q)
    q.add_argument("--split", default="base", help="tau2-bench task split, or 'all' (default base)")
    q.add_argument("--tasks", type=int, default=0, help="only the first N tasks (0: all)")


def _run_opts(r: argparse.ArgumentParser) -> None:
    """The options of ``run``."""
    r.add_argument("--rungs", default=",".join(RUNGS))
    r.add_argument("--rules", help="compiled rule file (default: the reference rules)")
    r.add_argument(
        "--scripted", action="store_true", help="agent and user on the scripted endpoint"
    )
    r.add_argument(
        "--gold", action="store_true", help="the gold-replay agent and the scripted user"
    )
    r.add_argument("--base-url")
    r.add_argument("--agent-model")
    r.add_argument("--user-model")
    r.add_argument("--api-key", default="EMPTY")
    r.add_argument("--trials", type=int, default=1)
    r.add_argument("--concurrency", type=int, default=4)
    r.add_argument("--max-steps", type=int, default=100)
    r.add_argument("--seed", type=int, default=300)
    r.add_argument(
        "--evaluation",
        choices=("all", "env"),
        default="all",
        help="tau2-bench evaluation: all (its default; NL assertions need a judge model) or "
        "env (database and environment assertions only, no model)",
    )
    r.add_argument(
        "--judge-model",
        help="served model on --base-url that judges tau2-bench's NL assertions "
        "(default: tau2-bench's own, an OpenAI model)",
    )
    r.add_argument("--out")
    _tasks_opts(r)


def main(argv: Sequence[str] | None = None) -> int:
    _register_keys(sys.argv[1:] if argv is None else argv)
    args = _parser().parse_args(argv)
    add_secret(getattr(args, "api_key", None))  # an abbreviated flag (``--api-k``) too
    try:
        get_domain(args.domain)
        _quiet()
        require_tau2()
        handler = {"gold-replay": _gold_replay, "compile": _compile, "run": _run}[args.command]
        return handler(args)
    except (Tau2Missing, _BadInput, UnknownDomain) as exc:
        _say(f"error: {exc}", err=True)
        return 2
