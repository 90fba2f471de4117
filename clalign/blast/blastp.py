"""``blastp`` as a library call: queries (FASTA) against a database, BLAST+ 2.12's results.

``run_blastp`` yields, per query in file order, ``(query id, query codes, [(oid, [HSP...])])``
in BLAST+'s output order; ``tabular_lines`` turns that into ``-outfmt 6`` rows. Queries and
subjects keep trailing ``*`` as BLAST+ does (the FASTA reader strips them and counts them, we
put them back), so lengths and statistics match ``makeblastdb`` databases of the same file.
Queries run on ``num_threads`` threads; the compiled phases release the GIL.
"""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np

from ..data.database import as_database
from ..data.fasta import parse_fasta
from ..output.tabular import std_row
from .engine import Subjects, search_query
from .options import BlastpOptions

STOP = 25  # NCBIstdaa '*'


def read_queries(path):
    """[(id, codes)] of a protein FASTA file, trailing stops kept."""
    p = parse_fasta(path, "protein")
    out, off = [], 0
    for k, n in enumerate(p.lengths.tolist()):
        codes = np.concatenate([np.asarray(p.residues[off:off + n], dtype=np.uint8),
                                np.full(int(p.stops[k]), STOP, dtype=np.uint8)])
        off += n
        out.append((p.ids[k].decode("utf-8", "replace"), codes))
    return out


def run_blastp(query_path, db, opts: BlastpOptions, num_threads: int = 1):
    """Yield (query id, codes, hits) per query, in query order."""
    subjects = Subjects.from_database(as_database(db, "protein"))
    queries = read_queries(query_path)
    if num_threads <= 1:
        for qid, codes in queries:
            yield qid, codes, subjects, search_query(codes, subjects, opts)
        return
    with ThreadPoolExecutor(max_workers=num_threads) as pool:
        futures = [pool.submit(search_query, codes, subjects, opts) for _, codes in queries]
        for (qid, codes), fut in zip(queries, futures):
            yield qid, codes, subjects, fut.result()


def tabular_lines(results):
    """``-outfmt 6`` rows (standard columns) of ``run_blastp``'s results."""
    for qid, codes, subjects, hits in results:
        for oid, hsps in hits:
            s = subjects.residues[subjects.offsets[oid]:subjects.offsets[oid + 1]]
            sid = subjects.ids[oid]
            sid = sid.decode("utf-8", "replace") if isinstance(sid, bytes) else sid
            for h in hsps:
                yield std_row(qid, sid, codes, s, h)
