"""BLAST+'s interval tree of kept HSPs (``blast_itree.c``), one query and subject, as it behaves.

The tree indexes HSPs by query range; an HSP straddling a node's midpoint goes to a second tree
indexed by subject range hanging off that node, and one straddling there goes into the node's
list. Two behaviours make it more than a set:

- containment (``contains``) finds an HSP already in the tree that scores at least as much and
  whose box holds both end points of the new one (complete search of the tree);
- adding (``add``) first looks for tree HSPs sharing the new one's start point, then its end point,
  along the single path that point selects: if such an HSP is better (score, then shorter query
  range, then shorter subject range, ties to the tree) the new HSP is not added; if the new one
  is better, the old one is unlinked (from a leaf slot, or from a list -- with BLAST+'s list
  bookkeeping, which only unlinks correctly when removals are not adjacent).

So which HSPs later containment tests can see depends on insertion order and tree shape; the
containment pruning of the preliminary and traceback stages needs this exact structure.
"""
from __future__ import annotations

_LEFT, _RIGHT = 0, 1


class IntervalTree:
    """Nodes are lists [leftend, rightend, leftptr, midptr, rightptr, hsp]; node 0 is the root."""

    def __init__(self, q_end: int, s_end: int):
        self.s_min, self.s_max = 0, s_end
        self.nodes = [[0, q_end, 0, 0, 0, None]]

    def reset(self):
        root = self.nodes[0]
        self.nodes = [[root[0], root[1], 0, 0, 0, None]]

    # -- node allocation -------------------------------------------------------------------
    def _root(self, lo, hi):
        self.nodes.append([lo, hi, 0, 0, 0, None])
        return len(self.nodes) - 1

    def _half(self, parent, which):
        p = self.nodes[parent]
        mid = (p[0] + p[1]) // 2
        lo, hi = (p[0], mid) if which == _LEFT else (mid + 1, p[1])
        return self._root(lo, hi)

    def _leaf(self, hsp):
        self.nodes.append([0, 0, 0, 0, 0, hsp])  # leftptr: the query strand offset (0)
        return len(self.nodes) - 1

    # -- containment ---------------------------------------------------------------------
    @staticmethod
    def _inside(h, t):
        return (h.score <= t.score
                and t.q_start <= h.q_start <= t.q_end and t.s_start <= h.s_start <= t.s_end
                and t.q_start <= h.q_end <= t.q_end and t.s_start <= h.s_end <= t.s_end)

    def _mid_contains(self, idx, h):
        nodes = self.nodes
        node = nodes[idx]
        lo, hi = h.s_start, h.s_end
        while node[5] is None:
            k = node[3]
            while k:
                if self._inside(h, nodes[k][5]):
                    return True
                k = nodes[k][3]
            middle = (node[0] + node[1]) // 2
            k = node[2] if hi < middle else node[4] if lo > middle else 0
            if k == 0:
                return False
            node = nodes[k]
        return self._inside(h, node[5])

    def contains(self, h) -> bool:
        nodes = self.nodes
        node = nodes[0]
        lo, hi = h.q_start, h.q_end
        while node[5] is None:
            if node[3] and self._mid_contains(node[3], h):
                return True
            middle = (node[0] + node[1]) // 2
            k = node[2] if hi < middle else node[4] if lo > middle else 0
            if k == 0:
                return False
            node = nodes[k]
        return self._inside(h, node[5])

    # -- common end points -----------------------------------------------------------------
    @staticmethod
    def _better(h, t, which):
        """The better of h and t when they share the end point ``which``, else None."""
        if which == _LEFT:
            match = h.q_start == t.q_start and h.s_start == t.s_start
        else:
            match = h.q_end == t.q_end and h.s_end == t.s_end
        if not match:
            return None
        if h.score != t.score:
            return h if h.score > t.score else t
        hq, tq = h.q_end - h.q_start, t.q_end - t.q_start
        if hq != tq:
            return t if hq > tq else h
        hs, ts = h.s_end - h.s_start, t.s_end - t.s_start
        if hs != ts:
            return t if hs > ts else h
        return t

    def _leaf_check(self, root, k, h, which, target, midpt):
        """Shared end of both searches at a leaf: True = a better HSP is there."""
        t = self.nodes[k][5]
        best = self._better(h, t, which)
        if best is t:
            return True
        if best is h:
            if target < midpt:
                self.nodes[root][2] = 0
            elif target > midpt:
                self.nodes[root][4] = 0
        return False

    def _mid_endpoint(self, idx, h, which):
        nodes = self.nodes
        target = h.s_start if which == _LEFT else h.s_end
        root = idx
        while True:
            list_node = root
            k = nodes[root][3]
            while k:
                t = nodes[k][5]
                nxt = nodes[k][3]
                best = self._better(h, t, which)
                if best is t:
                    return True
                if best is h:
                    nodes[list_node][3] = nxt
                list_node = k
                k = nxt
            midpt = (nodes[root][0] + nodes[root][1]) // 2
            k = nodes[root][2] if target < midpt else nodes[root][4] if target > midpt else 0
            if k == 0:
                return False
            if nodes[k][5] is not None:
                return self._leaf_check(root, k, h, which, target, midpt)
            root = k

    def _endpoint(self, h, which):
        nodes = self.nodes
        target = h.q_start if which == _LEFT else h.q_end
        root = 0
        while True:
            if nodes[root][3] and self._mid_endpoint(nodes[root][3], h, which):
                return True
            midpt = (nodes[root][0] + nodes[root][1]) // 2
            k = nodes[root][2] if target < midpt else nodes[root][4] if target > midpt else 0
            if k == 0:
                return False
            if nodes[k][5] is not None:
                return self._leaf_check(root, k, h, which, target, midpt)
            root = k

    # -- insertion -------------------------------------------------------------------------
    def add(self, h):
        if self._endpoint(h, _LEFT) or self._endpoint(h, _RIGHT):
            return
        nodes = self.nodes
        new = self._leaf(h)
        by_subject = False
        lo, hi = h.q_start, h.q_end
        root = 0
        while True:
            middle = (nodes[root][0] + nodes[root][1]) // 2
            if hi < middle or lo > middle:
                slot = 2 if hi < middle else 4
                which = _LEFT if slot == 2 else _RIGHT
                old = nodes[root][slot]
                if old == 0:
                    nodes[root][slot] = new
                    return
                if nodes[old][5] is None:
                    root = old
                    continue
            else:
                if by_subject:
                    nodes[new][3] = nodes[root][3]
                    nodes[root][3] = new
                    return
                by_subject = True
                if nodes[root][3] == 0:
                    nodes[root][3] = self._root(self.s_min, self.s_max)
                root = nodes[root][3]
                lo, hi = h.s_start, h.s_end
                continue
            # the slot holds a leaf: split it into an internal node and re-attach the old leaf
            mid = self._half(root, which)
            nodes[root][slot] = mid
            t = nodes[old][5]
            olo, ohi = (t.s_start, t.s_end) if by_subject else (t.q_start, t.q_end)
            root = mid
            middle = (nodes[mid][0] + nodes[mid][1]) // 2
            if ohi < middle:
                nodes[mid][2] = old
            elif olo > middle:
                nodes[mid][4] = old
            elif by_subject:
                nodes[mid][3] = old
            else:
                m2 = self._root(self.s_min, self.s_max)
                nodes[mid][3] = m2
                middle2 = (nodes[m2][0] + nodes[m2][1]) // 2
                if t.s_end < middle2:
                    nodes[m2][2] = old
                elif t.s_start > middle2:
                    nodes[m2][4] = old
                else:
                    nodes[m2][3] = old
