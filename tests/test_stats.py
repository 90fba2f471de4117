"""clalign.stats against BLAST+ 2.12: tables, ungapped parameters, search space, E-values, bit scores.

Golden files: tests/data/blastp/ (see its README for the exact blastp commands).
"""
import math
import os

import numpy as np
import pytest

from clalign.data import PROTEIN, get_matrix, read_fasta
from clalign.errors import ParameterError
from clalign.output import format_bitscore, format_evalue
from clalign.stats import (SearchStatistics, composition, gapped_params, length_adjustment, robinson_frequencies,
                           spouge_cutoff, spouge_evalue, supported_gap_costs, ungapped_params)

HERE = os.path.dirname(os.path.abspath(__file__))
GOLD = os.path.join(HERE, "data", "blastp")
DB_RESIDUES, DB_SEQS = 680484, 2100      # data/proteome.faa.gz without the trailing '*'
QLENS = [144, 189, 222, 311, 375, 464, 567, 657, 729, 850, 1000, 1500, 2005, 2504, 3005, 3564, 4061, 4548,
         4743, 5147, 5478]


def _rows(name):
    with open(os.path.join(GOLD, name)) as fh:
        return [line.rstrip("\n").split("\t") for line in fh if not line.startswith("#")]


def test_table_values():
    p = gapped_params("blosum62", 11, 1)
    assert (p.karlin.lam, p.karlin.K, p.karlin.H, p.alpha, p.beta) == (0.267, 0.041, 0.14, 1.9, -30)
    g = p.gumbel
    assert (g.C, g.alpha, g.sigma, g.a_un, g.alpha_un, g.G) == (0.669720, 42.602800, 43.636200, 0.7916, 4.964660, 12)
    assert g.b == pytest.approx(2 * 12 * (0.7916 - 1.9))
    assert (11, 1) in supported_gap_costs("BLOSUM62") and (9, 1) in supported_gap_costs("PAM30")
    assert (9, 2) not in supported_gap_costs("PAM30")


def test_unsupported_pairs_are_refused_with_the_supported_list():
    with pytest.raises(ParameterError, match=r"5 and 1 are not supported for BLOSUM62.*13/1.*11/1"):
        gapped_params("BLOSUM62", 5, 1)
    with pytest.raises(ParameterError, match="not a supported matrix.*PAM250"):
        gapped_params("BLOSUM99", 11, 1)


def test_ungapped_parameters_match_blast():
    """The ideal (background x background) block equals the table's ungapped row; query-specific
    blocks equal what blastp 2.12 prints for data/queries.faa (3 significant digits)."""
    letters = PROTEIN.letters
    m = get_matrix("BLOSUM62").scores
    std = robinson_frequencies(letters)
    ideal = ungapped_params(m, std, std)
    assert (round(ideal.lam, 4), round(ideal.K, 3), round(ideal.H, 4)) == (0.3176, 0.134, 0.4012)
    blast = [(0.315, 0.129, 0.359), (0.324, 0.134, 0.400), (0.322, 0.139, 0.402), (0.317, 0.137, 0.383)]
    recs = list(read_fasta(os.path.join(HERE, "..", "data", "queries.faa")))
    for rec, want in zip(recs, blast):
        p = composition(PROTEIN.encode(rec.sequence), len(letters), ambiguous=(letters.index("X"),))
        k = ungapped_params(m, p, std)
        assert (float("%.3g" % k.lam), float("%.3g" % k.K), float("%.3g" % k.H)) == want


def test_ungapped_degenerate_cases():
    # positive expected score: no parameters (BLAST+ marks the context invalid)
    assert ungapped_params(np.array([[1, 1], [1, 1]]), [0.5, 0.5], [0.5, 0.5]) is None
    # +1/-1 scores: the closed form for K
    assert ungapped_params(np.array([[1, -1], [-1, 1]]), [0.5, 0.5], [0.5, 0.5]) is None   # expected score 0
    k = ungapped_params(np.array([[1, -1, -1, -1], [-1, 1, -1, -1], [-1, -1, 1, -1], [-1, -1, -1, 1]]),
                        [0.25] * 4, [0.25] * 4)
    assert k.lam == pytest.approx(math.log(3), rel=1e-5)
    assert k.K == pytest.approx((0.75 - 0.25) ** 2 / 0.75)


