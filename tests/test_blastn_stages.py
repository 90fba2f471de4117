"""BLASTN's compiled preliminary stage (nucl_stages_nb, interval tree of itree_nb under BLASTN's
rules) against its plain form (nucl_search.prelim_chunk_ref, NuclTree), subject by subject, and the
compiled traceback stage against traceback_subject_ref, pair by pair, on the golden search data:
the same HSPs (extents, scores, edit scripts, E-values) in the same order."""
import copy
import os

import numpy as np
import pytest

from clalign.blast.nucl_search import (initial_hits, prelim_chunk_ref, prelim_subject, subject_array,
                                       traceback_subject, traceback_subject_ref)
from clalign.blast.nucl_setup import BlastnOptions, read_queries, setup_search
from clalign.blast.nucl_stages_nb import prelim_hsps
from clalign.blast.nucl_words import DiagState
from clalign.data.nucleotide import NCBI4NA_TO_BLASTNA, open_nucleotide

HERE = os.path.join(os.path.dirname(__file__), "data", "blastn", "search")


def _fields(h):
    return (h.score, h.q_start, h.q_end, h.s_start, h.s_end, h.context, h.q_gstart, h.s_gstart)


@pytest.mark.parametrize("task,strand", [("megablast", "both"), ("blastn", "both"), ("blastn", "minus")])
def test_compiled_prelim_equals_reference(task, strand):
    queries = read_queries(os.path.join(HERE, "reads.fa"))
    nt = open_nucleotide(os.path.join(HERE, "genome.fa"))
    st = setup_search(queries, BlastnOptions(task=task, strand=strand), nt.total_bases, len(nt))
    diag = DiagState(len(st.batch.seq))
    seen = 0
    for oid in range(len(nt)):
        s = subject_array(nt.packed(oid))
        n = int(nt.lengths[oid])
        rows = initial_hits(st, diag, s, n)
        want = [_fields(h) for h in prelim_chunk_ref(st, rows, s, n)]
        got = [tuple(r) for r in prelim_hsps(st, rows, s, n).tolist()]
        assert got == want
        seen += len(want)
    assert seen > 20


def _subjects_by_query(st, nt):
    """(oid, length, traceback codes, {query: its preliminary HSPs}) of every subject."""
    diag = DiagState(len(st.batch.seq))
    for oid in range(len(nt)):
        n = int(nt.lengths[oid])
        by_query = {}
        for h in prelim_subject(st, diag, nt.packed(oid), n):
            by_query.setdefault(int(st.batch.query_of[h.context]), []).append(h)
        yield oid, n, np.append(NCBI4NA_TO_BLASTNA[nt.ncbi4na(oid)], np.uint8(15)), by_query


@pytest.mark.parametrize("task,perc", [("megablast", 0.0), ("megablast", 97.0), ("blastn", 0.0),
                                       ("blastn", 95.0)])
def test_compiled_traceback_equals_reference(task, perc):
    queries = read_queries(os.path.join(HERE, "reads.fa"))
    nt = open_nucleotide(os.path.join(HERE, "genome.fa"))
    st = setup_search(queries, BlastnOptions(task=task, perc_identity=perc), nt.total_bases, len(nt))
    seen = 0
    for oid, n, s_codes, by_query in _subjects_by_query(st, nt):
        for hs in by_query.values():
            want = traceback_subject_ref(st, copy.deepcopy(hs), s_codes, n)
            got = traceback_subject(st, hs, s_codes, n)
            assert [_fields(h) + (h.evalue, h.ops) for h in got] == \
                [_fields(h) + (h.evalue, [list(x) for x in h.ops]) for h in want]
            seen += len(want)
    assert seen > 20


