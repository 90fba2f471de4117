"""Running a search on one or several devices.

One device: the database goes through in batches (the next uploaded on a copy queue while the
current one is searched); a database that fits in one batch stays on the device between calls.
Several devices (``--device 0:0,0:1``; the same device may be listed twice) and enough queries:
the queries are dealt whole, longest first, each to the device that would finish it first by
its measured rate (:func:`plan_queries`), and every device runs its queries against the whole
database exactly as one device does (the database resident, the long subjects in one intra-task
launch per query beside the first pass). That is used when the plan's slowest device is within
``QUERY_SLACK`` of an even split: two H100s ran the 20 CUDASW++ queries 1.96x faster than one
this way, against 1.20x splitting the database (docs/perf/sw.md, X4-X5; there each range ran
every query's intra-task launch on its own few long subjects, and the intra-task kernel's summed
seconds rose 7x; the cause was not isolated). Otherwise (one query, or a few of very different
lengths) the database is split: each worker first
takes a contiguous range of the database proportional to its measured first-pass rate (90 % of
the work in all), then ever smaller ranges of what is left (guided self-scheduling, still
weighted by rate) until none is left, so a device that runs slower than its rate said is
compensated at the end and a slow one only gets pieces it finishes in time. Work is counted in
estimated seconds, not residues: a subject above the intra-task threshold costs its residues at
the intra-task rate (about half the first pass's). Pieces stay large (at least 1/16 of a worker's
share): each piece runs every query with its own launches (two H200s: 1/64 pieces 2.67 s, these
2.32 s, one H200 2.87 s; docs/perf/sw.md). A device whose
measured rate is below ``MIN_RATE`` of the fastest one's is left out (a 16-core PoCL CPU beside
an H100 made the search slower: the range it took held long subjects it ran far below its rate
on uniform sequences), so adding a device never makes a search slower by design. Scores land in database
order whatever device computed them, so the output is identical to one device's.
"""
from __future__ import annotations

import threading
import time
from collections import deque

import numpy as np

from .threshold import device_rates

MIN_RATE = 0.1          # a device below this fraction of the fastest one's rate is left out
FIRST_SHARE = 0.9       # fraction of the work handed out by rate up front
TAIL_SHARE = 0.5        # later requests: this fraction of what is left, times the rate share
MIN_PIECES = 16         # a piece holds at least 1/16 of the worker's rate share of the work
QUERY_SLACK = 0.1       # queries are dealt whole when no device gets 10 % more than an even split


def _run_range(worker, queries, db, start, stop, results, seconds, bar, lock, on_query=None, index=None):
    """Every query against subjects ``start:stop`` on one worker (batched; each batch's kernel
    split chosen from its own lengths, so a range never keeps a tail of long lanes). ``index``:
    the position in ``results``/``seconds``/``on_query`` of each of ``queries`` (default: its own)."""
    batches = worker.plan_batches(db, start, stop)
    whole = start == 0 and stop == len(db) and len(batches) == 1
    res = worker.resident
    if not (whole and res is not None and res[0] is db
            and res[1].threshold == worker.threshold_for(np.asarray(db.lengths))):
        worker.resident = None
        res = None
    nxt = res[1] if res is not None else (worker.upload(db, *batches[0]) if batches else None)
    if whole and res is None and nxt is not None:
        worker.resident = (db, nxt)
    ids = getattr(db, "ids", None)
    t_busy = time.perf_counter()
    for bi in range(len(batches)):
        cur = nxt
        # The next batch goes up on the copy queue while this one is searched.
        nxt = worker.upload(db, *batches[bi + 1]) if bi + 1 < len(batches) else None
        residues = int(cur.lengths.sum(dtype=np.int64))
        depth = worker.pipeline_depth()
        flight = deque()            # (query index, job): up to ``depth`` queries queued on the device
        t_prev = time.perf_counter()
        for qi in range(len(queries) + depth):
            if qi < len(queries):
                qid, codes = queries[qi]
                flight.append((qi, worker.begin(cur, codes, qid, ids, slot=qi % depth, block=depth == 1)))
            if len(flight) < depth and qi < len(queries):
                continue
            if not flight:
                break
            k, job = flight.popleft()
            if index is not None:
                k = index[k]
            results[k][cur.start:cur.start + cur.n] = worker.end(job)
            # each query is charged the wall time since the previous one finished (the sum is the
            # range's wall time, also with queries overlapping on the device)
            t_now = time.perf_counter()
            with lock:
                seconds[k] += t_now - t_prev
                if bar is not None:
                    bar.update(len(job.qcodes) * residues)
            t_prev = t_now
            if on_query is not None and bi == len(batches) - 1:
                on_query(k, results[k])
        del cur
    worker.busy_seconds += time.perf_counter() - t_busy


