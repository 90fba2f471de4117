"""BLAST+'s interval tree (clalign.blast.itree) against plain statements of its rules.

Without shared end points every added HSP stays in the tree, and ``contains`` must equal a scan
of all of them (score not above, both end points inside the box). With shared end points, the
better HSP of two sharing a start (or end) point is the one the tree keeps visible when they are
the only two."""
import numpy as np

from clalign.blast.hsp import HSP
from clalign.blast.itree import IntervalTree


def _inside(h, t):
    return (h.score <= t.score and t.q_start <= h.q_start <= t.q_end and t.s_start <= h.s_start <= t.s_end
            and t.q_start <= h.q_end <= t.q_end and t.s_start <= h.s_end <= t.s_end)


def _random_hsp(rng, qlen, slen, used):
    while True:
        q0 = int(rng.integers(0, qlen - 1))
        s0 = int(rng.integers(0, slen - 1))
        q1 = int(rng.integers(q0 + 1, min(qlen, q0 + 200) + 1))
        s1 = int(rng.integers(s0 + 1, min(slen, s0 + 200) + 1))
        if (q0, s0) not in used and (q1, s1) not in used:
            used.update({(q0, s0), (q1, s1)})
            return HSP(int(rng.integers(20, 200)), q0, q1, s0, s1)


def test_contains_equals_scan_without_shared_endpoints():
    rng = np.random.default_rng(11)
    for trial in range(30):
        qlen, slen = int(rng.integers(50, 600)), int(rng.integers(50, 3000))
        tree, kept, used = IntervalTree(qlen + 1, slen + 1), [], set()
        for _ in range(int(rng.integers(1, 60))):
            h = _random_hsp(rng, qlen, slen, used)
            assert tree.contains(h) == any(_inside(h, t) for t in kept)
            tree.add(h)
            kept.append(h)
        for _ in range(100):
            probe = _random_hsp(rng, qlen, slen, set())
            assert tree.contains(probe) == any(_inside(probe, t) for t in kept)


def test_shared_start_keeps_the_better():
    weak = HSP(30, 10, 80, 10, 80)        # larger box, lower score
    strong = HSP(50, 10, 40, 10, 40)      # same start point, higher score
    probe = HSP(20, 50, 70, 50, 70)       # inside the weak box only
    alone = IntervalTree(101, 101)
    alone.add(weak)
    assert alone.contains(probe)
    for order in ((weak, strong), (strong, weak)):   # unlinked, or never added
        tree = IntervalTree(101, 101)
        for h in order:
            tree.add(h)
        assert not tree.contains(probe)
        assert tree.contains(HSP(45, 15, 35, 15, 35))
