"""Smith-Waterman protein database search (after CUDASW++3.0): exact scores on any OpenCL device.

>>> import clalign
>>> scores = clalign.sw_scores("MKTAYIAKQR", "db.fasta")          # np.int32, database order
>>> hits = clalign.sw_search("queries.fasta", "db.fasta", top=10)  # list of QueryResult
"""
from .engine import Hit, QueryResult, SWEngine, get_engine, sw_scores, sw_search, top_hits
from .params import SW_PARAMS
from .reference import sw_score, sw_scores_ref

__all__ = ["sw_scores", "sw_search", "Hit", "QueryResult", "SWEngine", "get_engine", "top_hits",
           "SW_PARAMS", "sw_score", "sw_scores_ref"]
