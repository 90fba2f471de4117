"""A minimal one-read-one-contig BLASTN pipeline around the gapped stages, for their golden tests.

Seeds and ungapped extension are simplified (every exact word, first hit per diagonal, exact
ungapped extension); the gapped stages, the start choice, the traceback and the re-scoring are
the library's. For reads that blastn aligns in one piece the final alignment depends only on the
gapped stages, which is what the golden files check. No tests here: helpers only.
"""
import math

import numpy as np

from clalign.blast import nucl_gapped, nucl_greedy, nucl_greedy_core, nucl_traceback, nucl_traceback_reduce
from clalign.blast.nucl_ungapped import ungapped_exact
from clalign.data.nucleotide import BLASTNA_LETTERS, blastna_matrix
from clalign.stats.nucl import nucl_gapped_params

_COMP = str.maketrans("ACGTRYKMSWBDHVN", "TGCAYRMKSWVHDBN")
_CODE = {c: i for i, c in enumerate(BLASTNA_LETTERS)}
LN2 = math.log(2)
#: (task, reward, penalty, gap open, gap extend) of each golden file gapped_<name>.tsv
RUNS = {"megablast": ("megablast", 1, -2, 0, 0), "blastn": ("blastn", 2, -3, 5, 2),
        "mb_2_3_0_0": ("megablast", 2, -3, 0, 0), "mb_1_2_2_2": ("megablast", 1, -2, 2, 2),
        "mb_2_3_5_2": ("megablast", 2, -3, 5, 2), "bn_1_3_2_2": ("blastn", 1, -3, 2, 2),
        "bn_2_7_4_2": ("blastn", 2, -7, 4, 2)}


def blastna(seq: str) -> np.ndarray:
    return np.array([_CODE[c] for c in seq.upper()], dtype=np.uint8)


def revcomp(seq: str) -> str:
    return seq.upper().translate(_COMP)[::-1]


def read_fasta(path):
    out, name = {}, None
    for line in open(path):
        line = line.strip()
        if line.startswith(">"):
            name = line[1:].split()[0]
            out[name] = []
        elif line:
            out[name].append(line)
    return {k: "".join(v) for k, v in out.items()}


class Task:
    """Parameters of ``-task megablast`` (greedy) or ``-task blastn`` (DP) with their defaults."""

    def __init__(self, task, reward, penalty, gap_open, gap_extend):
        self.greedy = task == "megablast"
        self.word = 28 if self.greedy else 11
        self.reward, self.penalty = reward, penalty
        self.gap_open, self.gap_extend = gap_open, gap_extend
        lam = nucl_gapped_params(reward, penalty, gap_open, gap_extend).karlin.lam
        self.x_prelim, self.x_final = nucl_gapped.x_dropoffs(25 if self.greedy else 30, 100, lam)
        self.x_ungapped = math.ceil(20 * LN2 / _uniform_lambda(reward, penalty))
        self.matrix = blastna_matrix(reward, penalty).astype(np.int32)


def _uniform_lambda(reward, penalty):
    """Ungapped lambda of reward/penalty for uniform bases (seeds only; close to BLAST+'s)."""
    lo, hi = 1e-6, 10.0
    for _ in range(100):
        mid = (lo + hi) / 2
        if 0.25 * math.exp(mid * reward) + 0.75 * math.exp(mid * penalty) > 1:
            hi = mid
        else:
            lo = mid
    return lo


def pack(codes: np.ndarray) -> np.ndarray:
    """NCBI2na bytes of 2-bit values."""
    n = len(codes)
    pad = np.zeros(-n % 4, dtype=np.uint8)
    c = np.concatenate([codes.astype(np.uint8), pad]).reshape(-1, 4)
    return ((c[:, 0] << 6) | (c[:, 1] << 4) | (c[:, 2] << 2) | c[:, 3]).astype(np.uint8)


_INDEX = {}


def _words(x, word):
    """(2-bit word code, has an ambiguous letter) of every word of ``x``."""
    n = len(x) - word + 1
    if n <= 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=bool)
    x = np.asarray(x, dtype=np.int64)
    code = np.zeros(n, dtype=np.int64)
    for k in range(word):
        code = (code << 2) | (x[k:k + n] & 3)
    amb = np.concatenate(([0], np.cumsum(x >= 4)))
    return code, amb[word:] - amb[:n] > 0


