#!/usr/bin/env python3
"""Smith-Waterman database-search benchmark of clalign (the CUDASW++ protocol).

The 20 standard CUDASW++ queries (144..5478 aa) are searched, one at a time, against a
synthetic Swiss-Prot-like database (``tools/gen_protein_db.py``; 570,000 sequences,
~205 M residues by default) with ``clalign.sw_scores``. Per query we report the wall time
of the scan and GCUPS = query length x database residues / seconds; overall GCUPS =
sum(qlen x residues) / sum(seconds). Kernel builds are excluded from the timed scans: every
query is first run once against a small warm-up database (200 sequences plus the 10 longest),
then the first query once against the full database (which leaves it resident on the device,
as CUDASW++ loads its database before timing); these times are reported separately.

On a CPU OpenCL device (PoCL), or with ``--peers``, the same run also times the CPU peers on
the same data and all host cores: parasail (striped SIMD Smith-Waterman with an 8->16->32-bit
saturation check, ``sw_striped_profile_sat``; one process per core over database chunks)
and pyopal (Opal's inter-sequence SIMD; one thread per core over database chunks), checks
that all three report identical scores, and prints clalign's GCUPS relative to the best
peer. Independently of the peers, clalign's scores are always checked against parasail on
a random sample of database sequences (``--check``).

Gap penalties follow BLAST+: a gap of length k costs ``gapopen + k * gapextend``.
parasail and Opal charge ``open + (k - 1) * extend`` instead, so both get
``open = gapopen + gapextend``, ``extend = gapextend`` (verified: identical scores).

Outputs: a table on stdout; ``sw_bench.csv``, ``sw_bench.png`` and ``sw_bench.json`` in
``--out``. Example (a few minutes on a 2-core PoCL machine)::

    python3 -m tools.bench_sw -n 20000 --max-queries 5 --out /tmp/bench
"""
from __future__ import annotations

import argparse
import csv
import datetime
import inspect
import json
import multiprocessing as mp
import os
import platform
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np

_HERE = os.path.dirname(os.path.abspath(__file__))
_ROOT = os.path.dirname(_HERE)
try:                                   # python3 -m tools.bench_sw (tools/ as a package)
    from tools import gen_protein_db
except ImportError:                    # python3 -m tools.bench_sw (tools/ is sys.path[0])
    import gen_protein_db

#: Where the 20 CUDASW++ queries are looked for (first existing): the team's shared data, a
#: copy carried to a device machine (.sw_device/, git-ignored), or a shared/ in the checkout.
QUERY_PLACES = [os.path.join(_ROOT, "tests", "data", "cudasw", "cudasw_queries.fasta"),   # the repository's copy
                os.path.join(_ROOT, "..", "shared", "data", "cudasw_queries.fasta"),
                os.path.join(_ROOT, ".sw_device", "cudasw_queries.fasta"),
                os.path.join(_ROOT, "shared", "data", "cudasw_queries.fasta")]


def default_queries():
    return next((p for p in QUERY_PLACES if os.path.exists(p)), QUERY_PLACES[0])


class BenchError(Exception):
    """A user-facing error: printed as one line, exit status 2."""


# ----------------------------------------------------------------------------- inputs
def read_queries(path: str) -> list[tuple[str, str]]:
    """Return [(id, sequence)] of a FASTA file (uppercased, trailing '*' removed)."""
    if not os.path.exists(path):
        raise BenchError(f"{path}: query file not found (use --queries)")
    out: list[tuple[str, list[str]]] = []
    with open(path) as fh:
        for lineno, line in enumerate(fh, 1):
            line = line.strip()
            if not line:
                continue
            if line.startswith(">"):
                name = line[1:].split()[0] if len(line) > 1 else ""
                if not name:
                    raise BenchError(f"{path}:{lineno}: empty FASTA header")
                out.append((name, []))
            elif not out:
                raise BenchError(f"{path}:{lineno}: sequence data before the first '>' header")
            else:
                out[-1][1].append(line.upper())
    queries = [(short_name(name), "".join(parts).rstrip("*")) for name, parts in out]
    if not queries:
        raise BenchError(f"{path}: no sequences")
    for name, seq in queries:
        if not seq:
            raise BenchError(f"{path}: query {name} is empty")
    return queries


