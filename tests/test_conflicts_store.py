"""The contradiction pipeline through the store (issue 3): the store proposes, an agent
judges, a person resolves. Also the review queue and the events log."""

from __future__ import annotations

import json
import re

import pytest
from conftest import BOTH_ENGINES, iso

from ledger.clock import DAY_MS
from ledger.errors import InvalidInput, NotAClaim, UnknownCandidate, UnknownConflict
from ledger.ingest import source_from_text
from ledger.models import FileKey

ENGINES = BOTH_ENGINES  # the same behaviour on SQLite and PostgreSQL (tests/conftest.py)


def ids(res) -> list[str]:
    return [m.id for m in res.hits]


def pair(a, b) -> set[str]:
    return {a.id, b.id}


def candidate_pairs(led) -> list[set[str]]:
    return [{c.a.id, c.b.id} for c in led.candidates(100)]


def n_candidate_rows(led) -> int:
    return led.store.scalar("SELECT count(*) FROM conflict_candidates")


def conflict_pair(led, a_text, b_text, cluster="money", kind="value drift", detector=0.9):
    """Write two contradicting claims and judge their candidate a conflict. Returns the
    conflict's A and B sides (the pair is stored ordered by id) and its id."""
    x = led.remember(a_text, cluster=cluster, agent="writer-a").memory
    y = led.remember(b_text, cluster=cluster, agent="writer-b").memory
    (cand,) = led.candidates()
    assert {cand.a.id, cand.b.id} == {x.id, y.id}
    cf = led.judge(cand.id, "conflict", agent="judge", kind=kind, detector=detector, note="both cannot hold")
    c = led.conflict(cf)
    return c.a, c.b, cf


# ---------------------------------------------------------------------------- the proposer


def test_12_vs_24_months_proposes_a_candidate_and_no_conflict(ledger):
    a = ledger.remember("Renews every 12 months", cluster="money", agent="x").memory
    res = ledger.remember("Renews every 24 months", cluster="money", agent="y")
    assert len(res.proposed) == 1 and res.pending_candidates == 1
    (c,) = ledger.candidates()
    assert pair(c.a, c.b) == pair(a, res.memory)
    assert c.a.id < c.b.id  # stored ordered
    assert c.signals == ("divergent numbers",)
    assert round(c.score, 2) == 0.73
    assert ledger.conflicts() == [] and ledger.stats()["conflicts"] == 0


def test_friday_1600_vs_thursday_0930(ledger):
    ledger.remember("Weekly review runs Friday 16:00", cluster="proc", agent="x")
    ledger.remember("Weekly review runs Thursday 09:30", cluster="proc", agent="y")
    (c,) = ledger.candidates()
    assert set(c.signals) == {"divergent times", "divergent weekdays"}


def test_subject_only_match(ledger):
    a = ledger.remember("Trains Tue/Thu/Sun at 6am, 8-10km", cluster="health", agent="x").memory
    b = ledger.remember("Trains Mon/Wed/Fri at 7am after the knee strain", cluster="health", agent="y").memory
    (c,) = ledger.candidates()
    assert pair(c.a, c.b) == pair(a, b)
    assert set(c.signals) == {"divergent times", "divergent weekdays"}


def test_one_shared_word_among_many_is_not_a_subject(ledger):
    # Differs from the seed (head overlap): two long claims sharing only their first
    # word are not compared (issue 15; chat turns sharing a name raised thousands).
    ledger.remember("Trains Tue/Thu/Sun mornings before work at the riverside track with the running club", cluster="health", agent="x")
    ledger.remember("Trains Mon/Wed/Fri evenings after dinner, usually alone on the hotel treadmill", cluster="health", agent="y")
    assert ledger.candidates() == []


def test_remember_proposes_only_same_subject_pairs(ledger):
    # issue 15: 81 facts of this shape gave 1,390 candidates; a port of another service
    # is no contradiction, a second port for one service is.
    services = "auth billing search ingest export mailer gateway".split()
    for i, name in enumerate(services):
        ledger.remember(f"The {name} service listens on port {8000 + i}", cluster="proc", agent="x")
    assert ledger.candidates() == []
    res = ledger.remember("The billing service listens on port 9001", cluster="proc", agent="y")
    (c,) = ledger.candidates()
    assert res.memory.id in {c.a.id, c.b.id}
    assert "billing" in c.a.text and "billing" in c.b.text