def word_hits(q, s2, word):
    """Every (q_off, s_off) where ``word`` letters match exactly (query letters unambiguous),
    ordered by diagonal then subject offset."""
    key = (s2.tobytes(), word)
    if key not in _INDEX:
        code, _ = _words(s2, word)
        order = np.argsort(code, kind="stable")
        _INDEX[key] = (code[order], order)
    scode, sorder = _INDEX[key]
    qcode, qamb = _words(q, word)
    lo = np.searchsorted(scode, qcode, side="left")
    hi = np.searchsorted(scode, qcode, side="right")
    hi[qamb] = lo[qamb]
    count = hi - lo
    qi = np.repeat(np.arange(len(qcode)), count)
    first = np.repeat(lo - (np.cumsum(count) - count), count)
    si = sorder[first + np.arange(int(count.sum()))]
    order = np.lexsort((si, si - qi))
    return list(zip(qi[order].tolist(), si[order].tolist()))


def align_one(task: Task, q, s2, s_packed, s_full, cutoff=20):
    """Final HSPs ``(score, q_start, q_end, s_start, s_end, ops, nums)`` of one query context."""
    hits = word_hits(q, s2, task.word)
    init, last_end = [], {}
    for qo, so in hits:
        diag = so - qo
        if so < last_end.get(diag, -1):
            continue
        qs, ss, length, score = ungapped_exact(q, s_packed, len(s2), task.matrix, qo, so, -task.x_ungapped)
        last_end[diag] = ss + length
        if score >= cutoff // 2:
            init.append((score, qs, ss, length, qo, so))
    init.sort(key=lambda h: -h[0])
    prelim = []
    for score, qs, ss, length, qo, so in init:
        if any(p[1] <= qs and qs + length <= p[2] and p[3] <= ss and ss + length <= p[4] for p in prelim):
            continue
        if task.greedy:
            r = nucl_greedy.greedy_prelim(q, len(q), s_packed, len(s2), qs, ss, length, task.reward,
                                          task.penalty, task.gap_open, task.gap_extend, task.x_prelim)
        else:
            r = nucl_gapped.dp_prelim(task.matrix, q, len(q), s_packed, len(s2), qo, so, ss + length, score,
                                      task.gap_open, task.gap_extend, task.x_prelim)
        if r[0] >= cutoff:
            prelim.append(tuple(int(x) for x in r))
    prelim.sort(key=lambda p: -p[0])
    out = []
    for score, q0, q1, s0, s1, qg, sg in prelim:
        if any(o[1] <= q0 and q1 <= o[2] and o[3] <= s0 and s1 <= o[4] for o in out):
            continue
        if task.greedy:
            r = nucl_traceback.greedy_traceback(task.matrix, q, s_full, len(s2), q0, q1, s0, s1, qg, sg, task.reward,
                                                task.penalty, task.gap_open, task.gap_extend, task.x_final)
        else:
            r = nucl_traceback.dp_traceback(task.matrix, q, s_full, len(s2), q0, q1, s0, s1, qg, sg, task.gap_open,
                                            task.gap_extend, task.x_final)
        if not r[0]:
            continue
        if not task.greedy:     # BLAST+ re-scores DP alignments only when the purge cut them
            out.append((int(r[1]), int(r[2]), int(r[3]), int(r[4]), int(r[5]), r[8], r[9]))
            continue
        e = nucl_traceback.reevaluate_gapped(task.matrix, q, s_full, len(s2), int(r[2]), int(r[4]), r[8], r[9],
                                             task.reward, task.penalty, task.gap_open, task.gap_extend, cutoff)
        if e[0]:
            out.append((int(e[1]), int(e[2]), int(e[3]), int(e[4]), int(e[5]), e[6], e[7]))
    return out


