"""BLASTP searches through the public API compile each compiled (numba) function once.

numba compiles a function again for every new argument type (writeable or read-only array,
int32 or int64, a literal constant): on a fresh machine each extra specialisation costs seconds,
and one met mid-search stalls every worker behind numba's compile lock. Several searches of
different flavours (FASTA and prepared database, one and two threads) must add at most one
signature per function; the X-drop DP kernels, specialised on purpose for their two directions
(the constant step lets the compiler simplify the inner loop), at most two. Counted as the
signatures these searches add, so functions other tests compiled with their own types do not
count.
"""
import threading
from pathlib import Path

from numba.core.registry import CPUDispatcher

from clalign.blast import (gapped, itree_nb, lookup, stages_nb, traceback,
                           ungapped_nb)
from clalign.blast import blastp as blastp_mod
from clalign.blast.blastp import run_blastp, tabular_lines
from clalign.blast.options import blastp_options
from clalign.data.database import makedb
from clalign.stats import _fast, karlin_nb

ROOT = Path(__file__).resolve().parents[1]
QUERIES = ROOT / "tests" / "data" / "blastp" / "synth_queries.faa"
DB = ROOT / "tests" / "data" / "blastp" / "synth_db.faa.gz"
MODULES = (stages_nb, ungapped_nb, lookup, gapped, traceback, itree_nb, _fast, karlin_nb)
TWO_DIRECTIONS = {"clalign.blast.gapped.semi_gapped", "clalign.blast.gapped.restricted",
                  "clalign.blast.traceback.align_ex"}


def _signatures():
    return {f"{m.__name__}.{name}": {str(s) for s in obj.signatures}
            for m in MODULES for name, obj in vars(m).items() if isinstance(obj, CPUDispatcher)}


def _no_preload(specs):
    t = threading.Thread(target=lambda: None)
    t.start()
    return t


def test_one_specialisation_per_function(tmp_path, monkeypatch):
    # the searches' own compiles only: a preload loads every signature the on-disk cache holds,
    # including those other tests or tools compiled with their own argument types
    monkeypatch.setattr(blastp_mod, "preload", _no_preload)
    before = _signatures()
    opts = blastp_options(max_target_seqs=50)
    prepared = makedb(DB, tmp_path / "db", quiet=True)
    runs = [(DB, 1), (prepared.path, 1), (prepared.path, 2), (DB, 2)]
    rows = [list(tabular_lines(run_blastp(QUERIES, db, opts, num_threads=t))) for db, t in runs]
    assert rows[0] and all(r == rows[0] for r in rows)
    added = {k: v - before.get(k, set()) for k, v in _signatures().items()}
    for stage in ("clalign.blast.stages_nb.prelim_chunk", "clalign.blast.stages_nb.traceback_chunk",
                  "clalign.blast.ungapped_nb.two_hit_db"):
        assert len(_signatures()[stage]) >= 1, f"{stage} was not compiled by the searches"
    extra = {k: sorted(v) for k, v in added.items() if len(v) > (2 if k in TWO_DIRECTIONS else 1)}
    assert not extra, f"compiled more than once: {extra}"