def short_name(seq_id: str) -> str:
    """Accession of a UniProt-style id (``gi|1|sp|P02232.2|LGB1_VICFA`` -> ``P02232``)."""
    parts = seq_id.split("|")
    for tag in ("sp", "tr"):
        if tag in parts[:-1]:
            return parts[parts.index(tag) + 1].split(".")[0]
    return seq_id


def pick_queries(queries, k):
    """Up to ``k`` queries spanning the length range (evenly spaced in length order)."""
    order = sorted(range(len(queries)), key=lambda i: len(queries[i][1]))
    if k is None or k >= len(order):
        return [queries[i] for i in order]
    if k == 1:
        return [queries[order[0]]]
    idx = sorted({round(j * (len(order) - 1) / (k - 1)) for j in range(k)})
    return [queries[order[i]] for i in idx]


class SynthDB:
    """The generated database as Python-side sequences (for the peers) plus its FASTA."""

    def __init__(self, n: int, seed: int):
        t = time.perf_counter()
        self.n, self.seed = n, seed
        self.lengths, self.residues = gen_protein_db.generate(n, seed)
        self.offsets = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(self.lengths, out=self.offsets[1:])
        self.total = int(self.offsets[-1])
        self.gen_seconds = time.perf_counter() - t
        self._seqs = None

    @property
    def seqs(self) -> list[bytes]:
        if self._seqs is None:
            r, o = self.residues, self.offsets
            self._seqs = [r[o[i]:o[i + 1]].tobytes() for i in range(self.n)]
        return self._seqs

    def write(self, path: str, subset=None) -> None:
        if subset is None:
            gen_protein_db.write_fasta(path, self.lengths, self.residues)
            return
        subset = np.asarray(subset)
        lens = self.lengths[subset]
        res = np.concatenate([self.residues[self.offsets[i]:self.offsets[i + 1]] for i in subset])
        gen_protein_db.write_fasta(path, lens, res)


# ----------------------------------------------------------------------------- clalign
def import_clalign():
    """Return (clalign.sw_scores, clalign.data module) or raise a clear BenchError."""
    try:
        import clalign.data as cdata
    except Exception as exc:  # ImportError, or a broken module under development
        raise BenchError(f"clalign.data is not usable ({type(exc).__name__}: {exc}); "
                         "use --no-clalign to time only the peers") from exc
    try:
        from clalign.sw import sw_scores
    except Exception as exc:
        raise BenchError(f"clalign.sw is not usable ({type(exc).__name__}: {exc}); "
                         "use --no-clalign to time only the peers") from exc
    return sw_scores, cdata


def open_clalign_db(cdata, fasta: str):
    """Load a FASTA file as a clalign Database (Database.from_fasta, else as_database)."""
    db_cls = getattr(cdata, "Database", None)
    if db_cls is not None and hasattr(db_cls, "from_fasta"):
        return db_cls.from_fasta(fasta)
    return cdata.as_database(fasta)


def _db_order(db, n: int):
    """Permutation p with clalign db position p[i] holding generated sequence i (or None)."""
    ids = list(getattr(db, "ids", []) or [])
    if len(ids) != n:
        raise BenchError(f"clalign database has {len(ids)} sequences, expected {n}")
    expected = [gen_protein_db.seq_id(i, n) for i in range(n)]
    if ids == expected:
        return None
    pos = {name: j for j, name in enumerate(ids)}
    return np.array([pos[name] for name in expected], dtype=np.int64)


class ClalignRunner:
    """Calls ``sw_scores`` with our options mapped onto whatever its keyword names are."""

    def __init__(self, sw_scores, matrix: str, gapopen: int, gapextend: int, device):
        self.fn = sw_scores
        params = inspect.signature(sw_scores).parameters
        kw = {}
        for names, value in ((("matrix", "scoring_matrix"), matrix),
                             (("gapopen", "gap_open"), gapopen),
                             (("gapextend", "gap_extend"), gapextend),
                             (("device",), device)):
            name = next((nm for nm in names if nm in params), None)
            if name is None:
                if names[0] == "device" and value is None:
                    continue
                raise BenchError(f"clalign.sw_scores has no parameter {names[0]!r} "
                                 f"(signature {inspect.signature(sw_scores)})")
            kw[name] = value
        self.kwargs = kw

    def __call__(self, query: str, db) -> np.ndarray:
        res = self.fn(query, db, **self.kwargs)
        return np.asarray(getattr(res, "scores", res)).astype(np.int64, copy=False)