@pytest.mark.parametrize("reward,penalty", [(1, -2), (2, -3), (1, -3)])
def test_grouped_ungapped_blocks_equal_per_context(reward, penalty):
    """setup_search's Karlin blocks computed once per score distribution = one per context."""
    from clalign.blast.nucl_lookup import QueryBatch
    from clalign.blast.nucl_setup import ungapped_block, ungapped_blocks
    from clalign.data.nucleotide import blastna_matrix

    rng = np.random.default_rng(reward - 10 * penalty)
    seqs = [q.codes for q in read_queries(os.path.join(HERE, "reads.fa"))]
    for k in range(60):   # A/C/G/T reads, some with ambiguity codes, one all N
        s = rng.integers(0, 4, int(rng.integers(5, 400))).astype(np.uint8)
        if k % 3 == 0:
            amb = rng.random(len(s)) < 0.05
            s[amb] = rng.integers(4, 15, int(amb.sum()))
        seqs.append(s)
    seqs.append(np.full(30, 14, dtype=np.uint8))
    b = QueryBatch.build(seqs, [[] for _ in seqs], strand="both")
    m = blastna_matrix(reward, penalty).astype(np.int32)
    got = ungapped_blocks(b, m)
    want = [ungapped_block(b.seq[int(a):int(a) + int(n)], m) for a, n in zip(b.offsets, b.lengths)]
    assert got == want
    assert want[-1] is None and len({x for x in want if x is not None}) < len(want) - 1


def test_records_equal_alignment_make():
    """blastn's compiled record columns and counts = Alignment.make on the spec's letters."""
    from dataclasses import replace

    from clalign.blast.blastn import COMPLEMENT, LETTERS, _aligned, alignment_record
    from clalign.output import Alignment

    queries = read_queries(os.path.join(HERE, "reads.fa"))
    nt = open_nucleotide(os.path.join(HERE, "genome.fa"))
    st = setup_search(queries, BlastnOptions(task="blastn"), nt.total_bases, len(nt))
    b, diag, seen = st.batch, DiagState(len(st.batch.seq)), 0
    for oid in range(len(nt)):
        n = int(nt.lengths[oid])
        s_codes = np.append(NCBI4NA_TO_BLASTNA[nt.ncbi4na(oid)], np.uint8(15))
        for h in traceback_subject(st, prelim_subject(st, diag, nt.packed(oid), n), s_codes, n):
            a0, minus = int(b.offsets[h.context]), bool(b.minus[h.context])
            q_ctx = b.seq[a0:a0 + int(b.lengths[h.context])]
            query = queries[int(b.query_of[h.context])]
            got = alignment_record(query, query.qid, "s", oid, "t", h, q_ctx, minus, s_codes, n)
            qa, sa = _aligned(q_ctx, s_codes, h)
            if minus:
                qa, sa = COMPLEMENT[qa[::-1]], COMPLEMENT[sa[::-1]]
            want = Alignment.make(query.qid, "s", len(query.codes), n, h.score, h.bit_score, h.evalue,
                                  got.qstart, h.s_start + 1, LETTERS[qa].tobytes().decode(),
                                  LETTERS[sa].tobytes().decode(), subject_index=oid, subject_title="t",
                                  query_title=query.title, sstrand=got.sstrand)
            if minus:
                want = replace(want, sstart=h.s_end, send=h.s_start + 1)
            assert got == want
            seen += minus
    assert seen > 5


def test_subject_blastna_equals_ncbi4na_codes(tmp_path):
    """The traceback's one-pass subject codes (nucl_stages_nb.subject_blastna) equal the 2-bit
    bases with the ambiguity runs restored (NucleotideDatabase.ncbi4na), lengths 0-9 mod 4 and
    runs at both ends and across byte boundaries."""
    from clalign.blast.nucl_stages_nb import subject_blastna

    rng = np.random.default_rng(3)
    letters = np.array(list("ACGTACGTACGTNRYKMSWBDHV"))
    with open(tmp_path / "s.fa", "w") as fh:
        for i, n in enumerate([1, 2, 3, 4, 5, 7, 8, 9, 33, 1000]):
            s = "".join(rng.choice(letters, n))
            fh.write(f">s{i}\n{'N' + s[1:] if i % 3 == 0 else s}\n")
    nt = open_nucleotide(str(tmp_path / "s.fa"))
    assert len(nt.runs)
    for oid in range(len(nt)):
        runs = np.ascontiguousarray(nt.ambiguities(oid), dtype=np.int64).reshape(-1, 3)
        got = subject_blastna(subject_array(nt.packed(oid)), int(nt.lengths[oid]), runs,
                              NCBI4NA_TO_BLASTNA)
        assert np.array_equal(got, np.append(NCBI4NA_TO_BLASTNA[nt.ncbi4na(oid)], np.uint8(15)))


