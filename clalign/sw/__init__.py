"""Smith-Waterman protein database search (after CUDASW++3.0): exact scores on any OpenCL device,
reported hits with blastp 2.12 statistics and exact alignments.

>>> import clalign
>>> scores = clalign.sw_scores("MKTAYIAKQR", "db.fasta")              # np.int32, database order
>>> res = clalign.sw_search("queries.fasta", "db.fasta", evalue=1e-3)  # list of QueryResult
>>> h = res[0].hits[0]; h.evalue, h.bitscore, h.qstart, h.send, h.cigar, h.qseq
"""
from .align import align_pair
from .engine import Hit, SWEngine, get_engine, sw_scores, top_hits
from .params import SW_PARAMS
from .reference import sw_score, sw_scores_ref
from .report import QueryResult, Reporter, sw_search

__all__ = ["sw_scores", "sw_search", "Hit", "QueryResult", "SWEngine", "get_engine", "top_hits",
           "SW_PARAMS", "sw_score", "sw_scores_ref", "align_pair", "Reporter"]