def test_unrelated_and_identical_claims_are_not_proposed(ledger):
    ledger.remember("Renews every 12 months", cluster="money", agent="x")
    ledger.remember("Renews every 12 months", cluster="money", agent="y")  # same value: no divergence
    ledger.remember("Prefers tea over coffee", cluster="money", agent="y")
    ledger.remember("Renews every 24 months", cluster="prefs", agent="y")  # other cluster, no shared file
    assert ledger.candidates() == []


SQUADS = "amber birch cedar delta ember falcon garnet harbor indigo juniper kestrel lotus maple nectar onyx".split()


def test_a_cold_claim_is_still_compared(ledger, clock):
    """Never read, written long ago, 600 newer (and recently read) claims in the cluster
    that share a word with it: the seed's 500-most-recently-read window would miss it."""
    cold = ledger.remember("The billing service invoice retention is 7 years", cluster="money", agent="old").memory
    clock.advance(days=5)
    st = ledger.store
    newer = []
    with st.atomic():
        for i in range(600):
            squad = SQUADS[i % len(SQUADS)] + " " + SQUADS[(i // len(SQUADS)) % len(SQUADS)]
            newer.append(st.insert_claim(f"The billing service dashboard belongs to squad {squad}", "money", "busy", clock()))
            clock.advance(ms=60_000)
        st.count_read(newer, "busy", clock())
    clock.advance(days=400)
    res = ledger.remember("The billing service invoice retention is 10 years", cluster="money", agent="new")
    pairs = candidate_pairs(ledger)
    assert {cold.id, res.memory.id} in pairs
    assert len(res.proposed) == 1  # the 600 others share words but diverge on nothing that overlaps enough


def _common_word_fillers(ledger, clock, n=520):
    """``n`` claims (more than the store's document-frequency cap) that share the common
    words of the tests below but no rare one."""
    with ledger.store.atomic():
        for i in range(n):
            squad = SQUADS[i % len(SQUADS)] + " " + SQUADS[(i // len(SQUADS)) % len(SQUADS)]
            ledger.store.insert_claim(f"The service timeout for squad {squad} is {i % 90 + 1} seconds", "code", "busy", clock())


def test_a_peer_is_found_through_its_rare_words_among_hundreds_sharing_common_ones(ledger, clock):
    """Only the rarest few query words are searched (docs/benchmarks.md, "remember at
    100k"): the words every filler shares (service, timeout, seconds) are left out, and
    the contradicting claim is still found through the words it shares with few."""
    old = ledger.remember("The payments gateway service timeout is 30 seconds", cluster="code", agent="a").memory
    _common_word_fillers(ledger, clock)
    res = ledger.remember("The payments gateway service timeout is 45 seconds", cluster="code", agent="b")
    assert {old.id, res.memory.id} in candidate_pairs(ledger)


def test_a_repeated_claim_is_a_duplicate_among_hundreds_sharing_common_words(ledger, clock):
    old = ledger.remember("The ledger ingest service timeout is 12 seconds on staging", cluster="code", agent="a").memory
    _common_word_fillers(ledger, clock)
    res = ledger.remember("The ledger ingest service timeout is 12 seconds on staging", cluster="code", agent="b")
    assert res.duplicate and res.memory.id == old.id


def test_words_absent_from_the_store_do_not_crowd_out_shared_ones(ledger, clock):
    """Most query words are new to the store (found in no memory) and would fill the
    few searched slots; they are skipped, so the shared rare words are searched."""
    old = ledger.remember("Nightly backup window for the warehouse database is 2 hours", cluster="code", agent="a").memory
    _common_word_fillers(ledger, clock)
    res = ledger.remember("Nightly backup window for the warehouse database is 3 hours per zyxwvut qwertzuiop plonkfish grobnitzer",
                          cluster="code", agent="b")
    assert {old.id, res.memory.id} in candidate_pairs(ledger)


@pytest.mark.sqlite_only  # the two SQLite statements of the peer lookup (PostgreSQL has its own)
def test_peers_by_cluster_list_are_the_joined_peers_in_the_same_order(ledger, clock):
    """The peer lookup for words matching many memories lists the cluster's live claims
    first (store/conflicts.py ``_PEERS_BY_CLUSTER``); it must return the rows of the plain
    join, in the same order, ties included: many claims in several clusters sharing
    common words, repeated texts (equal BM25), chunks, dropped and archived claims."""
    import random

    from ledger.store import conflicts as cq

    rng = random.Random(14)
    common = "service timeout deploy cache retry queue worker".split()
    rare = "zephyr quokka nimbus saffron obelisk tundra".split()
    mids = []
    with ledger.store.atomic():
        for i in range(700):
            words = rng.sample(common, 3) + rng.sample(rare, rng.randint(0, 2))
            text = "The " + " ".join(words) + (" is set" if i % 5 else f" is {i % 7} seconds")
            mids.append(ledger.store.insert_claim(text, ("code", "proc", "money")[i % 3], "w", clock()))
    ledger.ingest_chunks("notes.md", ["The service timeout cache note in a document chunk"] * 3, cluster="code", agent="w")
    ledger.forget(mids[:40:3], agent="w")
    for mid in mids[1:60:4]:
        ledger.store.set_flags(mid, clock(), archived=True)
    conn = ledger.store._conn
    checked = 0
    for _ in range(60):
        terms = rng.sample(common + rare, rng.randint(1, 4))
        expr = " OR ".join(f'"{t}"' for t in terms)
        for cluster in ("code", "proc", "money", "nope"):
            for limit in (5, 50, 200):
                args = (expr, cluster, mids[rng.randrange(len(mids))], limit)
                joined = conn.execute(cq._PEERS, args).fetchall()
                listed = conn.execute(cq._PEERS_BY_CLUSTER, args).fetchall()
                assert [tuple(r) for r in listed] == [tuple(r) for r in joined], (expr, cluster, limit)
                checked += bool(joined)
    assert checked > 300
    plan = " ".join(str(r[3]) for r in conn.execute("EXPLAIN QUERY PLAN " + cq._PEERS_BY_CLUSTER, ('"x"', "code", "m", 5)))
    assert plan.startswith("SCAN f VIRTUAL TABLE")  # driven by the full-text scan, never by the list


def test_rarest_terms_keeps_the_fewest_found_and_drops_the_unfound():
    from ledger.store.conflicts import rarest_terms

    df = {"service": 500, "timeout": 500, "payments": 2, "gateway": 3, "novel": 0, "seconds": 500, "x": 7}
    assert rarest_terms(list(df), df.get, 3) == ["payments", "gateway", "x"]
    assert rarest_terms(["service", "timeout", "seconds", "novel"], df.get, 2) == ["service", "timeout"]  # ties: given order
    assert rarest_terms(["novel", "service"], df.get, 4) == ["novel", "service"]  # few enough: all, uncounted


def test_claims_sharing_a_file_key_are_compared_across_clusters(ledger):
    key = FileKey("/repo/models/model.ckpt", 10, 1, "ab")
    a = ledger.remember("model.ckpt is a safetensors file of 7 GB", cluster="code", agent="x", files=[key]).memory
    b = ledger.remember("model.ckpt is a safetensors file of 3 GB", cluster="projects", agent="y", files=[key]).memory
    assert candidate_pairs(ledger) == [pair(a, b)]
    # the same two texts in different clusters without a shared file are not compared
    ledger.remember("config.yaml is a settings file of 7 KB", cluster="code", agent="x")
    ledger.remember("config.yaml is a settings file of 9 KB", cluster="home", agent="y")
    assert len(ledger.candidates()) == 1


def test_editing_a_claim_reruns_the_proposer(ledger):
    a = ledger.remember("Deploys run at 16:00 on Fridays", cluster="proc", agent="x").memory
    b = ledger.remember("Standup happens in room 4", cluster="proc", agent="y").memory
    assert ledger.candidates() == []
    ledger.update(b.id, text="Deploys run at 18:00 on Fridays")
    assert candidate_pairs(ledger) == [pair(a, b)]
    # and through a review edit
    c = ledger.remember("Lunch is at noon", cluster="proc", agent="z").memory
    ledger.review(c.id, "edit", text="Deploys run at 11:00 on Fridays")
    assert {a.id, c.id} in candidate_pairs(ledger)
    assert ledger.get(c.id).reviewed_at is not None
    assert ids(ledger.search("11:00")) == [c.id]  # re-indexed


def test_a_pair_is_proposed_once(ledger, clock):
    a = ledger.remember("Renews every 12 months", cluster="money", agent="x").memory
    b = ledger.remember("Renews every 24 months", cluster="money", agent="y").memory
    (c,) = ledger.candidates()
    assert ledger.judge(c.id, "unrelated", agent="j") is None
    assert ledger.candidates() == []
    clock.advance(days=30)
    # the proposer runs again on both sides: the judged pair never comes back
    ledger.update(b.id, text="Renews every 36 months")
    ledger.update(a.id, text="Renews every 6 months")
    assert ledger.candidates() == []
    assert n_candidate_rows(ledger) == 1
    # the same text again is corroboration of b, not a new memory: no new pair
    again = ledger.remember("Renews every 36 months", cluster="money", agent="z")
    assert again.duplicate and again.memory.id == b.id and "z" in again.memory.readers
    assert n_candidate_rows(ledger) == 1
    # a new value pairs with the others, never re-opens (a, b)
    c = ledger.remember("Renews every 48 months", cluster="money", agent="y").memory
    pairs = candidate_pairs(ledger)
    assert pair(a, b) not in pairs
    assert {a.id, c.id} in pairs and {b.id, c.id} in pairs


def test_a_resolved_pair_is_not_proposed_again(ledger, clock):
    a, b, cf = conflict_pair(ledger, "Renews every 12 months", "Renews every 24 months")
    ledger.resolve(cf, "dismiss")
    clock.advance(days=10)
    ledger.update(b.id, text="Renews every 48 months")
    assert ledger.candidates() == []
    a2, b2, cf2 = conflict_pair(ledger, "Office opens at 08:00", "Office opens at 09:00", cluster="home")
    ledger.resolve(cf2, "both")
    ledger.update(a2.id, text="Office opens at 07:30")
    assert ledger.candidates() == []


# ---------------------------------------------------------------------------- judging


def test_judge_validation(ledger):
    ledger.remember("Renews every 12 months", cluster="money", agent="x")
    ledger.remember("Renews every 24 months", cluster="money", agent="y")
    (c,) = ledger.candidates()
    for kwargs in (dict(verdict="maybe"), dict(verdict="Conflict"), dict(verdict="conflict", kind="vibes"),
                   dict(verdict="conflict", detector=1.5), dict(verdict="conflict", detector=-0.1),
                   dict(verdict="conflict", detector="high")):
        verdict = kwargs.pop("verdict")
        with pytest.raises(InvalidInput):
            ledger.judge(c.id, verdict, agent="j", **kwargs)
    assert [x.id for x in ledger.candidates()] == [c.id]  # still waiting after the errors
    with pytest.raises(UnknownCandidate):
        ledger.judge("cc_nope", "unrelated", agent="j")
    cf = ledger.judge(c.id, "conflict", agent="j")
    conflict = ledger.conflict(cf)
    assert (conflict.kind, conflict.detector, conflict.status, conflict.note) == ("direct contradiction", 0.8, "open", "")
    assert (conflict.a.id, conflict.b.id) == (c.a.id, c.b.id) and conflict.cluster_id == "money"
    with pytest.raises(UnknownCandidate) as e:
        ledger.judge(c.id, "unrelated", agent="j")
    assert "already judged" in e.value.message
    ev = ledger.events(1)[0]
    assert (ev.op, ev.agent, ev.detail) == ("conflicts.judge", "j", f"conflicts with {c.b.id}")


def test_a_candidate_with_a_dropped_side_cannot_be_judged(ledger):
    a = ledger.remember("Renews every 12 months", cluster="money", agent="x").memory
    b = ledger.remember("Renews every 24 months", cluster="money", agent="y").memory
    (c,) = ledger.candidates()
    ledger.forget([a.id], agent="x")
    assert ledger.candidates() == [] and ledger.stats()["candidates"] == 0
    with pytest.raises(UnknownCandidate) as e:
        ledger.judge(c.id, "conflict", agent="j")
    assert a.id in e.value.message
    assert ledger.conflicts() == []
    assert ledger.get(b.id).deleted_at is None


def test_judge_edges_of_detector_and_kinds(ledger):
    a, b, cf = conflict_pair(ledger, "Renews every 12 months", "Renews every 24 months", kind="Stale Terms", detector=1)
    c = ledger.conflict(cf)
    assert (c.kind, c.detector, c.note) == ("stale terms", 1.0, "both cannot hold")


def test_supersedes_opens_a_conflict_at_once(ledger):
    old = ledger.remember("Renews every 12 months", cluster="money", agent="x").memory
    res = ledger.remember("Renews every 24 months", cluster="money", agent="y", supersedes=old.id)
    assert res.conflict_id and res.proposed == ()
    assert ledger.candidates() == []
    c = ledger.conflict(res.conflict_id)
    assert (c.a.id, c.b.id, c.detector, c.kind, c.status) == (old.id, res.memory.id, 1.0, "direct contradiction", "open")
    assert c.note == "declared by y on write"
    assert ledger.get(old.id).conflict_with == res.memory.id
    with pytest.raises(Exception):
        ledger.remember("Renews every 36 months", cluster="money", agent="y", supersedes="m_nope")


# ---------------------------------------------------------------------------- resolving


@pytest.mark.parametrize("outcome", ["a", "b"])
def test_resolve_a_or_b_retires_the_loser(ledger, clock, outcome):
    a, b, cf = conflict_pair(ledger, "Renews every 12 months", "Renews every 24 months")
    clock.advance(days=1)
    c = ledger.resolve(cf, outcome, by="pat")
    win, lose = (a, b) if outcome == "a" else (b, a)
    assert (c.status, c.resolution, c.resolved_at) == ("resolved", outcome, clock())
    assert ledger.get(lose.id).deleted_at == clock()
    assert ledger.get(win.id).deleted_at is None and ledger.get(win.id).reviewed_at == clock()
    assert ids(ledger.search("renews")) == [win.id]
    ops = [(e.op, e.agent, e.memory_id) for e in ledger.events(3)]
    assert ("conflicts.resolve", "pat", a.id) in ops and ("memory.drop", "pat", lose.id) in ops
    assert ledger.events(1)[0].detail == f"{outcome} on {cf}"


def test_resolve_both_links(ledger):
    a, b, cf = conflict_pair(ledger, "Office opens at 08:00", "Office opens at 09:00")
    ledger.resolve(cf, "both")
    assert ledger.store.links() == [tuple(sorted((a.id, b.id)))]
    for m in (a, b):
        got = ledger.get(m.id)
        assert got.deleted_at is None and got.reviewed_at is not None and got.conflict_with is None
    assert ledger.conflict(cf).status == "resolved"


def test_resolve_merge_puts_b_on_a_with_all_evidence(ledger, clock):
    a = ledger.remember("Office opens at 08:00 sharp", cluster="home", agent="wa").memory
    clock.advance(ms=5)  # ids sort by time: a is the conflict's A side
    b = ledger.remember("Office opens at 09:00 sharp", cluster="home", agent="wb").memory
    ledger.recall("08:00", agent="ra", limit=1)
    clock.advance(days=3)
    ledger.recall("09:00", agent="rb", limit=1)
    clock.advance(days=1)
    ledger.recall("09:00", agent="rb", limit=1)
    last_b = clock()
    ha, hb = ledger.get(a.id).hits, ledger.get(b.id).hits
    assert (ha, hb) == (1, 2)
    (cand,) = ledger.candidates()
    cf = ledger.judge(cand.id, "conflict", agent="j")
    clock.advance(days=2)
    conflict = ledger.conflict(cf)
    assert (conflict.a.id, conflict.b.id) == (a.id, b.id)
    ledger.resolve(cf, "merge")
    m = ledger.get(a.id)
    assert m.text == "Office opens at 09:00 sharp"
    assert m.hits == 3 and m.source_count == 2
    assert set(m.readers) == {"wa", "wb", "ra", "rb"}
    assert m.last_read_at == last_b  # B's later read is kept
    assert m.reviewed_at == clock() and m.deleted_at is None
    assert ledger.get(b.id).deleted_at == clock()
    # A is re-indexed with B's text
    assert ids(ledger.search("09:00")) == [a.id]
    assert ledger.search("08:00").total == 0


def test_resolve_dismiss(ledger):
    a, b, cf = conflict_pair(ledger, "Office opens at 08:00", "Office opens at 09:00")
    c = ledger.resolve(cf, "dismiss")
    assert (c.status, c.resolution) == ("dismissed", "dismiss")
    for m in (a, b):
        got = ledger.get(m.id)
        assert got.deleted_at is None and got.reviewed_at is not None


def test_unknown_outcome_is_an_error_and_leaves_the_conflict_open(ledger):
    a, b, cf = conflict_pair(ledger, "Office opens at 08:00", "Office opens at 09:00")
    n_events = len(ledger.events(100))
    with pytest.raises(InvalidInput):
        ledger.resolve(cf, "keep-both")
    assert ledger.conflict(cf).status == "open"
    assert len(ledger.events(100)) == n_events
    assert ledger.get(a.id).deleted_at is None and ledger.get(b.id).deleted_at is None


def test_resolving_twice_errors(ledger):
    a, b, cf = conflict_pair(ledger, "Office opens at 08:00", "Office opens at 09:00")
    ledger.resolve(cf, "a")
    with pytest.raises(UnknownConflict):
        ledger.resolve(cf, "b")
    with pytest.raises(UnknownConflict):
        ledger.resolve("cf_nope", "a")
    assert ledger.get(a.id).deleted_at is None  # the second call changed nothing


def test_asof_before_a_resolution_shows_the_retired_memory(ledger, clock):
    a, b, cf = conflict_pair(ledger, "Renews every 12 months", "Renews every 24 months")
    clock.advance(days=2)
    before = clock() - DAY_MS
    ledger.resolve(cf, "b")
    assert ids(ledger.search("renews")) == [b.id]
    assert set(ids(ledger.search(f"renews asof:{iso(before)}"))) == {a.id, b.id}


def test_dropping_a_side_closes_its_open_conflict(ledger):
    a, b, cf = conflict_pair(ledger, "Renews every 12 months", "Renews every 24 months")
    ledger.forget([a.id], agent="x")
    assert ledger.conflict(cf).status == "resolved"
    assert ledger.conflicts() == []


# ---------------------------------------------------------------------------- review queue


def test_review_queue_pending_not_conflicted_newest_first(ledger, clock):
    first = ledger.remember("Prefers tea", cluster="prefs", agent="x").memory
    clock.advance(ms=1000)
    a, b, cf = conflict_pair(ledger, "Renews every 12 months", "Renews every 24 months")
    clock.advance(ms=1000)
    last = ledger.remember("Prefers window seats", cluster="travel", agent="x").memory
    ledger.ingest(source_from_text("A chunk about tea.", "notes.md"), cluster="prefs", agent="x")
    q = ledger.review_queue()
    assert [m.id for m in q["claims"]] == [last.id, first.id]
    assert [c.id for c in q["conflicts"]] == [cf]
    assert (q["claimCount"], q["conflictCount"]) == (2, 1)
    assert ledger.stats()["pending"] == 4  # stats counts the conflicted claims too


def test_review_actions(ledger, clock):
    keep = ledger.remember("Keep me", cluster="prefs", agent="x").memory
    pin = ledger.remember("Pin me", cluster="prefs", agent="x").memory
    drop = ledger.remember("Drop me", cluster="prefs", agent="x").memory
    edit = ledger.remember("Edit me", cluster="prefs", agent="x").memory
    clock.advance(days=1)
    assert ledger.review(keep.id, "keep", by="pat").reviewed_at == clock()
    p = ledger.review(pin.id, "pin", by="pat")
    assert p.pinned and p.reviewed_at == clock() and p.strength == 0.99
    assert ledger.review(drop.id, "drop", by="pat").deleted_at == clock()
    e = ledger.review(edit.id, "edit", text="Edited text", by="pat")
    assert e.text == "Edited text" and e.reviewed_at == clock()
    assert ledger.review_queue()["claims"] == []
    with pytest.raises(InvalidInput):
        ledger.review(keep.id, "approve")
    with pytest.raises(InvalidInput):
        ledger.review(keep.id, "edit", text="  ")
    ops = [(e.op, e.agent, e.memory_id) for e in ledger.events(6)]
    for op, mid in (("review.keep", keep.id), ("review.pin", pin.id), ("memory.drop", drop.id), ("memory.update", edit.id)):
        assert (op, "pat", mid) in ops


def test_chunks_are_refused_with_a_message_naming_their_source(ledger):
    res = ledger.ingest(source_from_text("A chunk about tea.", "notes.md"), cluster="prefs", agent="x")
    chunk = ledger.search("kind:chunk").hits[0]
    for action in ("keep", "pin", "drop", "edit"):
        with pytest.raises(NotAClaim) as e:
            ledger.review(chunk.id, action, text="new")
        assert res.source_id in e.value.message
    with pytest.raises(NotAClaim):
        ledger.update(chunk.id, text="rewritten")
    assert ledger.get(chunk.id).deleted_at is None and ledger.get(chunk.id).text == "A chunk about tea."


def test_chunks_are_never_paired(ledger):
    ledger.ingest(source_from_text("Renews every 12 months", "terms.md"), cluster="money", agent="x")
    ledger.remember("Renews every 24 months", cluster="money", agent="y")
    assert ledger.candidates() == []


def test_every_action_is_in_the_events_log_with_who(ledger):
    a = ledger.remember("Renews every 12 months", cluster="money", agent="writer1").memory
    ledger.remember("Renews every 24 months", cluster="money", agent="writer2")
    (c,) = ledger.candidates()
    cf = ledger.judge(c.id, "conflict", agent="judge1")
    ledger.resolve(cf, "a", by="human1")
    d = ledger.remember("Prefers tea", cluster="prefs", agent="writer1").memory
    ledger.review(d.id, "keep", by="human2")
    ledger.link(a.id, d.id, agent="linker")
    ledger.recall("tea", agent="reader1")
    log = [(e.op, e.agent) for e in reversed(ledger.events(100))]
    assert log == [
        ("memory.write", "writer1"), ("memory.write", "writer2"), ("conflicts.judge", "judge1"),
        ("memory.drop", "human1"), ("conflicts.resolve", "human1"), ("memory.write", "writer1"),
        ("review.keep", "human2"), ("memory.link", "linker"), ("memory.search", "reader1"),
    ]


# ---------------------------------------------------------------------------- through the real CLI


def test_whole_life_cycle_through_the_cli(cli):
    rc, out, err = cli("remember", "Invoice terms are net 30 days", "--cluster", "money", "--agent", "alice")
    assert rc == 0, err
    a_id = re.fullmatch(r"remembered (m_\w+)\n", out).group(1)
    rc, out, err = cli("remember", "Invoice terms are net 45 days", "--cluster", "money", "--agent", "bob")
    assert rc == 0, err
    lines = out.splitlines()
    b_id = re.fullmatch(r"remembered (m_\w+)", lines[0]).group(1)
    assert lines[1] == "proposed 1 conflict candidate with earlier claims — judge with `ledger conflicts` when convenient"

    rc, out, _ = cli("conflicts")
    cc = re.search(r"^(cc_\w+)  divergent numbers$", out, re.M).group(1)
    assert re.search(rf"^  A  {min(a_id, b_id)}  ", out, re.M) and re.search(rf"^  B  {max(a_id, b_id)}  ", out, re.M)
    assert "For each pair: can both be true at once?" in out
    # the store decided nothing by itself
    rc, out, _ = cli("stats", "--json")
    assert (json.loads(out)["conflicts"], json.loads(out)["candidates"]) == (0, 1)

    rc, out, err = cli("judge", cc, "--verdict", "conflict", "--kind", "value drift", "--detector", "0.9", "--agent", "carol")
    assert rc == 0, err
    cf = re.fullmatch(r"queued (cf_\w+) — value drift, for the human to resolve\n", out).group(1)
    rc, out, _ = cli("conflicts")
    assert out.strip() == "nothing to judge"

    rc, out, _ = cli("review", "--json")
    q = json.loads(out)
    assert [c["id"] for c in q["conflicts"]] == [cf] and q["claims"] == []

    rc, out, err = cli("resolve", cf, "b")
    assert rc == 0, err
    assert out == f"resolved {cf} — kept B, retired A\n"
    rc, out, _ = cli("search", "invoice", "--json")
    res = json.loads(out)
    kept = max(a_id, b_id)  # the conflict's B side (pairs are stored ordered)
    assert [h["id"] for h in res["hits"]] == [kept]
    # the retired one is still visible as of before the resolution
    rc, out, _ = cli("show", kept, "--json")
    reviewed_at = json.loads(out)["reviewedAt"]
    rc, out, _ = cli("search", f"invoice asof:{iso(reviewed_at - 1)}", "--json")
    assert {h["id"] for h in json.loads(out)["hits"]} == {a_id, b_id}
    rc, out, err = cli("resolve", cf, "a")
    assert rc == 1 and err.startswith("✕ ") and cf in err
    rc, out, _ = cli("stats", "--json")
    st = json.loads(out)
    assert (st["conflicts"], st["candidates"], st["claims"]) == (0, 0, 1)


def test_supersedes_a_dropped_memory_is_refused(ledger):
    old = ledger.remember("The API rate limit is 100 requests per minute", cluster="code", agent="a").memory
    ledger.forget([old.id], agent="a")
    with pytest.raises(InvalidInput, match="already dropped"):
        ledger.remember("The API rate limit is 200 requests per minute", cluster="code", agent="a", supersedes=old.id)
    assert ledger.conflicts() == []


def test_a_write_proposes_at_most_twenty_candidates(ledger):
    for i in range(30):
        ledger.remember(f"Build agent {i} keeps {i + 100} artifacts", cluster="code", agent="a")
    before = n_candidate_rows(ledger)
    res = ledger.remember("Build agent 99 keeps 7 artifacts", cluster="code", agent="a")
    assert 0 < len(res.proposed) <= 20
    assert n_candidate_rows(ledger) - before == len(res.proposed)


# ---------------------------------------------------------------------------- a person resolves a candidate (issue 15)


def _candidate(led, a_text="Office opens at 08:00", b_text="Office opens at 09:00", cluster="home"):
    a = led.remember(a_text, cluster=cluster, agent="x").memory
    b = led.remember(b_text, cluster=cluster, agent="y").memory
    (cand,) = led.candidates()
    return cand, a, b


@pytest.mark.parametrize("outcome", ["a", "b", "both", "merge"])
def test_a_person_judges_and_resolves_a_candidate_in_one_step(ledger, outcome):
    cand, a, b = _candidate(ledger)
    c = ledger.resolve(cand.id, outcome)
    assert c.id.startswith("cf_") and c.status == "resolved" and c.resolution == outcome
    assert {c.a.id, c.b.id} == {a.id, b.id} and c.detector == 1.0 and "human" in c.note
    assert ledger.candidates() == [] and ledger.conflicts() == []  # nothing left waiting
    live = {m for m in (cand.a.id, cand.b.id) if ledger.get(m).deleted_at is None}
    expected = {"a": {cand.a.id}, "b": {cand.b.id}, "both": {cand.a.id, cand.b.id}, "merge": {cand.a.id}}[outcome]
    assert live == expected


def test_a_person_dismisses_a_candidate(ledger):
    cand, a, b = _candidate(ledger)
    c = ledger.resolve(cand.id, "dismiss", by="ana")
    assert (c.status, c.resolution) == ("dismissed", "dismiss")
    assert ledger.candidates() == [] and ledger.get(a.id).deleted_at is None and ledger.get(b.id).deleted_at is None
    # settled for good: editing one side (which re-runs the proposer) does not bring it back
    ledger.update(b.id, text="Office opens at 09:30", by="ana")
    assert ledger.candidates() == []


def test_a_candidate_an_agent_already_judged_resolves_its_conflict(ledger):
    cand, a, b = _candidate(ledger)
    cf = ledger.judge(cand.id, "conflict", agent="judge")
    c = ledger.resolve(cand.id, "b")
    assert c.id == cf and c.status == "resolved"
    with pytest.raises(UnknownConflict, match="already resolved"):
        ledger.resolve(cand.id, "a")


def test_resolve_errors_name_the_command_that_works(ledger):
    cand, a, b = _candidate(ledger)
    from ledger.cli.hints import phrase

    # The core names no surface (the web UI resolves too); the CLI adds its commands.
    with pytest.raises(UnknownConflict) as e:
        ledger.resolve("cf_nope", "a")
    assert (e.value.field, e.value.value) == ("conflict", "cf_nope") and "ledger" not in e.value.message
    said = phrase(e.value)
    assert "ledger review" in said and "ledger resolve <id>" in said and "cc_" in said
    with pytest.raises(UnknownCandidate) as e:
        ledger.resolve("cc_nope", "a")
    assert "ledger conflicts" in phrase(e.value)
    with pytest.raises(InvalidInput) as e:
        ledger.resolve(cand.id, "keep")
    assert e.value.choices == ("a", "b", "both", "merge", "dismiss") and "a|b|both|merge|dismiss" in phrase(e.value)
    assert [x.id for x in ledger.candidates()] == [cand.id]  # errors change nothing
    ledger.resolve(cand.id, "dismiss")
    with pytest.raises(UnknownCandidate, match="already judged"):
        ledger.resolve(cand.id, "a")


def test_review_queue_lists_waiting_candidates(ledger):
    cand, a, b = _candidate(ledger)
    q = ledger.review_queue()
    assert [c.id for c in q["candidates"]] == [cand.id] and q["candidateCount"] == 1
    assert q["conflicts"] == [] and q["conflictCount"] == 0


def test_remember_reports_only_the_candidates_this_write_proposed(ledger):
    ledger.remember("Office opens at 08:00", cluster="home", agent="x")
    first = ledger.remember("Office opens at 09:00", cluster="home", agent="y")
    assert len(first.proposed) == 1
    later = ledger.remember("Prefers tea over coffee", cluster="prefs", agent="y")
    assert later.proposed == () and later.pending_candidates == 1  # the count stays for --json