class _Dealer:
    """Hands out contiguous database ranges (guided self-scheduling weighted by rate): a worker
    asking for work gets ``frac`` of the remaining residues times its share of the summed rates,
    ``FIRST_SHARE`` on its first request and ``TAIL_SHARE`` later, so the ranges shrink towards
    the end and a slow device is never handed more than it can finish while the others work."""

    def __init__(self, db, rates, cost=None):
        """``cost``: estimated work per subject (default: its residues)."""
        if cost is None:
            cost = np.diff(np.asarray(db.offsets, dtype=np.int64))
        self.cum = np.zeros(len(db) + 1, dtype=np.float64)
        np.cumsum(cost, out=self.cum[1:])
        self.n = len(db)
        self.cursor = 0
        self.share = np.asarray(rates, dtype=np.float64) / float(np.sum(rates))
        self.lock = threading.Lock()

    def next(self, k, first):
        with self.lock:
            a = self.cursor
            if a >= self.n:
                return None
            left = float(self.cum[-1] - self.cum[a])
            share = self.share[k]
            want = max((FIRST_SHARE if first else TAIL_SHARE) * left * share, self.cum[-1] * share / MIN_PIECES)
            b = int(np.searchsorted(self.cum, self.cum[a] + want, side="left"))
            self.cursor = b = min(self.n, max(a + 1, b))
            return a, b


def subject_costs(worker, db, rates) -> np.ndarray:
    """Estimated seconds per subject (to a common factor): residues over the first-pass rate, or
    over the intra-task rate above the threshold ``worker`` would choose for the whole database."""
    lengths = np.asarray(db.lengths, dtype=np.float64)
    thr = worker.threshold_for(np.asarray(db.lengths))
    return np.where(lengths > thr, lengths / rates["intra"], lengths / rates["inter"])


def plan_queries(qlens, rates) -> tuple:
    """Queries dealt whole to devices: longest first, each to the device that would finish it
    first at its rate (every device searches the whole database, so a query costs its length
    over the rate). Returns (query positions per device, in the order given; the slowest
    device's estimated time over an even split's)."""
    qlens = np.asarray(qlens, dtype=np.float64)
    rates = np.asarray(rates, dtype=np.float64)
    load = np.zeros(len(rates))
    plan = [[] for _ in rates]
    for qi in np.argsort(-qlens, kind="stable"):
        finish = load + qlens[qi] / rates
        k = int(np.argmin(finish))
        load[k] = finish[k]
        plan[k].append(int(qi))
    ideal = float(qlens.sum() / rates.sum())
    return [sorted(p) for p in plan], (float(load.max()) / ideal if ideal > 0 else 1.0)


def search_devices(workers, queries, db, bar, on_query=None):
    """(results, seconds per query, per-device report) of every query against ``db``. The report
    has one (label, count, "subjects" | "queries", cells, busy seconds) per device."""
    n = len(db)
    results = [np.zeros(n, dtype=np.int32) for _ in queries]
    seconds = [0.0] * len(queries)
    lock = threading.Lock()
    for w in workers:
        w.busy_seconds, w.cells, w.subjects = 0.0, 0, 0
    if len(workers) == 1 or n == 0:
        w = workers[0]
        _run_range(w, queries, db, 0, n, results, seconds, bar, lock, on_query)
        w.subjects = n
        return results, seconds, [(w.rt.label, n, "subjects", w.cells, w.busy_seconds)]
    rates = [device_rates(w) for w in workers]
    plan, excess = plan_queries([len(c) for _, c in queries], [r["inter"] for r in rates])
    t0 = time.perf_counter()
    if excess <= 1 + QUERY_SLACK:
        _split_queries(workers, queries, db, plan, results, seconds, bar, lock, on_query)
        report = [(f"[{k}] {w.rt.label}", len(plan[k]), "queries", w.cells, w.busy_seconds)
                  for k, w in enumerate(workers)]
    else:
        _split_database(workers, queries, db, rates, results, seconds, bar, lock)
        if on_query is not None:
            for qi in range(len(queries)):
                on_query(qi, results[qi])
        report = [(f"[{k}] {w.rt.label}", w.subjects, "subjects", w.cells, w.busy_seconds)
                  for k, w in enumerate(workers)]
    # per-query seconds summed over devices that ran in parallel: share the wall time by query length
    wall = time.perf_counter() - t0
    qsum = max(1, sum(len(c) for _, c in queries))
    seconds = [wall * len(c) / qsum for _, c in queries]
    return results, seconds, report


def _threads(workers, work):
    """Run ``work(k)`` for every worker on its own thread; the first error is raised here."""
    errors = []

    def run(k):
        try:
            work(k, errors)
        except BaseException as exc:       # re-raised in the caller's thread
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(k,), name=f"clalign-sw-{k}") for k in range(len(workers))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]


def _split_queries(workers, queries, db, plan, results, seconds, bar, lock, on_query):
    """Each worker runs its queries of ``plan`` against the whole database; a query's scores go
    to ``on_query`` as soon as they are complete (under ``lock``: one caller at a time)."""
    def done(qi, scores):
        with lock:
            on_query(qi, scores)

    def work(k, errors):
        mine = plan[k]
        if mine:
            _run_range(workers[k], [queries[i] for i in mine], db, 0, len(db), results, seconds, bar, lock,
                       done if on_query is not None else None, index=mine)

    _threads(workers, work)


def _split_database(workers, queries, db, rates, results, seconds, bar, lock):
    """Every query against database ranges dealt to the workers (:class:`_Dealer`)."""
    dealer = _Dealer(db, [r["inter"] for r in rates], subject_costs(workers[0], db, rates[0]))

    def work(k, errors):
        w = workers[k]
        first = True
        while not errors:
            got = dealer.next(k, first)
            if got is None:
                break
            first = False
            _run_range(w, queries, db, got[0], got[1], results, seconds, bar, lock)
            w.subjects += got[1] - got[0]

    _threads(workers, work)
