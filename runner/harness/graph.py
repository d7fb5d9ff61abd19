"""The LangGraph graph of one harness episode: user turn, agent call, parse, gate, tool.

One ``StateGraph`` per episode, run once with ``ainvoke`` on the runner's event loop (no
thread). Its nodes are the steps of a turn; the graph state is the next node's name
(``phase``) and the per-episode objects live in the :class:`Play` the nodes are bound to:

* ``user``: the scripted user's next turn, shaped by the arm (checklist, directive); END
  when the schedule is over.
* ``agent``: one call to the agent through the runner's endpoint client (``ctx.agent``: the
  limiter, retries, budgets and accounting of the text protocol).
* ``parse``: the reply's ``ACTION`` lines (:func:`protocol.receipts.find_actions`), in order.
* ``gate``: the next ACTION's gate decision (:class:`runner.harness.dispatch.Dispatch`).
* ``tool``: the admitted call's tool stamps the workspace.
* ``results``: tool results and refusal notices go back in the user role and the agent is
  called again (at most ``MAX_FOLLOW_UPS`` times a turn); a reply with no new call closes it.
* ``close``: the realized state advances on the executed steps; the turn is recorded.
"""

from __future__ import annotations

from typing import Any, Literal, TypedDict

from runner.harness.play import Play

try:
    from langgraph.graph import END, START, StateGraph
except ImportError as e:  # pragma: no cover - the extra is part of dev
    raise ImportError("the tool harness needs LangGraph: pip install 'state-ladder[tools]'") from e

__all__ = ["NODES", "Phase", "build_graph", "run_graph"]

Phase = Literal["user", "agent", "parse", "gate", "tool", "results", "close", "end"]
NODES: tuple[Phase, ...] = ("user", "agent", "parse", "gate", "tool", "results", "close")


class GraphState(TypedDict):
    phase: Phase


def _route(state: GraphState) -> str:
    return END if state["phase"] == "end" else state["phase"]


def build_graph(play: Play) -> Any:
    """The compiled graph whose nodes are ``play``'s steps."""
    graph: StateGraph[GraphState] = StateGraph(GraphState)
    for name in NODES:
        graph.add_node(name, _node(play, name))
    graph.add_edge(START, "user")
    targets = [*NODES, END]
    for name in NODES:
        graph.add_conditional_edges(name, _route, targets)
    return graph.compile()


def _node(play: Play, name: Phase) -> Any:
    step = getattr(play, f"on_{name}")

    async def node(state: GraphState) -> GraphState:
        return {"phase": await step()}

    node.__name__ = name
    return node


async def run_graph(play: Play) -> None:
    """Play the whole episode through its graph."""
    graph = build_graph(play)
    # every node visit is a LangGraph step: about six a turn, more with tool calls
    limit = 64 * (len(play.user.episode.turns) + 8) * 4
    await graph.ainvoke({"phase": "user"}, {"recursion_limit": limit})
