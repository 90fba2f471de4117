"""Karlin-Altschul / Gumbel statistics exactly as BLAST+ 2.12 computes them (shared by SW and BLAST).

API (stable):

- ``gapped_params(matrix, gap_open, gap_extend) -> GappedParams`` (matrix, gap_open, gap_extend,
  karlin: KarlinParams, alpha, beta, gumbel: GumbelParams) from BLAST+'s tables for BLOSUM45/50/
  62/80/90 and PAM30/70/250; an unsupported pair raises ParameterError naming the supported ones.
  ``supported_gap_costs(matrix) -> [(open, extend)]``; ``ungapped_table_params(matrix)``.
- ``KarlinParams(lam, K, H)`` (+ ``logK``); ``GumbelParams(lam, C, G, a, alpha, sigma, a_un,
  alpha_un)`` (+ ``b``, ``beta``, ``tau``).
- ``ungapped_params(scores, p_query, p_subject) -> KarlinParams | None``
  (Blast_KarlinBlkUngappedCalc); ``robinson_frequencies(letters)`` (BLAST's background),
  ``composition(codes, ncodes, ambiguous=())``, ``score_frequencies(scores, p1, p2)``.
- ``length_adjustment(K, logK, alpha_d_lambda, beta, qlen, db_length, db_num_seqs) -> (adj, converged)``.
- ``bit_score(score, karlin)``, ``karlin_evalue(score, karlin, searchsp)``,
  ``karlin_cutoff(evalue, karlin, searchsp)``, ``spouge_evalue(score, karlin, gumbel, qlen, slen,
  db_length)``, ``spouge_cutoff(evalue, karlin, gumbel, qlen, slen, db_length)``.
- ``SearchStatistics.for_search(matrix, gap_open, gap_extend, db_residues, db_seqs, dbsize=None,
  searchsp=None)``: ``.evalue(score, qlen, slen)``, ``.evalues(scores, qlen, slens)`` (arrays),
  ``.bitscore(score)``, ``.length_adjustment(qlen)``, ``.effective_search_space(qlen)``,
  ``.min_score(evalue, qlen, slen)``; ``.spouge`` tells which E-value blastp would use
  (Spouge's finite-size correction unless -searchsp / OLD_FSC).

Nucleotide (BLASTN) tables will slot in beside :mod:`.tables` with the same GappedParams type.
"""
from .evalue import (LN2, SearchStatistics, bit_score, karlin_cutoff, karlin_evalue, length_adjustment,
                     spouge_cutoff, spouge_evalue)
from .karlin import (ROBINSON, GappedParams, GumbelParams, KarlinParams, composition, gapped_params,
                     robinson_frequencies, score_frequencies, supported_gap_costs, ungapped_params,
                     ungapped_table_params)

__all__ = ["SearchStatistics", "gapped_params", "supported_gap_costs", "ungapped_table_params",
           "GappedParams", "KarlinParams", "GumbelParams", "ungapped_params", "robinson_frequencies",
           "composition", "score_frequencies", "ROBINSON", "length_adjustment", "bit_score",
           "karlin_evalue", "karlin_cutoff", "spouge_evalue", "spouge_cutoff", "LN2"]
