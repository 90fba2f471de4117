"""Smith-Waterman protein database search (after CUDASW++3.0): exact scores on any OpenCL device,
reported hits with blastp 2.12 statistics and exact alignments.

>>> import clalign
>>> scores = clalign.sw_scores("MKTAYIAKQR", "db.fasta")              # np.int32, database order
>>> res = clalign.sw_search("queries.fasta", "db.fasta", evalue=1e-3)  # list of QueryResult
>>> h = res[0].hits[0]; h.evalue, h.bitscore, h.qstart, h.send, h.cigar, h.qseq
"""
from importlib import import_module

# Lazy, so that `clalign sw` starts its device work before numba (the traceback code, ~0.5-1.3 s
# of imports) is loaded: the first query's reporting thread imports it while the device works.
_EXPORTS = {"align_pair": ".align", "Hit": ".engine", "SWEngine": ".engine", "get_engine": ".engine",
            "sw_scores": ".engine", "top_hits": ".engine", "SW_PARAMS": ".params", "sw_score": ".reference",
            "sw_scores_ref": ".reference", "QueryResult": ".report", "Reporter": ".report", "sw_search": ".report"}

__all__ = ["sw_scores", "sw_search", "Hit", "QueryResult", "SWEngine", "get_engine", "top_hits",
           "SW_PARAMS", "sw_score", "sw_scores_ref", "align_pair", "Reporter"]


def __getattr__(name):
    mod = _EXPORTS.get(name)
    if mod is None:
        raise AttributeError(f"module 'clalign.sw' has no attribute {name!r}")
    return getattr(import_module(mod, __name__), name)