def verify_clalign(cdata, query, wdb, scores, args, n: int = 40) -> str | None:
    """None when ``scores`` (of ``query`` against ``wdb``) equal the numpy Gotoh reference on
    ``n`` subjects (the longest included), else the first difference."""
    from clalign.runtime.harness import compare
    from clalign.sw.reference import sw_score

    m = cdata.get_matrix(args.matrix).scores
    q = cdata.PROTEIN.encode(query[1])
    lengths = np.asarray(wdb.lengths)
    idx = np.unique(np.concatenate([np.linspace(0, len(wdb) - 1, min(n, len(wdb))).astype(np.int64),
                                    [int(np.argmax(lengths))]]))
    want = np.array([sw_score(q, wdb.sequence(int(i)), m, args.gapopen, args.gapextend) for i in idx])
    return compare(np.asarray(scores)[idx], want, f"{query[0]} vs numpy", idx)


def device_info(device):
    """(description, is_cpu) of the OpenCL device clalign will use."""
    try:
        from clalign.runtime import Runtime
        caps = Runtime.get(device).caps
        return f"{caps.name} ({caps.platform}, {caps.driver})", bool(caps.is_cpu)
    except Exception as exc:
        raise BenchError(f"no usable OpenCL device ({type(exc).__name__}: {exc})") from exc


# ----------------------------------------------------------------------------- peers
_PARASAIL = {}


def _parasail_chunk(args):
    """Worker: parasail scores of database sequences [a, b) for one query."""
    import parasail
    query, a, b, matrix, op, ex = args
    key = (query, matrix)
    prof = _PARASAIL.get(key)
    if prof is None:
        _PARASAIL.clear()
        prof = _PARASAIL[key] = parasail.profile_create_sat(query, getattr(parasail, matrix.lower()))
    seqs = _PARASAIL_SEQS
    return np.fromiter((parasail.sw_striped_profile_sat(prof, s, op, ex).score for s in seqs[a:b]),
                       dtype=np.int64, count=b - a)


_PARASAIL_SEQS: list[bytes] = []


def _chunks(n: int, parts: int):
    bounds = np.linspace(0, n, parts + 1).astype(int)
    return [(int(a), int(b)) for a, b in zip(bounds[:-1], bounds[1:]) if b > a]


class ParasailPeer:
    """parasail sw_striped_profile_sat over database chunks in forked worker processes.

    Processes rather than threads: parasail's ctypes calls release the GIL, but the Python
    work around each call (~20 us) does not, so threads scale poorly.
    """

    name = "parasail"

    def __init__(self, seqs: list[bytes], matrix: str, gapopen: int, gapextend: int, workers: int):
        import parasail
        if not hasattr(parasail, matrix.lower()):
            raise BenchError(f"parasail has no matrix {matrix}")
        global _PARASAIL_SEQS
        _PARASAIL_SEQS = seqs  # inherited by the forked workers
        self.n, self.matrix = len(seqs), matrix
        self.op, self.ex = gapopen + gapextend, gapextend
        self.workers = workers
        self.pool = mp.get_context("fork").Pool(workers) if workers > 1 else None
        self.version = getattr(parasail, "__version__", "?")

    def scores(self, query: str, subset=None) -> np.ndarray:
        q = query.encode()
        if subset is not None:  # small samples: in this process
            global _PARASAIL_SEQS
            full = _PARASAIL_SEQS
            try:
                _PARASAIL_SEQS = [full[i] for i in subset]
                return _parasail_chunk((q, 0, len(subset), self.matrix, self.op, self.ex))
            finally:
                _PARASAIL_SEQS = full
        jobs = [(q, a, b, self.matrix, self.op, self.ex) for a, b in _chunks(self.n, 8 * self.workers)]
        if self.pool is None:
            return np.concatenate([_parasail_chunk(j) for j in jobs])
        return np.concatenate(self.pool.map(_parasail_chunk, jobs))

    def close(self):
        if self.pool is not None:
            self.pool.close()
            self.pool.join()


