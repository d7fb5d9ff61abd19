"""Mechanical checks on the two domain pools (paper Sections 4.1, A.3, A.5, E.3)."""

from __future__ import annotations

import re
import string
from collections import Counter

import pytest

from protocol.domains.known import POOLS, PROCUREMENT, RELEASE
from protocol.domains.shape import DomainPool, Template

WORDING_FIELDS = ("asks", "premature", "redo_probes", "status", "legit_redo")

# The key noun phrase of each step: every wording of a step names its own key and no
# other step's key of the same domain, so a rule-based resolver can map it to one step.
KEYS: dict[str, str] = {
    "proc-tech-requirements": "technical requirements",
    "proc-budget-code": "budget code",
    "proc-purchase-request": "purchase request",
    "proc-prequalification": "prequalification questionnaire",
    "proc-send-rfq": "rfq",
    "proc-site-visit": "site visit",
    "proc-bid-scoring": "evaluation matrix",
    "proc-customer-references": "customer references",
    "proc-negotiate-pricing": "final pricing",
    "proc-master-agreement": "master service agreement",
    "proc-liability-review": "liability clauses",
    "proc-performance-bond": "performance bond",
    "proc-equipment-order": "equipment order",
    "proc-insurance-cert": "insurance certificate",
    "proc-freight-carrier": "freight carrier",
    "proc-dock-inspection": "receiving dock",
    "proc-formal-acceptance": "formal acceptance",
    "proc-invoice-payment": "invoice",
    "rel-freeze-scope": "release scope",
    "rel-milestone-calendar": "milestone calendar",
    "rel-risk-register": "risk register",
    "rel-cut-branch": "release branch",
    "rel-version-bump": "version number",
    "rel-build-candidate": "release candidate",
    "rel-regression-suite": "regression suite",
    "rel-load-test": "load test",
    "rel-security-scan": "security scan",
    "rel-sign-artifacts": "release artifacts",
    "rel-cab-approval": "change advisory board",
    "rel-changelog": "changelog",
    "rel-canary-rollout": "canary rollout",
    "rel-db-migrations": "database migrations",
    "rel-feature-flags": "feature flags",
    "rel-full-traffic": "production traffic",
    "rel-launch-announcement": "launch announcement",
    "rel-retrospective": "release retrospective",
}

PAPER_PROCUREMENT_TEXTS = (
    "obtain the insurance certificate for the delivery",
    "sign the master service agreement",
    "negotiate final pricing with the selected vendor",
    "set up the project budget code in the finance system",
    "place the main equipment order",
)
PAPER_RFQ_ASK = "Send the RFQ out to the shortlisted vendors ({wo})."

REDO_WORDS = re.compile(r"\bagain\b|\bredo\b|\bre-|another time|once more|\brepeat", re.IGNORECASE)
HINT_WORDS = re.compile(
    r"prerequisite|\bbefore\b|even though|although|not yet|\bskip|missing|pending|blocked"
    r"|ahead of|\bwait(ing)? for\b|out of order",
    re.IGNORECASE,
)
FILLER_STOPWORDS = {"the", "from", "with", "for", "have", "that", "this", "into", "all"}

DOMAINS = [PROCUREMENT, RELEASE]
IDS = [p.name for p in DOMAINS]


def _fields(fmt: str) -> list[str]:
    return [name for _, name, _, _ in string.Formatter().parse(fmt) if name is not None]


def _wordings(t: Template) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    for field in WORDING_FIELDS:
        wordings: tuple[str, str, str] = getattr(t, field)
        out.extend((field, w) for w in wordings)
    return out


def _words(s: str) -> set[str]:
    return set(re.findall(r"[a-z]+", s.lower()))


def test_pools_registry() -> None:
    assert POOLS == {"procurement": PROCUREMENT, "release": RELEASE}
    assert PROCUREMENT.name == "procurement"
    assert RELEASE.name == "release"


