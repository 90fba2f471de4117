"""``s_ReduceGaps`` of BLAST+ 2.12 (``blast_gapalign.c``): the clean-up megablast applies to a
greedy traceback's edit script (run-length ``(ops, nums)``, codes of
:mod:`clalign.blast.traceback`) before the HSP is kept: substitution runs of 12 or more grow
over neighbouring exact matches (taken from the gaps around them), then short runs between an
insertion and a deletion are folded away when that loses no identities. Both passes compare raw
BLASTNA bytes (so equal ambiguity codes count as identities, unlike the greedy aligner).

Numba-compiled (``nogil``); ``.py_func`` is the plain-Python reference.
"""
from __future__ import annotations

from ..runtime.jit import njit

from .nucl_greedy_core import DEL, INS, SUB


@njit(cache=True, nogil=True)
def _eq(q, i, s, j):
    """Raw code equality as BLAST+ compares bytes; outside either sequence: never equal."""
    if i < 0 or j < 0 or i >= q.shape[0] or j >= s.shape[0]:
        return False
    return q[i] == s[j]


@njit(cache=True, nogil=True)
def _update_script(ops, nums, size, pos, bf, af):
    """``s_UpdateEditScript``: grow the substitution run ``pos`` by ``bf`` letters on the left
    and ``af`` on the right, taking them from the neighbouring operations."""
    if bf > 0:
        op = pos
        qd = bf
        sd = bf
        while True:
            op -= 1
            if op < 0:
                return
            t = ops[op]
            if t == SUB:
                qd -= nums[op]
                sd -= nums[op]
            elif t == INS:
                qd -= nums[op]
            elif t == DEL:
                sd -= nums[op]
            if not (qd > 0 or sd > 0):
                break
        nums[op] = -max(qd, sd)
        ops[op] = SUB
        op += 1
        while op < pos - 1:
            nums[op] = 0
            op += 1
        nums[pos] += bf
        qd -= sd
        ops[pos - 1] = DEL if qd > 0 else INS
        nums[pos - 1] = qd if qd > 0 else -qd
    if af > 0:
        op = pos
        qd = af
        sd = af
        while True:
            op += 1
            if op >= size:
                return
            t = ops[op]
            if t == SUB:
                qd -= nums[op]
                sd -= nums[op]
            elif t == INS:
                qd -= nums[op]
            elif t == DEL:
                sd -= nums[op]
            if not (qd > 0 or sd > 0):
                break
        nums[op] = -max(qd, sd)
        ops[op] = SUB
        op -= 1
        while op > pos + 1:
            nums[op] = 0
            op -= 1
        nums[pos] += af
        qd -= sd
        ops[pos + 1] = DEL if qd > 0 else INS
        nums[pos + 1] = qd if qd > 0 else -qd


@njit(cache=True, nogil=True)
def _rebuild_script(ops, nums, size):
    """``s_RebuildEditScript``: drop empty runs, merge equal neighbours, turn an insertion next
    to a deletion into substitutions plus the difference. Returns the new size."""
    j = -1
    for i in range(size):
        if nums[i] == 0:
            continue
        if j >= 0 and ops[i] == ops[j]:
            nums[j] += nums[i]
        elif j == -1 or ops[i] == SUB or ops[j] == SUB:
            j += 1
            ops[j] = ops[i]
            nums[j] = nums[i]
        else:
            d = nums[j] - nums[i]
            if d > 0:
                nums[j - 1] += nums[i]
                nums[j] = d
            elif d < 0:
                nums[j - 1] += nums[j]
                nums[j] = -d
                ops[j] = ops[i]
            else:
                nums[j - 1] += nums[j]
                j -= 1
    return j + 1


@njit(cache=True, nogil=True)
def reduce_gaps(ops, nums, size, q, s, qa, sa, qf, sf):
    """``s_ReduceGaps`` (in place) on the script of an alignment starting at (qa, sa) and ending
    before (qf, sf): runs of 12 or more substitutions are grown over neighbouring exact matches
    (byte equality, so equal ambiguity codes count), then short substitution runs between an
    insertion and a deletion are folded away when that loses no identities. Returns the size."""
    q1 = qa
    s1 = sa
    for i in range(size):
        if nums[i] == 0:
            continue
        if ops[i] == SUB:
            if nums[i] >= 12:
                nm1 = 1
                if i > 0:
                    while q1 - nm1 >= qa and _eq(q, q1 - nm1, s, s1 - nm1):
                        nm1 += 1
                q1 += nums[i]
                s1 += nums[i]
                nm2 = 0
                if i < size - 1:
                    while q1 + 1 < qf and s1 + 1 < sf:
                        same = _eq(q, q1, s, s1)
                        q1 += 1
                        s1 += 1
                        if not same:
                            break
                        nm2 += 1
                if nm1 > 1 or nm2 > 0:
                    _update_script(ops, nums, size, i, nm1 - 1, nm2)
                q1 -= 1
                s1 -= 1
            else:
                q1 += nums[i]
                s1 += nums[i]
        elif ops[i] == INS:
            q1 += nums[i]
        else:
            s1 += nums[i]
    size = _rebuild_script(ops, nums, size)
    qp = qa
    sp = sa
    for i in range(size):
        if ops[i] == SUB:
            qp += nums[i]
            sp += nums[i]
            continue
        if i > 1 and ops[i] != ops[i - 2] and nums[i - 2] > 0:
            d = nums[i] + nums[i - 1] + nums[i - 2]
            if d == 3:
                nums[i - 2] = 0
                nums[i - 1] = 2
                nums[i] = 0
                if ops[i] == INS:
                    qp += 1
                else:
                    sp += 1
            elif d < 12:
                nm1 = 0
                nm2 = 0
                d = min(nums[i], nums[i - 2])
                qp -= nums[i - 1]
                sp -= nums[i - 1]
                qq = qp
                ss = sp
                if ops[i] == INS:
                    sp -= d
                else:
                    qp -= d
                for _ in range(nums[i - 1]):
                    if _eq(q, qq, s, ss):
                        nm1 += 1
                    if _eq(q, qp, s, sp):
                        nm2 += 1
                    qq += 1
                    ss += 1
                    qp += 1
                    sp += 1
                for _ in range(d):
                    if _eq(q, qp, s, sp):
                        nm2 += 1
                    qp += 1
                    sp += 1
                if nm2 >= nm1 - d:
                    nums[i - 2] -= d
                    nums[i - 1] += d
                    nums[i] -= d
                else:
                    qp = qq
                    sp = ss
        if ops[i] == INS:
            qp += nums[i]
        else:
            sp += nums[i]
    return _rebuild_script(ops, nums, size)