@pytest.mark.parametrize("task,perc", [("megablast", 0.0), ("blastn", 95.0)])
def test_unit_records_equal_pair_by_pair(task, perc):
    """The traceback of a whole work unit in one compiled call (blastn.traceback_unit_records)
    gives, pair by pair, the records of traceback_subject + the per-HSP records (best E-value,
    best score and every field of every record, in order)."""
    from clalign.blast.blastn import _records, traceback_unit_records

    queries = read_queries(os.path.join(HERE, "reads.fa"))
    nt = open_nucleotide(os.path.join(HERE, "genome.fa"))
    st = setup_search(queries, BlastnOptions(task=task, perc_identity=perc), nt.total_bases, len(nt))
    seen = 0
    for oid, n, s_codes, by_query in _subjects_by_query(st, nt):
        pairs = sorted(by_query.items())
        want = []
        for qi, hs in pairs:
            out = traceback_subject(st, copy.deepcopy(hs), s_codes, n)
            if out:
                want.append((qi, min(h.evalue for h in out), max(h.score for h in out),
                             _records(st, queries[qi], nt, oid, ("s", "t"), out, s_codes)))
        got, _ = traceback_unit_records(st, queries, oid, ("s", "t"), pairs, s_codes, n)
        assert got == want
        seen += sum(len(r) for *_, r in want)
    assert seen > 20


@pytest.mark.parametrize("task,reward,penalty,dbsize", [("megablast", 0, 0, 0), ("blastn", 2, -3, 0),
                                                        ("blastn", 0, 0, 10 ** 12)])
def test_evalues_bits_equal_scalar(task, reward, penalty, dbsize):
    """Setup.evalues_bits (arrays) gives Setup.evalue_bits' floats bit for bit, over every
    context and a range of scores (odd scores of a round-down table included)."""
    queries = read_queries(os.path.join(HERE, "reads.fa"))
    nt = open_nucleotide(os.path.join(HERE, "genome.fa"))
    st = setup_search(queries, BlastnOptions(task=task, reward=reward, penalty=penalty, dbsize=dbsize),
                      nt.total_bases, len(nt))
    ctx = np.flatnonzero(st.ctx_valid)
    rng = np.random.default_rng(5)
    scores = np.concatenate([np.arange(1, 400), rng.integers(1, 20000, 600)])
    c = np.repeat(ctx, 3)[rng.permutation(3 * len(ctx))][:len(scores)]
    c = np.resize(c, len(scores))
    want = [st.evalue_bits(int(s), int(k)) for s, k in zip(scores, c)]
    # in pieces (the per-(key, score) table filled bit by bit, then read), then all at once,
    # then with a score beyond the table (its direct way)
    half = len(scores) // 2
    for part in (slice(0, half), slice(half // 2, None), slice(None)):
        e, b = st.evalues_bits(scores[part], c[part])
        assert e.tolist() == [w[0] for w in want[part]]
        assert b.tolist() == [w[1] for w in want[part]]
    e, _ = st.evalues_bits(np.array([5, 1 << 21]), c[:2])
    assert e.tolist() == [st.evalue_bits(5, int(c[0]))[0], st.evalue_bits(1 << 21, int(c[1]))[0]]
    assert any(g.round_down for g in st.gapped if g is not None) == (task == "blastn")   # 2/-3