class PyopalPeer:
    """pyopal (Opal, score mode, SW) over database chunks in a thread pool (Opal drops the GIL)."""

    name = "pyopal"

    def __init__(self, seqs: list[bytes], matrix: str, gapopen: int, gapextend: int, workers: int):
        import pyopal
        self.pyopal = pyopal
        self.seqs = seqs
        self.db = pyopal.Database(seqs)
        self.n = len(seqs)
        self.aligners = [pyopal.Aligner(matrix, gap_open=gapopen + gapextend, gap_extend=gapextend)
                         for _ in range(workers)]
        self.workers = workers
        self.pool = ThreadPoolExecutor(workers)
        self.version = getattr(pyopal, "__version__", "?")

    def _run(self, k, query, a, b):
        res = self.aligners[k % len(self.aligners)].align(query, self.db, algorithm="sw", start=a, end=b)
        return np.fromiter((r.score for r in res), dtype=np.int64, count=b - a)

    def scores(self, query: str, subset=None) -> np.ndarray:
        if subset is not None:
            db = self.pyopal.Database([self.seqs[i] for i in subset])
            res = self.aligners[0].align(query, db, algorithm="sw")
            return np.array([r.score for r in res], dtype=np.int64)
        # One contiguous chunk per thread, each thread with its own Aligner.
        futs = [self.pool.submit(self._run, k, query, a, b)
                for k, (a, b) in enumerate(_chunks(self.n, self.workers))]
        return np.concatenate([f.result() for f in futs])

    def close(self):
        self.pool.shutdown()


# ----------------------------------------------------------------------------- reporting
def _atomic_write(path: str, write):
    tmp = f"{path}.tmp{os.getpid()}"
    try:
        write(tmp)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def write_outputs(outdir, rows, meta, peers):
    os.makedirs(outdir, exist_ok=True)
    cols = ["query", "length", "clalign_s", "clalign_gcups"]
    for p in peers:
        cols += [f"{p}_s", f"{p}_gcups"]
    if peers:
        cols += ["ratio_to_best_peer"]

    def wcsv(tmp):
        with open(tmp, "w", newline="") as fh:
            w = csv.DictWriter(fh, fieldnames=cols, extrasaction="ignore")
            w.writeheader()
            for r in rows:
                w.writerow({k: (f"{v:.6g}" if isinstance(v, float) else v) for k, v in r.items()})

    def wjson(tmp):
        # the clalign-results-1 layout (clalign.runtime.harness.result_doc): meta, device, rows
        with open(tmp, "w") as fh:
            json.dump({"format": "clalign-results-1", "meta": meta, "device": meta.get("device_key"),
                       "rows": rows}, fh, indent=1)

    _atomic_write(os.path.join(outdir, "sw_bench.csv"), wcsv)
    _atomic_write(os.path.join(outdir, "sw_bench.json"), wjson)
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("bench_sw: matplotlib not installed, no PNG written", file=sys.stderr)
        return
    fig, ax = plt.subplots(figsize=(7, 4.2))
    lens = [r["length"] for r in rows]
    for name, style in [("clalign", "o-")] + [(p, "s--") for p in peers]:
        ys = [r.get(f"{name}_gcups") for r in rows]
        if any(y is not None for y in ys):
            ax.plot(lens, ys, style, label=name if name != "clalign" else f"clalign ({meta['device_short']})")
    ax.set_xlabel("query length (aa)")
    ax.set_ylabel("GCUPS")
    ax.set_title(f"SW database search, {meta['n']:,} seqs / {meta['residues'] / 1e6:.1f} M residues, "
                 f"{meta['matrix']} {meta['gapopen']}/{meta['gapextend']}", fontsize=9)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    _atomic_write(os.path.join(outdir, "sw_bench.png"), lambda tmp: fig.savefig(tmp, dpi=120, format="png"))
    plt.close(fig)


