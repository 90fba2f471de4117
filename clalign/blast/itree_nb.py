"""BLAST+'s interval tree of kept HSPs in compiled form: ``itree.IntervalTree`` on arrays.

Same nodes, same walk, same unlinking as :mod:`clalign.blast.itree` (the spec, tested equal
to it), so the compiled preliminary and traceback stages make the same containment decisions.

- ``nodes``: int64 (capacity, 6) rows [leftend, rightend, leftptr, midptr, rightptr, hsp],
  ``hsp`` = -1 for an internal node, else a row of the HSP table; node 0 is the root;
- ``st``: int64 [node count, subject range start, subject range end];
- ``H``: int64 (n, >= 5) HSP table rows [score, q_start, q_end, s_start, s_end, ...].

Nucleotide searches (``nucl_hsp.NuclTree``) use the same tree with ``sep >= 0``: query
positions in ``H`` are shifted by their context's strand offset, column 5 holds the context,
HSPs of different contexts never contain or replace each other, and with ``sep > 0``
containment also needs the start or end diagonals closer than ``sep`` (``MB_HSP_CLOSE``).
``sep = -1``: BLASTP's rules (column 5 unused).

``reserve`` grows ``nodes`` (one add creates at most two nodes per level of the query and
subject trees, < ``ADD_NODES``); call it before every ``add``.
"""
from __future__ import annotations

from ..runtime.jit import njit
import numpy as np

ADD_NODES = 160
_LEFT, _RIGHT = 0, 1


@njit(cache=True, nogil=True)
def new_tree(q_end, s_end, cap):
    nodes = np.zeros((max(cap, ADD_NODES + 1), 6), dtype=np.int64)
    st = np.zeros(3, dtype=np.int64)
    init(nodes, st, q_end, s_end)
    return nodes, st


@njit(cache=True, nogil=True)
def init(nodes, st, q_end, s_end):
    """An empty tree over query [0, q_end] and subject [0, s_end] (also ``reset``)."""
    st[0] = 1
    st[1] = 0
    st[2] = s_end
    nodes[0, 0] = 0
    nodes[0, 1] = q_end
    nodes[0, 2] = 0
    nodes[0, 3] = 0
    nodes[0, 4] = 0
    nodes[0, 5] = -1


@njit(cache=True, nogil=True)
def reserve(nodes, st):
    if st[0] + ADD_NODES <= nodes.shape[0]:
        return nodes
    bigger = np.zeros((2 * nodes.shape[0] + ADD_NODES, 6), dtype=np.int64)
    for i in range(nodes.shape[0]):     # a loop, not a slice copy: numba compiles a costly
        for c in range(6):              # error path for every array-to-slice assignment
            bigger[i, c] = nodes[i, c]
    return bigger


@njit(cache=True, nogil=True, inline="always")
def _node(nodes, st, lo, hi, hsp):
    k = st[0]
    st[0] = k + 1
    nodes[k, 0] = lo
    nodes[k, 1] = hi
    nodes[k, 2] = 0
    nodes[k, 3] = 0
    nodes[k, 4] = 0
    nodes[k, 5] = hsp
    return k


@njit(cache=True, nogil=True, inline="always")
def _inside(sc, qs, qe, ss, se, H, t, ctx, sep):
    if sep >= 0 and H[t, 5] != ctx:
        return False
    if not (sc <= H[t, 0] and H[t, 1] <= qs <= H[t, 2] and H[t, 3] <= ss <= H[t, 4]
            and H[t, 1] <= qe <= H[t, 2] and H[t, 3] <= se <= H[t, 4]):
        return False
    if sep <= 0:
        return True
    return (abs((H[t, 1] - H[t, 3]) - (qs - ss)) < sep
            or abs((H[t, 2] - H[t, 4]) - (qe - se)) < sep)


@njit(cache=True, nogil=True)
def _mid_contains(nodes, H, idx, sc, qs, qe, ss, se, ctx, sep):
    node = idx
    while nodes[node, 5] < 0:
        k = nodes[node, 3]
        while k != 0:
            if _inside(sc, qs, qe, ss, se, H, nodes[k, 5], ctx, sep):
                return True
            k = nodes[k, 3]
        middle = (nodes[node, 0] + nodes[node, 1]) // 2
        if se < middle:
            k = nodes[node, 2]
        elif ss > middle:
            k = nodes[node, 4]
        else:
            k = 0
        if k == 0:
            return False
        node = k
    return _inside(sc, qs, qe, ss, se, H, nodes[node, 5], ctx, sep)


@njit(cache=True, nogil=True)
def contains(nodes, H, sc, qs, qe, ss, se):
    """Whether a kept HSP scoring at least ``sc`` holds both end points of the box."""
    return contains_in(nodes, H, sc, qs, qe, ss, se, -1, -1)


@njit(cache=True, nogil=True)
def contains_in(nodes, H, sc, qs, qe, ss, se, ctx, sep):
    """:func:`contains` for an HSP of context ``ctx`` under the rules ``sep`` selects."""
    node = 0
    while nodes[node, 5] < 0:
        if nodes[node, 3] != 0 and _mid_contains(nodes, H, nodes[node, 3], sc, qs, qe, ss, se, ctx, sep):
            return True
        middle = (nodes[node, 0] + nodes[node, 1]) // 2
        if qe < middle:
            k = nodes[node, 2]
        elif qs > middle:
            k = nodes[node, 4]
        else:
            k = 0
        if k == 0:
            return False
        node = k
    return _inside(sc, qs, qe, ss, se, H, nodes[node, 5], ctx, sep)


