"""Per-context statistics of a BLASTN search (``setup_search``): gapped block, effective search
space, gapped and ungapped cutoffs, ungapped X-drop (:func:`ungapped_xdrop`) and the statistics
key.

:func:`context_stats_ref` is the rule, context by context (a memo per (ungapped block, length,
given search space)); :func:`context_stats` computes the same values once per distinct key,
the keys found by one ``np.unique`` over the contexts, and spreads them with numpy (a Python
loop over 100,000 contexts took ~0.3 s of the set-up of 50,000 reads).
"""
from __future__ import annotations

import math

import numpy as np

from ..stats.evalue import karlin_cutoff
from ..stats.nucl import nucl_gapped_params, nucl_search_space
from .groups import row_groups
from .nucl_setup import GAP_TRIGGER_BITS, LN2, TASK_UNGAPPED_XDROP_BITS


def ungapped_xdrop(bits: float, lam: float, cutoff: int) -> int:
    """The ungapped X-drop (raw) of a context, as ``BlastInitialWordParametersUpdate``: ``bits``
    converted with the ungapped Lambda (``x_dropoff_init``), or, when that is 0 (megablast sets
    no ungapped X-drop), the context's ungapped cutoff ``cutoff``."""
    x = int(math.ceil(bits * LN2 / lam))
    return x if x != 0 else int(cutoff)


def _space(opts, gp, length, given, dbl, db_num_seqs):
    """The context's effective search space (``given`` when not None, else -searchsp, else
    computed from the gapped block and the length)."""
    return np.float64(opts.searchsp or nucl_search_space(gp, length, dbl, db_num_seqs)[1]
                      if given is None else given)


def _values(opts, gp, ku, length, given, dbl, db_num_seqs):
    """(gapped block, search space, gapped cutoff, ungapped cutoff, ungapped X-drop)."""
    sp = _space(opts, gp, length, given, dbl, db_num_seqs)
    g = max(1, karlin_cutoff(opts.evalue, gp.karlin, sp))
    trigger = int((GAP_TRIGGER_BITS * LN2 + ku.logK) / ku.lam)
    cut = min(trigger, g)
    return gp, sp, g, cut, ungapped_xdrop(TASK_UNGAPPED_XDROP_BITS[opts.task], ku.lam, cut)


def _gapped(opts, ku):
    return nucl_gapped_params(opts.reward, opts.penalty, opts.gap_open, opts.gap_extend, ku)


def context_stats_ref(opts, kus, lengths, dbl, db_num_seqs, context_searchsp=None):
    """(valid, gapped blocks, search spaces, gapped cutoffs, ungapped cutoffs, ungapped
    X-drops, statistics keys) per context; ``kus``: the ungapped block per context (None:
    invalid). Contexts with equal (gapped block, search space) get the same key, numbered in
    order of first context."""
    nctx = len(kus)
    valid = np.zeros(nctx, dtype=bool)
    gps = [None] * nctx
    ssp = np.zeros(nctx, dtype=np.float64)
    cg = np.full(nctx, 2 ** 31 - 1, dtype=np.int64)
    cu = np.full(nctx, 2 ** 31 - 1, dtype=np.int64)
    xu = np.zeros(nctx, dtype=np.int64)
    memo, stat_key, stat_ids = {}, [-1] * nctx, {}
    lengths = list(lengths)
    for c in range(nctx):
        ku = kus[c]
        if ku is None:
            continue
        key = (id(ku), lengths[c], None if context_searchsp is None else context_searchsp[c])
        got = memo.get(key)
        if got is None:
            vals = _values(opts, _gapped(opts, ku), ku, key[1], key[2], dbl, db_num_seqs)
            got = memo[key] = (vals, stat_ids.setdefault(vals[:2], len(stat_ids)))
        stat_key[c] = got[1]
        valid[c] = True
        gps[c], ssp[c], cg[c], cu[c], xu[c] = got[0]
    return valid, gps, ssp, cg, cu, xu, stat_key


def context_stats(opts, blocks, group, lengths, dbl, db_num_seqs, context_searchsp=None):
    """:func:`context_stats_ref` from ``ungapped_groups``' (blocks, group per context): the
    values per distinct (group, length, given search space), in order of first context; the
    gapped block and gap trigger once per group (they depend on the ungapped block only);
    search space, cutoffs and ungapped X-drop once per (gapped block's values, length, given
    space): 1,000 instead of 7,700 for 50,000 reads."""
    group = np.asarray(group, dtype=np.int64)
    nctx = group.size
    valid = group >= 0
    live = np.flatnonzero(valid)
    gps = [None] * nctx
    ssp = np.zeros(nctx, dtype=np.float64)
    cg = np.full(nctx, 2 ** 31 - 1, dtype=np.int64)
    cu = np.full(nctx, 2 ** 31 - 1, dtype=np.int64)
    xu = np.zeros(nctx, dtype=np.int64)
    stat_key = np.full(nctx, -1, dtype=np.int64)
    if live.size:
        cols = [group[live], np.asarray(lengths, dtype=np.int64)[live]]
        if context_searchsp is not None:
            cols.append(np.asarray(context_searchsp, dtype=np.float64)[live].view(np.int64))
        first, inv = row_groups(cols)
        order = np.argsort(first, kind="stable")          # keys in order of first context
        rank = np.empty_like(order)
        rank[order] = np.arange(order.size)
        gapped, spaces, stat_ids, vals = {}, {}, {}, []
        for u in order.tolist():
            c = int(live[first[u]])
            g = int(group[c])
            ku = blocks[g]
            got = gapped.get(g)
            if got is None:
                gp = _gapped(opts, ku)
                got = gapped[g] = (gp, int((GAP_TRIGGER_BITS * LN2 + ku.logK) / ku.lam), ku.lam)
            gp, trigger, lam = got
            # search space and gapped cutoff: functions of the gapped block's values and the
            # length (or the given space); value-equal blocks of distinct groups share them
            given = None if context_searchsp is None else context_searchsp[c]
            skey = (gp, int(lengths[c]), given)
            sg = spaces.get(skey)
            if sg is None:
                sp = _space(opts, gp, skey[1], given, dbl, db_num_seqs)
                sg = spaces[skey] = (sp, max(1, karlin_cutoff(opts.evalue, gp.karlin, sp)))
            sp, gcut = sg
            cut = min(trigger, gcut)
            v = (gp, sp, gcut, cut, ungapped_xdrop(TASK_UNGAPPED_XDROP_BITS[opts.task], lam, cut))
            vals.append(v + (stat_ids.setdefault(v[:2], len(stat_ids)),))
        idx = rank[inv]                                   # per live context: its key's entry
        ugp = [v[0] for v in vals] + [None]              # the last: contexts without a block
        at = np.full(nctx, len(vals), dtype=np.int64)
        at[live] = idx
        gps = list(map(ugp.__getitem__, at.tolist()))   # no Python per context
        ssp[live] = np.array([v[1] for v in vals], dtype=np.float64)[idx]
        cg[live] = np.array([v[2] for v in vals], dtype=np.int64)[idx]
        cu[live] = np.array([v[3] for v in vals], dtype=np.int64)[idx]
        xu[live] = np.array([v[4] for v in vals], dtype=np.int64)[idx]
        stat_key[live] = np.array([v[5] for v in vals], dtype=np.int64)[idx]
    return valid, gps, ssp, cg, cu, xu, stat_key.tolist()