def print_table(rows, peers, out=sys.stdout):
    head = f"{'query':<12} {'len':>5} {'clalign s':>10} {'GCUPS':>8}"
    for p in peers:
        head += f" {p + ' s':>11} {'GCUPS':>8}"
    if any("ratio_to_best_peer" in r for r in rows):
        head += f" {'ratio':>6}"
    print(head, file=out)
    for r in rows:
        line = f"{r['query'][:12]:<12} {r['length']:>5} "
        line += (f"{r['clalign_s']:>10.3f} {r['clalign_gcups']:>8.2f}" if "clalign_s" in r
                 else f"{'-':>10} {'-':>8}")
        for p in peers:
            line += f" {r[p + '_s']:>11.3f} {r[p + '_gcups']:>8.2f}"
        if "ratio_to_best_peer" in r:
            line += f" {r['ratio_to_best_peer']:>6.2f}"
        print(line, file=out)


# ----------------------------------------------------------------------------- main
def parse_args(argv=None):
    ap = argparse.ArgumentParser(
        description="Smith-Waterman database-search benchmark: clalign (and CPU peers on a CPU device).",
        epilog="Gap costs as BLAST+: a gap of length k costs gapopen + k*gapextend.")
    ap.add_argument("-n", type=int, default=570000, help="database sequences to generate (default 570000)")
    ap.add_argument("--seed", type=int, default=1, help="database generator seed (default 1)")
    ap.add_argument("--queries", default=None,
                    help="query FASTA (default: the 20 CUDASW++ queries, tests/data/cudasw/cudasw_queries.fasta)")
    ap.add_argument("--max-queries", type=int, default=None,
                    help="use at most this many queries, evenly spread over the length range")
    ap.add_argument("--device", default=None, help="OpenCL device 'P:D' (default: clalign's choice)")
    ap.add_argument("--out", default=None, help="directory for sw_bench.csv/.png/.json")
    ap.add_argument("--no-peers", action="store_true", help="do not run parasail/pyopal")
    ap.add_argument("--no-clalign", action="store_true", help="time only the peers (no OpenCL needed)")
    ap.add_argument("--peers", action="store_true",
                    help="run the peers on the host cores even when clalign uses a GPU")
    ap.add_argument("--matrix", default="BLOSUM62", help="scoring matrix (default BLOSUM62)")
    ap.add_argument("--gapopen", type=int, default=11, help="gap open cost (default 11)")
    ap.add_argument("--gapextend", type=int, default=1, help="gap extension cost (default 1)")
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1,
                    help="host workers for the peers (default: all cores)")
    ap.add_argument("--check", type=int, default=200,
                    help="database sequences per query checked against parasail (default 200; 0: off)")
    args = ap.parse_args(argv)
    if args.n < 1 or args.threads < 1 or args.check < 0:
        ap.error("-n and --threads must be positive, --check non-negative")
    if args.max_queries is not None and args.max_queries < 1:
        ap.error("--max-queries must be positive")
    if args.gapopen < 0 or args.gapextend < 1:
        ap.error("--gapopen must be >= 0 and --gapextend >= 1")
    if args.no_clalign and args.no_peers:
        ap.error("--no-clalign and --no-peers leave nothing to run")
    if args.peers and args.no_peers:
        ap.error("--peers and --no-peers contradict each other")
    return args


