"""sw.multi's dealer: ranges by estimated work, large pieces, every subject dealt once."""
import numpy as np

from clalign.data.database import Database
from clalign.sw import multi


def test_dealer_splits_estimated_work_not_residues():
    rng = np.random.default_rng(4)
    lengths = rng.integers(50, 400, 3000)
    lengths[rng.choice(3000, 60, replace=False)] = 20000        # a tail of long subjects
    db = Database.from_sequences([np.ones(int(n), dtype=np.uint8) for n in lengths])
    cost = np.where(lengths > 5000, lengths / 1.6, lengths / 3.3)
    d = multi._Dealer(db, [3.3, 3.3], cost)
    total = cost.sum()
    a, b = d.next(0, True)
    assert a == 0 and abs(cost[a:b].sum() / total - multi.FIRST_SHARE / 2) < 0.02
    seen, pieces = [(a, b)], []
    first = {1: True, 0: False}
    while True:
        k = len(seen) % 2
        got = d.next(k, first[k])
        first[k] = False
        if got is None:
            break
        seen.append(got)
        pieces.append(cost[got[0]:got[1]].sum() / total)
    assert [x[0] for x in seen[1:]] == [x[1] for x in seen[:-1]] and seen[-1][1] == len(db)
    assert len(seen) <= 12 and min(pieces[:-1]) >= 0.5 / multi.MIN_PIECES - 0.01


def _padded_loop(L, g):
    """The first pass's padded cells per suffix, one residue class at a time (the plain rule)."""
    padded = np.zeros(L.size + 1)
    Lg = L.astype(np.float64) * g
    for r in range(min(g, L.size)):
        idx = np.arange(r, L.size, g)
        padded[idx] = np.cumsum(Lg[idx][::-1])[::-1]
    return padded


def test_threshold_cost_model_equals_plain_rule():
    """choose_threshold's one-pass suffix sums pick what the per-class loop picks (same floats)."""
    from clalign.sw import threshold as T

    rng = np.random.default_rng(9)
    rates = {"inter": 3328.6, "lane": 0.098, "intra": 1625.6}
    for n in (0, 1, 5, 31, 32, 33, 4097, 60000):
        for g in (1, 7, 32, 4096):
            L = np.sort((rng.pareto(1.5, n) * 200 + 20).astype(np.int64))[::-1]
            head = np.concatenate([[0.0], np.cumsum(L, dtype=np.float64)])
            nxt = np.concatenate([L, [0]]).astype(np.float64)
            cost = head / rates["intra"] + np.maximum(nxt / rates["lane"], _padded_loop(L, g) / rates["inter"])
            k = int(np.argmin(cost)) if n else 0
            want = int(L[k]) if k < n else 0
            assert T.choose_threshold(L, rates, g) == want, (n, g)