def outfmt_row(hsp, q, s, qlen, minus):
    """(qstart, qend, sstart, send, gaps, mismatch, score, btop) as blastn prints them."""
    score, q0, q1, s0, s1, ops, nums = hsp
    cols = nucl_traceback.script_columns(ops, nums)
    qi, si = q0, s0
    pairs = []
    for op in cols:
        a = BLASTNA_LETTERS[q[qi]] if op != nucl_greedy.DEL else "-"
        b = BLASTNA_LETTERS[s[si]] if op != nucl_greedy.INS else "-"
        qi += op != nucl_greedy.DEL
        si += op != nucl_greedy.INS
        pairs.append((a, b))
    if minus:
        pairs = [(a.translate(_COMP), b.translate(_COMP)) for a, b in reversed(pairs)]
    btop, run, gaps, mism = [], 0, 0, 0
    for a, b in pairs:
        if a == b:
            run += 1
            continue
        if run:
            btop.append(str(run))
            run = 0
        btop.append(a + b)
        if a == "-" or b == "-":
            gaps += 1
        else:
            mism += 1
    if run:
        btop.append(str(run))
    if minus:
        coords = (qlen - q1 + 1, qlen - q0, s1, s0 + 1)
    else:
        coords = (q0 + 1, q1, s0 + 1, s1)
    return coords + (gaps, mism, score, "".join(btop))


def search(run, reads, contigs):
    """Rows ``(qseqid, sseqid, qstart, qend, sstart, send, gaps, mismatch, score, btop)`` for every
    read against every contig, best score first per read (ties by subject then start)."""
    from clalign.data import Database
    from clalign.data.nucleotide import NCBI4NA_TO_BLASTNA, NucleotideDatabase

    task = Task(*RUNS[run])
    names = list(contigs)
    db = Database.from_sequences([contigs[n] for n in names], names, alphabet="dna")
    nt = NucleotideDatabase.from_database(db)
    rows = []
    for rname, read in reads.items():
        found = []
        for si, sname in enumerate(names):
            s2 = nt.ncbi2na(si)
            sp = np.asarray(nt.packed(si))
            sfull = np.append(NCBI4NA_TO_BLASTNA[nt.ncbi4na(si)], np.uint8(15))   # sentinel after
            for minus in (False, True):
                q = blastna(revcomp(read) if minus else read)
                for h in align_one(task, q, s2, sp, sfull):
                    found.append((rname, sname) + outfmt_row(h, q, sfull, len(read), minus))
        found.sort(key=lambda r: (-r[8], r[1], r[2]))
        rows += found
    return rows


DATA = __import__("os").path.join(__import__("os").path.dirname(__file__), "data", "blastn")


def golden_mismatches(run, read_names):
    """Reads of ``read_names`` whose lines differ from blastn's ``gapped_<run>.tsv``: every line
    for megablast (one HSP per read there), the first (best) line for -task blastn."""
    import os

    reads = read_fasta(os.path.join(DATA, "gapped_reads.fa"))
    reads = {n: reads[n] for n in read_names}
    contigs = read_fasta(os.path.join(DATA, "gapped_subject.fa"))
    gold = [line.rstrip("\n").split("\t") for line in open(os.path.join(DATA, f"gapped_{run}.tsv"))]
    mine = [[str(x) for x in r] for r in search(run, reads, contigs)]
    by_gold, by_mine = {}, {}
    for g in gold:
        if g[0] in reads:
            by_gold.setdefault(g[0], []).append(g)
    for m in mine:
        by_mine.setdefault(m[0], []).append(m)
    if RUNS[run][0] == "blastn":
        by_gold = {k: v[:1] for k, v in by_gold.items()}
        by_mine = {k: v[:1] for k, v in by_mine.items()}
    bad = sorted(n for n in reads if by_gold.get(n, []) != by_mine.get(n, []))
    return bad, len(by_gold)


class plain_python:
    """Context in which the gapped modules' numba functions are their plain-Python originals,
    callees included (module globals swapped for ``.py_func``): the reference of the compiled
    code. Take compiled functions before entering."""

    def __enter__(self):
        from clalign.blast import gapped, traceback

        self.saved = []
        for mod in (nucl_greedy_core, nucl_greedy, nucl_gapped, nucl_traceback_reduce, nucl_traceback, gapped,
                    traceback):
            for name, obj in list(vars(mod).items()):
                if hasattr(obj, "py_func"):
                    self.saved.append((mod, name, obj))
                    setattr(mod, name, obj.py_func)
        return self

    def __exit__(self, *exc):
        for mod, name, obj in self.saved:
            setattr(mod, name, obj)
        return False