def test_effective_search_space_matches_blast():
    """'Effective search space used' of blastp 2.12 (data/queries.faa + CUDASW++ queries)."""
    plain = [38791032, 60384660, 76049064, 119383488, 150052896, 192856104, 243472572, 287134848, 321425412,
             379809192, 449655024, 686095872, 923173524, 1158690456, 1386487872, 1645254744, 1872377808,
             2102526216, 2184457212, 2374532748, 2518500768]
    dbsize = [284468500, 481310000, 629965900, 1042164200, 1338753600, 1754677200, 2236930000, 2662072400,
              3000696600, 3573423900, 4277652500, 6644294400, 9037255000, 11397401600, 13773728400,
              16424070000, 18777041000, 21080364800, 22007862800, 23914129000, 25487802300]
    s = SearchStatistics.for_search("BLOSUM62", 11, 1, DB_RESIDUES, DB_SEQS)
    s5 = SearchStatistics.for_search("BLOSUM62", 11, 1, DB_RESIDUES, DB_SEQS, dbsize=5000000)
    assert [s.effective_search_space(q) for q in QLENS] == plain
    assert [s5.effective_search_space(q) for q in QLENS] == dbsize
    assert length_adjustment(0.041, math.log(0.041), 1.9 / 0.267, -30, 10, 100, 1) == (0, False)


@pytest.mark.parametrize("name,matrix,go,ge,kw", [
    ("queries_fields.out7", "BLOSUM62", 11, 1, {}),
    ("sw_golden.tsv", "BLOSUM62", 11, 1, {}),
    ("searchsp_1e8.tsv", "BLOSUM62", 11, 1, {"searchsp": 100000000}),
    ("dbsize_5e6.tsv", "BLOSUM62", 11, 1, {"dbsize": 5000000}),
    ("matrix_BLOSUM45_15_2.tsv", "BLOSUM45", 15, 2, {}),
    ("matrix_BLOSUM50_13_2.tsv", "BLOSUM50", 13, 2, {}),
    ("matrix_BLOSUM80_10_1.tsv", "BLOSUM80", 10, 1, {}),
    ("matrix_BLOSUM90_10_1.tsv", "BLOSUM90", 10, 1, {}),
    ("matrix_PAM30_9_1.tsv", "PAM30", 9, 1, {}),
    ("matrix_PAM70_10_1.tsv", "PAM70", 10, 1, {}),
])
def test_evalue_and_bitscore_strings_equal_blast(name, matrix, go, ge, kw):
    s = SearchStatistics.for_search(matrix, go, ge, DB_RESIDUES, DB_SEQS, **kw)
    rows = _rows(name)
    if name.endswith(".out7"):
        cols = dict(evalue=10, bits=11, score=12, qlen=13, slen=14)
    else:
        cols = dict(evalue=2, bits=3, score=4, qlen=5, slen=6)
    assert len(rows) > 100
    bad = []
    scores = np.array([int(r[cols["score"]]) for r in rows])
    for r in rows:
        sc, ql, sl = int(r[cols["score"]]), int(r[cols["qlen"]]), int(r[cols["slen"]])
        got = (format_evalue(s.evalue(sc, ql, sl)), format_bitscore(s.bitscore(sc)))
        if got != (r[cols["evalue"]], r[cols["bits"]]):
            bad.append((r, got))
    assert not bad, bad[:5]
    # the array form is the scalar form, bit for bit (per query)
    q0 = [i for i, r in enumerate(rows) if r[0] == rows[0][0]]
    ql = int(rows[0][cols["qlen"]])
    sl = np.array([int(rows[i][cols["slen"]]) for i in q0])
    arr = s.evalues(scores[q0], ql, sl)
    assert arr.tolist() == [s.evalue(int(scores[i]), ql, int(x)) for i, x in zip(q0, sl)]


def test_spouge_cutoff_is_the_threshold():
    p = gapped_params("BLOSUM62", 11, 1)
    for ql, sl, e in [(144, 1168, 10.0), (5478, 30, 1e-3), (300, 35000, 1e-50)]:
        c = spouge_cutoff(e, p.karlin, p.gumbel, ql, sl, DB_RESIDUES)
        assert spouge_evalue(c, p.karlin, p.gumbel, ql, sl, DB_RESIDUES) > e
        assert spouge_evalue(c + 1, p.karlin, p.gumbel, ql, sl, DB_RESIDUES) <= e
        s = SearchStatistics.for_search("BLOSUM62", 11, 1, DB_RESIDUES, DB_SEQS)
        assert s.min_score(e, ql, sl) == c + 1


def test_old_fsc_and_overrides(monkeypatch):
    assert SearchStatistics.for_search("BLOSUM62", 11, 1, 10, 1).spouge
    assert not SearchStatistics.for_search("BLOSUM62", 11, 1, 10, 1, searchsp=1000).spouge
    monkeypatch.setenv("OLD_FSC", "1")
    s = SearchStatistics.for_search("BLOSUM62", 11, 1, DB_RESIDUES, DB_SEQS)
    assert not s.spouge
    assert s.evalue(60, 144, 1168) == pytest.approx(38791032 * 0.041 * math.exp(-0.267 * 60))
    with pytest.raises(ParameterError):
        SearchStatistics.for_search("BLOSUM62", 11, 1, 10, 1, dbsize=-1)