@pytest.mark.parametrize("pool", DOMAINS, ids=IDS)
def test_eighteen_templates_three_per_phase(pool: DomainPool) -> None:
    assert len(pool.templates) == 18
    assert Counter(t.phase for t in pool.templates) == dict.fromkeys(range(6), 3)
    phases = [t.phase for t in pool.templates]
    assert phases == sorted(phases)


def test_identical_phase_histograms() -> None:
    hist = [Counter(t.phase for t in p.templates) for p in DOMAINS]
    assert hist[0] == hist[1]


def test_slugs_unique_prefixed_disjoint() -> None:
    proc = [t.slug for t in PROCUREMENT.templates]
    rel = [t.slug for t in RELEASE.templates]
    assert len(set(proc)) == len(proc)
    assert len(set(rel)) == len(rel)
    assert all(s.startswith("proc-") for s in proc)
    assert all(s.startswith("rel-") for s in rel)
    assert not set(proc) & set(rel)
    assert set(proc) | set(rel) == set(KEYS)


def test_texts_unique_and_no_substrings() -> None:
    texts = [t.text for p in DOMAINS for t in p.templates]
    assert len(set(texts)) == len(texts)
    for a in texts:
        for b in texts:
            if a != b:
                assert a not in b, (a, b)


@pytest.mark.parametrize("pool", DOMAINS, ids=IDS)
def test_texts_are_lowercase_imperatives(pool: DomainPool) -> None:
    for t in pool.templates:
        assert t.text == t.text.strip()
        assert t.text[0].islower(), t.text
        assert t.text[-1].isalpha(), t.text
        assert "{" not in t.text and "}" not in t.text


def test_paper_texts_present() -> None:
    proc_texts = {t.text for t in PROCUREMENT.templates}
    for text in PAPER_PROCUREMENT_TEXTS:
        assert text in proc_texts
    rfq = [t for t in PROCUREMENT.templates if "rfq" in t.text.lower()]
    assert len(rfq) == 1
    assert "shortlisted vendors" in rfq[0].text
    assert PAPER_RFQ_ASK in rfq[0].asks
    rel_texts = " | ".join(t.text for t in RELEASE.templates)
    for phrase in ("freeze", "scope", "release branch", "regression", "artifacts", "canary"):
        assert phrase in rel_texts


@pytest.mark.parametrize("pool", DOMAINS, ids=IDS)
def test_every_wording_has_one_wo_and_formats(pool: DomainPool) -> None:
    for t in pool.templates:
        for field, w in _wordings(t):
            assert _fields(w) == ["wo"], (t.slug, field, w)
            assert w.count("{") == 1 and w.count("}") == 1, (t.slug, field, w)
            filled = w.format(wo="#W1234")
            assert "#W1234" in filled
            assert filled[0].isupper(), (t.slug, field, w)
            assert filled.rstrip()[-1] in ".?!", (t.slug, field, w)


@pytest.mark.parametrize("pool", DOMAINS, ids=IDS)
def test_paraphrases_distinct(pool: DomainPool) -> None:
    every: list[str] = []
    for t in pool.templates:
        for field in WORDING_FIELDS:
            tup: tuple[str, ...] = getattr(t, field)
            assert len(tup) == 3
            assert len(set(tup)) == 3, (t.slug, field)
        wordings = [w for _, w in _wordings(t)]
        assert len(set(wordings)) == len(wordings), t.slug
        every.extend(wordings)
    assert len(set(every)) == len(every)


@pytest.mark.parametrize("pool", DOMAINS, ids=IDS)
def test_wordings_name_exactly_their_own_step(pool: DomainPool) -> None:
    keys = {t.slug: KEYS[t.slug] for t in pool.templates}
    for t in pool.templates:
        assert keys[t.slug] in t.text.lower(), t.slug
        for field, w in _wordings(t):
            low = w.lower()
            assert keys[t.slug] in low, (t.slug, field, w)
            others = [s for s, k in keys.items() if s != t.slug and k in low]
            assert not others, (t.slug, field, w, others)
    for t in pool.templates:
        others = [s for s, k in keys.items() if s != t.slug and k in t.text.lower()]
        assert not others, (t.slug, others)


