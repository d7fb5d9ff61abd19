"""The LangGraph graph of one harness episode: user turn, agent call, parse, gate, tool.

One ``StateGraph`` per episode, run once with ``ainvoke`` on the runner's event loop (no
thread). Its nodes are the steps of a turn; the graph state is the next node's name
(``phase``) and the per-episode objects live in the :class:`Play` the nodes are bound to:

* ``user``: closes the turn in play (the realized state advances on its executed steps; the
  turn is recorded), then the scripted user's next turn, shaped by the arm (checklist,
  directive); END when the schedule is over.
* ``agent``: the results of the previous reply's calls, if any, go back in the user role;
  then one call to the agent through the runner's endpoint client (``ctx.agent``: the
  limiter, retries, budgets and accounting of the text protocol).
* ``parse``: the reply's ``ACTION`` lines (:func:`protocol.state.receipts.find_actions`), in order.
* ``gate``: the next ACTION's gate decision (:class:`runner.harness.dispatch.Dispatch`).
* ``tool``: the executor: the admitted call's tool stamps the workspace.

After ``parse``, ``gate`` and ``tool``: the next ACTION of the reply goes to ``gate``; when
none is left, the agent is called again with the results (at most
:data:`runner.harness.play.MAX_FOLLOW_UPS` times a turn), and a reply with no call (or the
limit) ends the turn. The routing is :meth:`Play._after_calls`; a node returns the name of
the next node. Folding the turn's close into ``user`` and the results into ``agent`` keeps a
booking turn at seven graph steps (LangGraph costs about half a millisecond of CPU a step).
"""

from __future__ import annotations

from typing import Any, Literal, TypedDict

from runner.harness.play import Play

try:
    from langgraph.graph import END, START, StateGraph
except ImportError as e:  # pragma: no cover - the extra is part of dev
    raise ImportError("the tool harness needs LangGraph: pip install 'state-ladder[tools]'") from e

__all__ = ["NODES", "Phase", "build_graph", "run_graph"]

Phase = Literal["user", "agent", "parse", "gate", "tool", "end"]
NODES: tuple[Phase, ...] = ("user", "agent", "parse", "gate", "tool")


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
    # every node visit is a LangGraph step: three a turn without calls, more with them
    limit = 64 * (len(play.user.episode.turns) + 8) * 4
    await graph.ainvoke({"phase": "user"}, {"recursion_limit": limit})
