"""The ungapped X-drop of a BLASTN search (``nucl_context_stats.ungapped_xdrop``): 20 bits for
blastn and blastn-short; megablast sets none, so BLAST+ 2.12 (``BlastInitialWordParametersUpdate``,
``x_dropoff_init`` 0) takes the context's ungapped cutoff. On tests/data/blastn/tie the cutoff is
12 at -dbsize 100,000 and 13 at 2,463,666, and the one word hit's ungapped extension (hence
megablast's greedy start and the final gap placement) changes with it; the expected values are
those blastn 2.12 passed to ``BLAST_SaveInitialHit`` and ``Blast_HSPInit`` (read with gdb)."""
import math
import os

import numpy as np
import pytest

from clalign.blast.nucl_context_stats import ungapped_xdrop
from clalign.blast.nucl_search import initial_hits, prelim_chunk_ref, subject_array
from clalign.blast.nucl_setup import LN2, BlastnOptions, read_queries, setup_search, ungapped_blocks
from clalign.blast.nucl_words import DiagState
from clalign.data.nucleotide import open_nucleotide

TIE = os.path.join(os.path.dirname(__file__), "data", "blastn", "tie")


def _letters(path):
    with open(path) as fh:
        return "".join(line.strip() for line in fh if not line.startswith(">"))


def xdrop_extend(q: str, s: str, q_off: int, s_off: int, x: int, reward=1, penalty=-2):
    """Plain ``s_NuclUngappedExtendExact`` on letters: (q_start, s_start, length, score) of the
    ungapped extension of the hit at (q_off, s_off) with X-drop ``x`` (raw, positive)."""
    score = total = 0
    q_beg, i, j = q_off, q_off - 1, s_off - 1
    while i >= 0 and j >= 0:
        total += reward if q[i] == s[j] else penalty
        if total > 0:
            q_beg, score, total = i, score + total, 0
        elif total < -x:
            break
        i, j = i - 1, j - 1
    q_end, i, j, total, drop = q_off, q_off, s_off, 0, -x
    while i < len(q) and j < len(s):
        total += reward if q[i] == s[j] else penalty
        i, j = i + 1, j + 1
        if total > 0:
            q_end, score, total = i, score + total, 0
            drop = max(-score, -x)
        elif total < drop:
            break
    return q_beg, s_off - (q_off - q_beg), q_end - q_beg, score


def test_ungapped_xdrop_rule():
    lam = 1.28
    assert ungapped_xdrop(20.0, lam, 13) == math.ceil(20.0 * LN2 / lam) == 11
    assert ungapped_xdrop(0.0, lam, 13) == 13 and ungapped_xdrop(0.0, lam, 12) == 12


def _setup(task, dbsize):
    nt = open_nucleotide(os.path.join(TIE, "subject.fa"))
    queries = read_queries(os.path.join(TIE, "read.fa"))
    return setup_search(queries, BlastnOptions(task=task, dbsize=dbsize), nt.total_bases, len(nt)), nt


@pytest.mark.parametrize("dbsize", [100_000, 2_463_666])
def test_setup_ungapped_xdrop_per_task(dbsize):
    st, _ = _setup("megablast", dbsize)
    assert st.ctx_valid.all()
    assert np.array_equal(st.xdrop_ungapped, st.cutoff_ungapped)
    assert st.cutoff_ungapped.tolist() == ([12, 12] if dbsize == 100_000 else [13, 13])
    for task in ("blastn", "blastn-short"):
        st, _ = _setup(task, dbsize)
        kus = ungapped_blocks(st.batch, st.matrix)
        assert st.xdrop_ungapped.tolist() == [math.ceil(20.0 * LN2 / k.lam) for k in kus]


@pytest.mark.parametrize("dbsize,ungapped,gstart", [
    (100_000, (343, 226, 28, 28), (291, 175)),
    (2_463_666, (307, 190, 64, 37), (358, 241))])
def test_tie_word_hit_follows_the_cutoff(dbsize, ungapped, gstart):
    st, nt = _setup("megablast", dbsize)
    n = int(nt.lengths[0])
    s = subject_array(nt.packed(0))
    rows = initial_hits(st, DiagState(len(st.batch.seq)), s, n)
    assert rows.tolist() == [[343, 226, *ungapped, 0]]
    x = int(st.xdrop_ungapped[0])
    assert xdrop_extend(_letters(os.path.join(TIE, "read.fa")), _letters(os.path.join(TIE, "subject.fa")),
                        343, 226, x) == ungapped
    (h,) = prelim_chunk_ref(st, rows, s, n)
    assert (h.score, h.q_start, h.q_end, h.s_start, h.s_end) == (52, 279, 371, 163, 254)
    assert (h.q_gstart, h.s_gstart) == gstart