def run(args) -> int:
    log = lambda msg: print(f"bench_sw: {msg}", file=sys.stderr, flush=True)  # noqa: E731
    queries = pick_queries(read_queries(args.queries or default_queries()), args.max_queries)

    sw_scores = cdata = device_key_ = None
    devdesc, is_cpu = "none (peers only)", True
    if not args.no_clalign:
        sw_scores, cdata = import_clalign()
        devdesc, is_cpu = device_info(args.device)
        from clalign.runtime import Runtime
        from clalign.runtime.tuning_db import device_key
        device_key_ = device_key(Runtime.get(args.device).caps)
        log(f"device: {devdesc}")
    use_peers = not args.no_peers and (is_cpu or args.no_clalign or args.peers)
    if not args.no_peers and not use_peers:
        log("not a CPU device: peers skipped (--peers runs them on the host cores anyway)")

    db = SynthDB(args.n, args.seed)
    log(f"database: {db.n} sequences, {db.total} residues (mean {db.total / db.n:.1f}), "
        f"generated in {db.gen_seconds:.1f} s")
    meta = {"date": datetime.date.today().isoformat(), "command": " ".join([os.path.basename(sys.argv[0])] + sys.argv[1:]),
            "host": platform.node(), "cpus": os.cpu_count(), "device": devdesc,
            "device_short": devdesc.split(" (")[0], "device_key": device_key_, "n": db.n, "seed": db.seed,
            "residues": db.total, "matrix": args.matrix, "gapopen": args.gapopen,
            "gapextend": args.gapextend, "queries": [q[0] for q in queries]}
    rows = [{"query": name, "length": len(seq)} for name, seq in queries]
    results: dict[str, list[np.ndarray]] = {}

    # --- clalign
    if sw_scores is not None:
        run_sw = ClalignRunner(sw_scores, args.matrix, args.gapopen, args.gapextend, args.device)
        with tempfile.TemporaryDirectory(prefix="bench_sw_") as tmp:
            fasta = os.path.join(tmp, "db.fasta")
            t = time.perf_counter()
            db.write(fasta)
            cdb = open_clalign_db(cdata, fasta)
            meta["clalign_db_load_s"] = time.perf_counter() - t
            perm = _db_order(cdb, db.n)
            # Warm-up database: 200 first sequences + the 10 longest (long-subject code paths).
            pick = np.unique(np.concatenate([np.arange(min(200, db.n)),
                                             np.argsort(db.lengths, kind="stable")[-10:]]))
            if hasattr(cdb, "subset"):
                wdb = cdb.subset(pick if perm is None else perm[pick])
            else:
                wfasta = os.path.join(tmp, "warm.fasta")
                db.write(wfasta, pick)
                wdb = open_clalign_db(cdata, wfasta)
            t = time.perf_counter()
            wsc = run_sw(queries[0][1], wdb)
            meta["clalign_first_call_s"] = time.perf_counter() - t
            # verified before anything is timed: a wrong clalign is reported, never timed
            bad = verify_clalign(cdata, queries[0], wdb, wsc, args)
            if bad:
                raise BenchError(f"clalign's scores are wrong, nothing timed: {bad}")
            t = time.perf_counter()
            for _, seq in queries[1:]:
                run_sw(seq, wdb)
            meta["clalign_warmup_rest_s"] = time.perf_counter() - t
            # Then one full-database call, so the timed scans start with the database on the
            # device as CUDASW++ does (the engine keeps a database that fits resident).
            t = time.perf_counter()
            run_sw(queries[0][1], cdb)
            meta["clalign_first_full_call_s"] = time.perf_counter() - t
            log(f"clalign: database load {meta['clalign_db_load_s']:.1f} s, first call (builds) "
                f"{meta['clalign_first_call_s']:.2f} s, warm-up of the other queries "
                f"{meta['clalign_warmup_rest_s']:.2f} s ({len(pick)} subjects), first full-database "
                f"call (incl. upload) {meta['clalign_first_full_call_s']:.2f} s")
            results["clalign"] = []
            for row, (name, seq) in zip(rows, _progress(queries, "clalign")):
                t = time.perf_counter()
                sc = run_sw(seq, cdb)
                dt = time.perf_counter() - t
                if sc.shape != (db.n,):
                    raise BenchError(f"sw_scores returned shape {sc.shape}, expected ({db.n},)")
                results["clalign"].append(sc if perm is None else sc[perm])
                row["clalign_s"], row["clalign_gcups"] = dt, len(seq) * db.total / dt / 1e9
                if not sys.stderr.isatty():  # progress for logs (a tty gets the tqdm bar)
                    log(f"clalign {name} ({len(seq)} aa): {dt:.3f} s, {row['clalign_gcups']:.2f} GCUPS")
            del cdb, wdb

    # --- peers
    peers = []
    if use_peers:
        seqs = db.seqs
        for cls in (ParasailPeer, PyopalPeer):
            try:
                t = time.perf_counter()
                peer = cls(seqs, args.matrix, args.gapopen, args.gapextend, args.threads)
                setup = time.perf_counter() - t
            except ImportError as exc:
                log(f"{cls.name} not installed ({exc}); skipped")
                continue
            meta[f"{peer.name}_version"], meta[f"{peer.name}_setup_s"] = peer.version, setup
            peer.scores(queries[0][1][:50])  # warm-up: pool start, profile code paths
            try:
                results[peer.name] = []
                for row, (name, seq) in zip(rows, _progress(queries, peer.name)):
                    t = time.perf_counter()
                    sc = peer.scores(seq)
                    dt = time.perf_counter() - t
                    results[peer.name].append(sc)
                    row[f"{peer.name}_s"], row[f"{peer.name}_gcups"] = dt, len(seq) * db.total / dt / 1e9
            finally:
                peer.close()
            peers.append(peer.name)

    # --- score agreement
    mismatches = {}
    names = list(results)
    for other in names[1:]:
        bad = sum(int(np.count_nonzero(a != b)) for a, b in zip(results[names[0]], results[other]))
        mismatches[f"{names[0]} vs {other}"] = bad
    if "clalign" in results and "parasail" not in results and args.check:
        try:
            peer = ParasailPeer(db.seqs, args.matrix, args.gapopen, args.gapextend, 1)
        except ImportError:
            log("parasail not installed: sample check skipped")
        else:
            rng = np.random.default_rng(12345)
            sample = np.sort(rng.choice(db.n, size=min(args.check, db.n), replace=False))
            bad = 0
            for (name, seq), sc in zip(queries, results["clalign"]):
                bad += int(np.count_nonzero(peer.scores(seq, subset=sample) != sc[sample]))
            mismatches[f"clalign vs parasail (sample of {len(sample)})"] = bad
    meta["mismatches"] = mismatches

    # --- summary
    cells = sum(len(q[1]) for q in queries) * db.total
    overall = {}
    for name in names:
        secs = sum(r[f"{name}_s"] for r in rows)
        overall[name] = {"seconds": secs, "gcups": cells / secs / 1e9}
    if "clalign" in results and peers:
        for r in rows:
            r["ratio_to_best_peer"] = r["clalign_gcups"] / max(r[f"{p}_gcups"] for p in peers)
        best = max(peers, key=lambda p: overall[p]["gcups"])
        overall["ratio_to_best_peer"] = {"peer": best,
                                         "ratio": overall["clalign"]["gcups"] / overall[best]["gcups"]}
    meta["overall"] = overall

    print(f"# {meta['date']}  device: {devdesc}  host cpus: {meta['cpus']}")
    print(f"# database: {db.n} synthetic sequences (seed {db.seed}), {db.total} residues; "
          f"{args.matrix} gapopen {args.gapopen} gapextend {args.gapextend}; {len(queries)} queries")
    print_table(rows, peers)
    for name in names:
        print(f"overall {name}: {overall[name]['gcups']:.2f} GCUPS ({overall[name]['seconds']:.2f} s)")
    if "ratio_to_best_peer" in overall:
        o = overall["ratio_to_best_peer"]
        print(f"overall clalign / best peer ({o['peer']}): {o['ratio']:.2f}x")
    if "clalign_first_call_s" in meta:
        print(f"clalign first call (kernel builds, small db): {meta['clalign_first_call_s']:.2f} s; "
              f"first full-database call (incl. upload): {meta['clalign_first_full_call_s']:.2f} s; "
              f"database load: {meta['clalign_db_load_s']:.2f} s")
    for k, v in mismatches.items():
        print(f"score check {k}: {'identical' if v == 0 else f'{v} MISMATCHES'}")
    if args.out:
        write_outputs(args.out, rows, meta, peers)
        log(f"wrote {os.path.join(args.out, 'sw_bench.csv')}, .json, .png")
    return 1 if any(mismatches.values()) else 0


def _progress(items, desc):
    try:
        from tqdm import tqdm
    except ImportError:
        return items
    return tqdm(items, desc=desc, file=sys.stderr, disable=not sys.stderr.isatty(), leave=False)


def main(argv=None) -> int:
    args = parse_args(argv)
    try:
        return run(args)
    except BenchError as exc:
        print(f"bench_sw: error: {exc}", file=sys.stderr)
        return 2
    except Exception as exc:
        # clalign's own errors (input, device, kernel build) are reported, not traced back.
        if type(exc).__module__.startswith("clalign"):
            print(f"bench_sw: error: clalign: {type(exc).__name__}: {exc}", file=sys.stderr)
            return 2
        raise


if __name__ == "__main__":
    sys.exit(main())