@njit(cache=True, nogil=True, inline="always")
def _better(H, h, t, which, sep):
    """0: no shared end point; 1: h is better; 2: t is (ties go to t)."""
    if sep >= 0 and H[h, 5] != H[t, 5]:
        return 0
    if which == _LEFT:
        match = H[h, 1] == H[t, 1] and H[h, 3] == H[t, 3]
    else:
        match = H[h, 2] == H[t, 2] and H[h, 4] == H[t, 4]
    if not match:
        return 0
    if H[h, 0] != H[t, 0]:
        return 1 if H[h, 0] > H[t, 0] else 2
    hq, tq = H[h, 2] - H[h, 1], H[t, 2] - H[t, 1]
    if hq != tq:
        return 2 if hq > tq else 1
    hs, ts = H[h, 4] - H[h, 3], H[t, 4] - H[t, 3]
    if hs != ts:
        return 2 if hs > ts else 1
    return 2


@njit(cache=True, nogil=True, inline="always")
def _leaf_check(nodes, H, root, k, h, which, target, midpt, sep):
    best = _better(H, h, nodes[k, 5], which, sep)
    if best == 2:
        return True
    if best == 1:
        if target < midpt:
            nodes[root, 2] = 0
        elif target > midpt:
            nodes[root, 4] = 0
    return False


@njit(cache=True, nogil=True)
def _mid_endpoint(nodes, H, idx, h, which, sep):
    target = H[h, 3] if which == _LEFT else H[h, 4]
    root = idx
    while True:
        list_node = root
        k = nodes[root, 3]
        while k != 0:
            nxt = nodes[k, 3]
            best = _better(H, h, nodes[k, 5], which, sep)
            if best == 2:
                return True
            if best == 1:
                nodes[list_node, 3] = nxt
            list_node = k
            k = nxt
        midpt = (nodes[root, 0] + nodes[root, 1]) // 2
        if target < midpt:
            k = nodes[root, 2]
        elif target > midpt:
            k = nodes[root, 4]
        else:
            k = 0
        if k == 0:
            return False
        if nodes[k, 5] >= 0:
            return _leaf_check(nodes, H, root, k, h, which, target, midpt, sep)
        root = k


@njit(cache=True, nogil=True)
def _endpoint(nodes, H, h, which, sep):
    target = H[h, 1] if which == _LEFT else H[h, 2]
    root = 0
    while True:
        if nodes[root, 3] != 0 and _mid_endpoint(nodes, H, nodes[root, 3], h, which, sep):
            return True
        midpt = (nodes[root, 0] + nodes[root, 1]) // 2
        if target < midpt:
            k = nodes[root, 2]
        elif target > midpt:
            k = nodes[root, 4]
        else:
            k = 0
        if k == 0:
            return False
        if nodes[k, 5] >= 0:
            return _leaf_check(nodes, H, root, k, h, which, target, midpt, sep)
        root = k


@njit(cache=True, nogil=True)
def add(nodes, st, H, h):
    """Add HSP row ``h`` of ``H`` (unless a kept HSP sharing an end point is better)."""
    add_in(nodes, st, H, h, -1)


@njit(cache=True, nogil=True)
def add_in(nodes, st, H, h, sep):
    """:func:`add` under the rules ``sep`` selects."""
    for which in range(2):      # _LEFT, _RIGHT: a loop variable, so one compiled _endpoint
        if _endpoint(nodes, H, h, which, sep):
            return
    new = _node(nodes, st, 0, 0, h)
    by_subject = False
    lo, hi = H[h, 1], H[h, 2]
    root = 0
    while True:
        middle = (nodes[root, 0] + nodes[root, 1]) // 2
        if hi < middle or lo > middle:
            slot = 2 if hi < middle else 4
            old = nodes[root, slot]
            if old == 0:
                nodes[root, slot] = new
                return
            if nodes[old, 5] < 0:
                root = old
                continue
        else:
            if by_subject:
                nodes[new, 3] = nodes[root, 3]
                nodes[root, 3] = new
                return
            by_subject = True
            if nodes[root, 3] == 0:
                nodes[root, 3] = _node(nodes, st, st[1], st[2], -1)
            root = nodes[root, 3]
            lo, hi = H[h, 3], H[h, 4]
            continue
        # the slot holds a leaf: split it into an internal node and re-attach the old leaf
        mid_val = (nodes[root, 0] + nodes[root, 1]) // 2
        if slot == 2:
            mid = _node(nodes, st, nodes[root, 0], mid_val, -1)
        else:
            mid = _node(nodes, st, mid_val + 1, nodes[root, 1], -1)
        nodes[root, slot] = mid
        t = nodes[old, 5]
        if by_subject:
            olo, ohi = H[t, 3], H[t, 4]
        else:
            olo, ohi = H[t, 1], H[t, 2]
        root = mid
        middle = (nodes[mid, 0] + nodes[mid, 1]) // 2
        if ohi < middle:
            nodes[mid, 2] = old
        elif olo > middle:
            nodes[mid, 4] = old
        elif by_subject:
            nodes[mid, 3] = old
        else:
            m2 = _node(nodes, st, st[1], st[2], -1)
            nodes[mid, 3] = m2
            middle2 = (nodes[m2, 0] + nodes[m2, 1]) // 2
            if H[t, 4] < middle2:
                nodes[m2, 2] = old
            elif H[t, 3] > middle2:
                nodes[m2, 4] = old
            else:
                nodes[m2, 3] = old