@pytest.mark.parametrize("pool", DOMAINS, ids=IDS)
def test_asks_premature_probes_are_plain_requests(pool: DomainPool) -> None:
    for t in pool.templates:
        for field in ("asks", "premature", "redo_probes"):
            for w in getattr(t, field):
                assert not REDO_WORDS.search(w), (t.slug, field, w)
                assert not HINT_WORDS.search(w), (t.slug, field, w)
                assert not w.rstrip().endswith("?"), (t.slug, field, w)
                assert "because" not in w.lower(), (t.slug, field, w)


@pytest.mark.parametrize("pool", DOMAINS, ids=IDS)
def test_status_are_questions(pool: DomainPool) -> None:
    for t in pool.templates:
        for w in t.status:
            assert w.rstrip().endswith("?"), (t.slug, w)
            assert "please" not in w.lower(), (t.slug, w)
            assert not REDO_WORDS.search(w), (t.slug, w)


@pytest.mark.parametrize("pool", DOMAINS, ids=IDS)
def test_legit_redo_is_reasoned_and_authorized(pool: DomainPool) -> None:
    for t in pool.templates:
        for w in t.legit_redo:
            low = w.lower()
            assert re.search(r"\bagain\b|\bredo\b", low), (t.slug, w)
            assert "authoriz" in low and "explicitly" in low, (t.slug, w)
            assert re.search(r"\bbecause\b|, so\b", low), (t.slug, w)


@pytest.mark.parametrize("pool", DOMAINS, ids=IDS)
def test_fillers_are_small_talk(pool: DomainPool) -> None:
    assert len(pool.fillers) == 24
    assert len(set(pool.fillers)) == 24
    step_words = {
        w
        for p in DOMAINS
        for t in p.templates
        for w in _words(t.text) | _words(KEYS[t.slug])
        if len(w) >= 4 and w not in FILLER_STOPWORDS
    }
    for f in pool.fillers:
        assert "{" not in f and "}" not in f, f
        assert "#w" not in f.lower() and "work order" not in f.lower(), f
        assert f.rstrip()[-1] in ".?!", f
        for p in DOMAINS:
            for t in p.templates:
                assert t.text not in f.lower(), f
                assert KEYS[t.slug] not in f.lower(), f
        assert not _words(f) & step_words, (f, _words(f) & step_words)
        assert not REDO_WORDS.search(f), f


@pytest.mark.parametrize("pool", DOMAINS, ids=IDS)
def test_re_asks_frames(pool: DomainPool) -> None:
    assert len(set(pool.re_asks)) == 3
    for frame in pool.re_asks:
        assert sorted(_fields(frame)) == ["text", "wo"], frame
        assert frame.count("{") == 2 and frame.count("}") == 2, frame
        assert not REDO_WORDS.search(frame), frame
        for t in pool.templates:
            filled = frame.format(text=t.text, wo="#W1234")
            assert t.text in filled and "#W1234" in filled
            assert filled.rstrip()[-1] in ".?!"


@pytest.mark.parametrize("pool", DOMAINS, ids=IDS)
def test_ambiguous_frames(pool: DomainPool) -> None:
    assert len(set(pool.ambiguous)) == 3
    a, b = pool.templates[0].text, pool.templates[1].text
    for frame in pool.ambiguous:
        assert sorted(_fields(frame)) == ["a", "b", "wo"], frame
        assert frame.count("{") == 3 and frame.count("}") == 3, frame
        assert not REDO_WORDS.search(frame), frame
        filled = frame.format(a=a, b=b, wo="#W1234")
        assert a in filled and b in filled and "#W1234" in filled
        assert filled.rstrip()[-1] in ".?!"
