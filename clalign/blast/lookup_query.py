"""Query masking (SEG) and the choice of lookup table for one blastp query.

Where BLAST+ 2.12 applies the SEG mask (``BLAST_MainSetUp``): the lookup table never indexes a
word that touches a masked residue (its lookup segments are the mask's complement). Without
``-soft_masking`` (blastp's default) the masked residues are also replaced by X
(``BlastSetUp_MaskQuery``) before anything else reads the query -- the ungapped Karlin
parameters, both extensions and the traceback -- while the output's sequences, identities and
positives come from the unmasked query (``sequence_nomask``). With ``-soft_masking true`` only
the lookup table sees the mask.
"""
from __future__ import annotations

import numpy as np

from .lookup import CHARSIZE, build_lookup_fast
from .lookup_compressed import build_compressed_lookup, build_word_lookup, scan_db
from .seg import X_CODE, seg_mask


def mask_query(codes: np.ndarray, opts):
    """(codes as searched, mask or None) under ``opts.seg``/``opts.soft_masking``."""
    if opts.seg is None:
        return codes, None
    mask = seg_mask(codes, opts.seg)
    if not mask.any():
        return codes, None
    if not opts.soft_masking:
        codes = np.where(mask, np.uint8(X_CODE), np.asarray(codes, dtype=np.uint8)).astype(np.uint8)
    return codes, mask


def query_lookup(codes: np.ndarray, matrix: np.ndarray, opts, mask=None):
    """The lookup table BLAST+ builds for these options: standard (word size 2-5, threshold
    truncated to an integer) or compressed-alphabet (word size 6-7)."""
    if opts.compressed:
        return build_compressed_lookup(codes, opts.matrix, opts.threshold, opts.word_size, mask)
    if opts.word_size > 3:
        return build_word_lookup(codes, matrix, int(opts.threshold), opts.word_size, mask)
    return build_lookup_fast(codes, matrix, int(opts.threshold), opts.word_size, mask=mask)


_IDENTITY = np.full(256, -1, dtype=np.int16)
_IDENTITY[:28] = np.arange(28)


def scan_lookup(qs, subjects, first, last):
    """Initial HSPs of subjects first..last-1 through ``lookup_compressed.scan_db``: for the
    compressed table, and for the one-hit finder (``-window_size 0``) on either table."""
    lk, o = qs.lookup, qs.opts
    if o.compressed:
        table, size, first_low = lk.alphabet.table, lk.alphabet.size, True
    else:
        table, size, first_low = _IDENTITY, 1 << CHARSIZE, False
    return scan_db(qs.codes, qs.matrix, lk.starts, lk.qoffs, table, size, first_low,
                   subjects.residues, subjects.offsets, first, last, o.window, o.word_size,
                   qs.xdrop_ungapped, qs.cutoff_ungapped)
