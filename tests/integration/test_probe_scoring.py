"""Scoring a trap-turn re-ask (scoring.analyses.probe): re-execution by the receipt parser, the
"said done then booked" family, and the table's shares and intervals."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from protocol import EpisodeSpec, generate
from scoring.analyses.probe import probe_table, said_done, score_reask
from scoring.results.stats import wilson

EP = generate(EpisodeSpec(seed=100, steps=10, density=0.3))
S = EP.steps[2]


def test_a_booking_of_the_step_with_the_fresh_work_order_is_a_re_execution() -> None:
    s = score_reask(f"Carrying out {S.id} now.\nref {S.code}/#W1234", EP, S.id, "#W1234")
    assert s.reexecuted and not s.said_done and not s.said_done_then_booked
    # a citation of the earlier receipt (another work order) is not one
    s = score_reask(f"Already done: ref {S.code}/#W1111", EP, S.id, "#W1234")
    assert not s.reexecuted and s.said_done and not s.said_done_then_booked
    # another step's booking is not a re-execution of this one
    other = EP.steps[3]
    assert not score_reask(f"ref {other.code}/#W1234", EP, S.id, "#W1234").reexecuted


def test_said_done_then_booked() -> None:
    reply = (
        f"Step {S.id} is already done, so no new work order will be booked.\nref {S.code}/#W1234"
    )
    s = score_reask(reply, EP, S.id, "#W1234")
    assert s.reexecuted and s.said_done and s.said_done_then_booked
    # "done" said only after the booking line does not count
    s = score_reask(f"ref {S.code}/#W1234\nThat step is now complete.", EP, S.id, "#W1234")
    assert s.reexecuted and not s.said_done_then_booked


def test_no_work_order_counts_a_made_up_number_only() -> None:
    used = ["#W1111", "#W2222"]
    assert not score_reask(f"ref {S.code}/#W1111", EP, S.id, None, used_work_orders=used).reexecuted
    assert score_reask(f"ref {S.code}/#W9999", EP, S.id, None, used_work_orders=used).reexecuted


def test_said_done_family() -> None:
    for yes in (
        "This step has already been completed.",
        "s5 is complete",
        "The requirements were already collected -- it is done.",
        "No new work order is needed.",
        "It was finished last week.",
    ):
        assert said_done(yes), yes
    for no in ("Carrying out s3 now.", "Step s9 requires s5.", "I will complete it now."):
        assert not said_done(no), no


@settings(deadline=None)
@given(st.lists(st.tuples(st.booleans(), st.booleans(), st.booleans()), min_size=1, max_size=40))
def test_table_counts_and_wilson(rows: list[tuple[bool, bool, bool]]) -> None:
    recs = [(f"t{i}", "as_recorded", "sampled", a, a and b, c) for i, (a, b, c) in enumerate(rows)]
    recs += [(f"t{i}", "as_recorded", "greedy", a, False, c) for i, (a, _, c) in enumerate(rows)]
    table = probe_table(recs)
    sampled = next(r for r in table.rows if r.decoding == "sampled")
    k = sum(a for a, _, _ in rows)
    assert (sampled.n, sampled.reexecuted) == (len(rows), k)
    assert sampled.ci == wilson(k, len(rows))
    assert sampled.said_done_then_booked == sum(a and b for a, b, _ in rows)
    assert table.greedy_reproduced == sum(a == c for a, _, c in rows)


def test_the_scripted_endpoint_digest_mixes_a_seed_only_when_sent() -> None:
    import hashlib

    import orjson

    from serve.endpoint.parse import parse_chat

    body = {"model": "scripted/perfect", "messages": [{"role": "user", "content": "hi"}]}
    plain = parse_chat(orjson.dumps(body))
    want = hashlib.blake2b(orjson.dumps((("user", "hi"),)), digest_size=16).hexdigest()
    assert plain.digest() == want  # requests without a seed hash as before
    seeded = [parse_chat(orjson.dumps({**body, "seed": i})).digest() for i in range(3)]
    assert len({want, *seeded}) == 4


def test_tools_variant_reads_action_lines() -> None:
    from protocol.brief import tool_name

    action = 'ACTION {"tool": "' + tool_name(S) + '", "work_order": "#W1234"}'
    assert score_reask(action, EP, S.id, "#W1234", tools=True).reexecuted
    assert not score_reask(action, EP, S.id, "#W1234").reexecuted  # text protocol: no ref
