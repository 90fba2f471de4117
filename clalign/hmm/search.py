"""``hmmsearch`` with the MSV filter on an OpenCL device and the remaining stages in pyhmmer.

Pipeline, per model (HMMER's acceleration pipeline, p7_pipeline.c):

1. our HMMER-exact MSV byte profile (:func:`build_msv_profile`) scores every target on the
   device (:func:`clalign.hmm.engine.msv_scores`, nats per target);
2. :func:`clalign.hmm.pvalue.msv_pass` keeps the targets whose MSV P-value is <= F1
   (HMMER's null model and Gumbel survival, target lengths as HMMER counts them);
3. only those go to pyhmmer (HMMER 3.4) as a ``DigitalSequenceBlock``, with ``Z`` = the
   number of sequences in the whole database: pyhmmer re-runs MSV on them (same result), then
   the bias filter, Viterbi, Forward and domain definition. Every later stage depends only on
   the target itself and on Z, so hits, scores, E-values and domZ equal a full hmmsearch.
   On a GPU, for searches of at least :data:`clalign.hmm.vit_search.GPU_MIN_WORK` cells, the
   bias, Viterbi and Forward filters of step 3 run on the device too
   (:mod:`clalign.hmm.vit_search`), and pyhmmer gets only the targets past them all (its
   filters set to pass them) and those near a threshold (its own).

Why it is exact even at the F1 boundary: step 2 keeps a *superset* of HMMER's passing set
(a 0.001-bit slack absorbs float rounding), and pyhmmer applies HMMER's own MSV test again.

Target lengths: HMMER reads a trailing ``*`` (stop) as a residue (the nonresidue symbol) and
counts it in L, the null model and the MSV length model; clalign's FASTA reader strips it
but keeps how many it stripped per record (``Database.stops``, saved in prepared databases
too). We give HMMER's view: L + stops, and the ``*`` residues appended for pyhmmer. Only a
database prepared before the counts were saved (or built from plain strings) has zeros there:
rebuild it with ``clalign makedb`` to reproduce hmmsearch on files with terminal stops.
"""
from __future__ import annotations

import os
import queue
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from ..errors import InputError
from .hmmpool import read_all
from .profile import build_msv_profile
from .options import SearchOptions
from .pvalue import msv_pass
from .pyhmmer_adapter import merged_counts, pipeline_counts, same_name as _same_name
from .tables import _name_bytes, wide_threshold
from .search_parts import (ModelResult, SearchStats, _check_targets, _hmmer_lengths,  # noqa: F401
                           _pool, _pyhmmer_models)
from .startup import (Loading as _Loading, early_prebuild as _early_prebuild, residues_early as _residues_early,
                      residues_guess as _residues_guess)
from ..switch import short_switch as _short_switch
from .targets import (Targets as _Targets, block as _block,  # noqa: F401 (the hand-off; cpusearch)
                      prebuild_all as _prebuild_all)

#: Bits added to the device MSV score before the F1 test (superset guarantee; see module doc).
SLACK_BITS = 1e-3


#: Models the MSV stage may run ahead of the main loop (its results, each model's survivor
#: indices and plan, ~2 % of the targets, wait in a queue). Deep enough that the stage works
#: through the main loop's start (pyhmmer's model parse, every target's sequence built).
MSV_AHEAD = 32
#: Threads of the MSV stage on the S-lane (GPU) path, each with its own command queue: while
#: some wait for their kernels the others do their host work (the byte test, the bias filter,
#: profiles, uploads, decisions: ~60 ms of CPU per model at 572,100 targets against ~15 ms of
#: kernels on the H100), so the device is not idle between models. None: from the search's
#: threads (:func:`stage_workers`). The striped CPU kernel keeps one.
MSV_WORKERS: int | None = None


def stage_workers(cpus: int) -> int:
    """Device-stage threads for a search of ``cpus`` threads: half of them, 2 to 8 (the
    stage's host work is mostly numpy and compiled loops without the GIL; the bias filter
    spreads over a pool of its own, :mod:`clalign.hmm.vit_bias`)."""
    return MSV_WORKERS or max(2, min(8, int(cpus) // 2))

#: Fewest passing targets per pyhmmer task: a model's survivors are cut into up to ``cpus``
#: parts of at least this many, searched in parallel and merged (as HMMER's threads do).
MIN_PART = 256


def hmmsearch(hmmfile, seqdb, *, F1: float = 0.02, E: float = 10.0, Z: float | None = None, domE: float = 10.0,
              incE: float = 0.01, incdomE: float = 0.01, cpus: int = 1, device=None, msv_scores=None,
              progress: bool = False, min_part: int = MIN_PART, options: SearchOptions | None = None,
              engine: str = "auto"):
    """Search every model of ``hmmfile`` against ``seqdb``; yields :class:`ModelResult` in model order.

    ``seqdb``: FASTA path (plain/gzip), prepared clalign database path, or ``Database``.
    Thresholds as hmmsearch's options (validated by :class:`SearchOptions`, ``cpus`` 0 = all
    cores), or one ``options`` object instead of them. ``engine``: the MSV filter's engine,
    "opencl", "pyhmmer" (the whole search in pyhmmer, :mod:`clalign.hmm.cpusearch`) or "auto"
    (the faster by measured rate, :func:`clalign.hmm.choice.choose_filter`); a custom
    ``msv_scores`` always runs on the OpenCL path.
    ``msv_scores``: the device MSV scorer (default :func:`clalign.hmm.engine.msv_scores`); it
    must score each target as HMMER reads it (trailing stops counted, as that one does).
    ``min_part``: see :data:`MIN_PART`. The ``stats`` attribute of the returned iterable is
    filled as results come.
    """
    if options is None:
        options = SearchOptions(E=E, domE=domE, incE=incE, incdomE=incdomE, F1=F1, Z=Z, cpus=cpus)
    reason = "custom MSV scorer"
    if msv_scores is None:
        from .choice import choose_filter

        choice = choose_filter(engine, device, options.threads)
        if choice.engine == "pyhmmer":
            from .cpusearch import PyhmmerSearch

            return PyhmmerSearch(hmmfile, seqdb, options, choice.reason, progress, min_part=min_part)
        reason = choice.reason
    search = _Search(hmmfile, seqdb, options, device=device, msv_scores=msv_scores, progress=progress,
                     min_part=min_part)
    search.stats.engine = reason
    return search


def _merged(parts) -> tuple:
    """(the parts' TopHits merged, their thread seconds summed) of :meth:`_Search._pyhmmer_part` results."""
    hits = parts[0][0] if len(parts) == 1 else parts[0][0].merge(*(p[0] for p in parts[1:]))
    return hits, sum(p[1] for p in parts)


class _Pending:
    """A model on its way through pyhmmer: ``model`` = (hmm, pyhmmer hmm, passing indices,
    futures of its parts); ``final``: futures of its second pass (None until submitted)."""

    def __init__(self, model):
        self.model = model
        self.final = None
        self.hits = self.counts = None
        self.plan = None            # clalign.hmm.vit_search's plan when the device ran Viterbi
        self.seconds = 0.0
        self.width = 0
        self.error = None           # raised by the main loop when it reaches this model
        self.ready = threading.Event()          # the second pass ran (or failed)
        self._left = len(model[3])
        self._lock = threading.Lock()

    def part_done(self) -> bool:
        """Count one finished part; True for the last."""
        with self._lock:
            self._left -= 1
            return self._left == 0

    def done(self) -> bool:
        return self.ready.is_set() and (self.error is not None or all(f.done() for f in self.final))


class _Search:
    """Iterable search (see :func:`hmmsearch`); ``stats`` holds the totals."""

    def __init__(self, hmmfile, seqdb, options: SearchOptions, *, device, msv_scores, progress,
                 min_part=MIN_PART):
        self.options = options
        #: database block layouts (and their device copies) per geometry, for this search's models
        self.layouts: dict = {}
        with _short_switch():
            self._start(hmmfile, seqdb, options, device, msv_scores)
        self.hmmfile, self.seqdb = hmmfile, seqdb
        self.lengths, self.stops = _hmmer_lengths(self.db)
        self.Z = float(len(self.db)) if options.Z is None else float(options.Z)
        self.z_fixed = options.Z is not None
        self.msv_scores = msv_scores
        self.progress = progress
        self.min_part = max(1, int(min_part))
        self._targets = None
        self._vit = None            # clalign.hmm.vit_search.DeviceViterbi, or False: pyhmmer runs Viterbi
        self._local = threading.local()
        self._stats_lock = threading.Lock()
        self._slane = msv_scores is None and any("values" in ov for ov in self.layout)   # the GPU path
        if self._slane and len(self.db):      # the layouts are filled on the device from them
            _residues_early(self.layouts, device, self.db)
        self.stats = SearchStats(models=len(self.hmms), nodes=sum(h.M for h in self.hmms),
                                 sequences=len(self.db), residues=int(self.lengths.sum()),
                                 load_seconds=self._load_seconds)
        self._build_all = bool(len(self.db)) and _prebuild_all(len(self.hmms), options.F1)   # in __iter__

    def _start(self, hmmfile, seqdb, options, device, msv_scores):
        """The database read in a thread while the models are read and their kernels built."""
        loading = _Loading.take(seqdb)
        from .layouts import layouts_ahead             # (pyopencl: after the read has begun)

        early = _early_prebuild(hmmfile, seqdb, device, options.threads) if msv_scores is None else None
        if early is not None:       # the S-lane layouts of that plan, as soon as the database is read
            loading.then(lambda db: layouts_ahead(db, early[1], device, self.layouts))
        planned_early = False       # the models' plan is the one made from the file's LENG lines
        self.hmms = read_all(hmmfile)        # in processes for a large file (clalign.hmm.hmmpool)
        for h in self.hmms:
            h.require_stats()      # every model calibrated, before any work
        self.cpus = options.threads
        self.device = device
        self.layout = [{} for _ in self.hmms]
        if msv_scores is None:   # every model's kernel, built side by side while the database loads
            from .engine import prebuild, shared_layout
            from .kernel_plan import plan_kernels
            Ms = [h.M for h in self.hmms]
            planned_early = early is not None and early[0] == Ms
            if planned_early:
                self.layout = early[1]
            else:    # one database layout for all models where possible, few programs for many models
                self.layout = plan_kernels(Ms, shared_layout(Ms, "msv", device), "msv", device,
                                           _residues_guess(seqdb))
                prebuild(Ms, "msv", device, threads=min(self.cpus, os.cpu_count() or 1), overrides=self.layout)
        self.db, self._load_seconds = loading.result()
        if self.db.alphabet.name.lower() not in ("protein", "amino"):
            raise InputError("hmmsearch needs a protein sequence database; this one is "
                             f"{self.db.alphabet.name}", seqdb if not hasattr(seqdb, "residues") else None)
        _check_targets(self.db, seqdb)
        if msv_scores is None and len(self.db) and not planned_early:   # this plan's layouts, made ahead too
            layouts_ahead(self.db, self.layout, device, self.layouts)

    def _pyhmmer_part(self, phmm, block, E=None, F2=None, counts=False, F3=None):
        """pyhmmer's pipeline (MSV again, bias, Viterbi, Forward, domains) on a block of one
        model's targets; returns (TopHits, thread seconds, its pipeline counts if ``counts``
        else None). pyhmmer releases the GIL here; the counts are read here too, not on the
        main loop (:func:`pipeline_counts` copies out the whole hit list).
        ``E``: another reporting threshold (the hit-list pass of :mod:`clalign.hmm.tables`);
        ``F2``/``F3``: 1.0 for targets whose Viterbi / Forward filter passed on the device
        (:mod:`clalign.hmm.vit_search`)."""
        import pyhmmer

        t0 = time.perf_counter()
        o = self.options
        pipeline = pyhmmer.plan7.Pipeline(phmm.alphabet, Z=self.Z, F1=o.F1, E=o.E if E is None else E,
                                          domE=o.domE, incE=o.incE, incdomE=o.incdomE,
                                          **({} if F2 is None else {"F2": F2}), **({} if F3 is None else {"F3": F3}))
        hits = pipeline.search_hmm(phmm, block)
        return hits, time.perf_counter() - t0, pipeline_counts(hits) if counts else None

    def _second_pass(self, item, pool):
        """Once a model's parts are done: merge them (pyhmmer ``TopHits.merge``: Z is fixed, so
        E-values are one search's; domZ, the number of reported targets, is their sum). Unless
        -Z fixed Z, the parts ran with E loosened to hold HMMER's whole hit list
        (:mod:`clalign.hmm.tables`): the name width comes from it, and the reported targets
        are submitted once more with the true E for the hits that are written (only these need
        their descriptions: the parts ran on bare sequences). Submitted as soon as the parts
        are done, so that no model's second pass waits for an earlier model's."""
        from .tables import listed_name_width, serial_list_width

        hmm, phmm, passing, futures = item.model
        try:
            parts = [f.result() for f in futures]
        except (RuntimeError, SystemError, ValueError) as exc:   # HMMER (pyhmmer) refused the model
            raise InputError(f"HMMER (pyhmmer) cannot search model {hmm.name!r}: {exc}", self.hmmfile,
                             hmm.line) from None
        hits, item.seconds = _merged(parts)
        st = merged_counts([p[2] for p in parts])          # pipeline_counts(hits), from the parts
        item.counts = st if item.plan is None else item.plan.counts(st)
        item.hits, item.final = hits, []
        if self.z_fixed:
            item.width = listed_name_width(hits)
            return
        where = self._targets.named({_name_bytes(h.name) for h in hits}, passing) if len(hits) else {}
        item.width, reported = serial_list_width(hits, lambda nm: int(where[nm].min()) + 1, self.options.E, self.Z)
        final = np.sort(np.concatenate([where[nm] for nm in reported])) if reported else np.zeros(0, np.int64)
        item.final = [pool.submit(self._final_part, phmm, part)
                      for part in np.array_split(final, max(1, min(self.cpus, final.size // 8)))]

    def _first_part(self, phmm, indices, E, F2, F3=None):
        """:meth:`_pyhmmer_part` (with counts) of a block the worker assembles from sequences
        built up front (:meth:`_prepare`): no sequence is made here, and the main loop does not
        wait on pyhmmer's block constructor (which releases the GIL: 3-6 s of the main loop in
        y16's 1,000-model profile)."""
        return self._pyhmmer_part(phmm, _block(self._targets, indices, phmm.alphabet, described=self.z_fixed),
                                  E, F2, True, F3)

    def _final_part(self, phmm, indices):
        """:meth:`_pyhmmer_part` of reported targets, their sequences (with descriptions) built
        here in the worker: a handful per model, whose construction on the main loop (each
        releases the GIL and waits for it back) took 7.5 s of the 1,000-model run (py-spy y16)."""
        return self._pyhmmer_part(phmm, _block(self._targets, indices, phmm.alphabet))

    def _model_result(self, item):
        """A model's :class:`ModelResult`, after its second pass (waits for it)."""
        item.ready.wait()
        if item.error is not None:
            raise item.error
        hmm, _, passing, _ = item.model
        hits = item.hits
        if not self.z_fixed:
            hits, seconds = _merged([f.result() for f in item.final])
            item.seconds += seconds
        st = item.counts
        return ModelResult(hmm=hmm, hits=hits, n_device_pass=int(passing.size), n_past_msv=st["n_past_msv"],
                           n_past_bias=st["n_past_bias"], n_past_vit=st["n_past_vit"],
                           n_past_fwd=st["n_past_fwd"], seconds=item.seconds, name_width=item.width)

    def _watch(self, item, pool):
        """Run the model's second pass in the pyhmmer worker that finishes its last part (a
        done-callback), so that the main loop only hands models out and yields results: on the
        main loop, the second passes took ~20 of its ~33 busy seconds in y16's 1,000-model run."""
        def on_done(_):
            if item.part_done():
                try:
                    self._second_pass(item, pool)
                except BaseException as exc:      # noqa: BLE001  (raised by the main loop, in model order)
                    item.error = exc
                finally:
                    item.ready.set()

        for f in item.model[3]:
            f.add_done_callback(on_done)

    def __iter__(self):
        t_start = time.perf_counter()
        bar = None
        if self.progress:
            from tqdm import tqdm
            bar = tqdm(total=len(self.hmms), unit="model", file=sys.stderr, disable=not sys.stderr.isatty())
        pending = []
        if self.msv_scores is None:
            self._device_viterbi()            # decided (and its kernels started) before the stage runs
        ahead = queue.Queue(maxsize=MSV_AHEAD)
        stop = threading.Event()
        stage = threading.Thread(target=self._msv_stage, args=(ahead, stop), name="clalign-msv", daemon=True)
        with _short_switch():
            stage.start()            # the first models' device work goes on while pyhmmer reads the file
            try:
                phmms = self._prepare()
                if len(phmms) != len(self.hmms) or not all(_same_name(p, h) for p, h in zip(phmms, self.hmms)):
                    raise InputError("pyhmmer reads this HMM file differently (model count or names differ)",
                                     self.hmmfile)
                yield from self._models(phmms, ahead, pending, bar)
            finally:
                stop.set()
                stage.join()
        if bar is not None:
            bar.close()
        self.stats.seconds = time.perf_counter() - t_start

    def _prepare(self) -> list:
        """pyhmmer's models, read while every target's sequence is built in a thread (where
        :func:`clalign.hmm.targets.prebuild_all` says so), both beside the stage's first models."""
        if not self._build_all:
            return _pyhmmer_models(self.hmmfile)
        from pyhmmer.easel import Alphabet

        self._targets = _Targets(self.db, self.stops)
        with ThreadPoolExecutor(1, thread_name_prefix="clalign-targets") as ex:
            built = ex.submit(self._targets.build_all, Alphabet.amino(), self.z_fixed)
            try:
                return _pyhmmer_models(self.hmmfile)
            finally:
                built.result()

    def _msv_stage(self, ahead, stop):
        """The device filters of every model (MSV, and the bias, Viterbi and Forward stage where it runs on
        the device), in order, in their own threads (:func:`stage_workers` on the GPU path), up
        to :data:`MSV_AHEAD` models ahead of the main loop: the device filters the next models
        while the main loop hands this one to pyhmmer (pyopencl, numpy and the compiled loops
        release the GIL while they wait or work). Puts (hmm, passing, (plan, groups)) per model
        in model order; an exception is put in its place and ends the stage."""
        def put(item):
            while not stop.is_set():
                try:
                    ahead.put(item, timeout=0.05)
                    return True
                except queue.Full:
                    continue
            return False

        from collections import deque

        workers = stage_workers(self.cpus) if self._slane else 1
        try:
            with ThreadPoolExecutor(workers, thread_name_prefix="clalign-msv") as ex:
                running = deque()
                for hmm, layout in zip(self.hmms, self.layout):
                    if stop.is_set():
                        return
                    running.append(ex.submit(self._msv_one, hmm, layout))
                    if len(running) >= workers and not put(running.popleft().result()):
                        return
                while running:
                    if not put(running.popleft().result()):
                        return
        except BaseException as exc:      # handed to the main loop, raised there in model order
            put(exc)

    def _msv_one(self, hmm, layout):
        """(hmm, passing database indices, (plan, groups)) of one model: the MSV survivors
        and, where the Viterbi stage runs on the device, its plan (:meth:`_viterbi_plan`; the
        MSV nats it needs are computed for the survivors only), else (None, None)."""
        t0 = time.perf_counter()
        profile = build_msv_profile(hmm)
        nats = None                           # MSV nats of the passing targets, for the Viterbi plan
        if self.msv_scores is None:           # ours: kernel time too, layouts in our cache
            from ..runtime import Runtime
            from .engine import msv_filter_run, msv_scores_run, msv_survivors_run
            from .kernel_choice import use_striped

            striped = use_striped(Runtime.get(self.device).caps, layout)
            own = {} if striped else {"queue": self._queue()}
            if self._vit and striped:   # CPU devices: scores of every target
                every, run = msv_scores_run(profile, self.db, device=self.device, cache=self.layouts, **layout)
                passing = np.flatnonzero(msv_pass(every, self.lengths, hmm, self.options.F1, slack_bits=SLACK_BITS)
                                         & (self.lengths > 0))
                nats = every[passing]
            elif self._vit:             # the survivors and their scores in one compiled pass
                passing, nats, run = msv_survivors_run(profile, hmm, self.db, self.options.F1, SLACK_BITS,
                                                       self.device, cache=self.layouts, **layout, **own)
            else:
                keep, run = msv_filter_run(profile, hmm, self.db, self.options.F1, SLACK_BITS, self.device,
                                           cache=self.layouts, **layout, **own)
                passing = np.flatnonzero(keep)
            with self._stats_lock:
                self.stats.kernel_seconds += run.seconds
                self.stats.cells += hmm.M * self.stats.residues
        else:
            every = self.msv_scores(profile, self.db, device=self.device, **layout)   # stops counted
            passing = np.flatnonzero(msv_pass(every, self.lengths, hmm, self.options.F1, slack_bits=SLACK_BITS)
                                     & (self.lengths > 0))
        with self._stats_lock:
            self.stats.device_seconds += time.perf_counter() - t0
        plan = self._viterbi_plan(hmm, nats, passing) if nats is not None else (None, None)
        return hmm, passing, plan

    def _queue(self):
        """This MSV thread's own command queue: each thread's read-back then waits for its own
        kernel only, not for the other thread's (one in-order queue would serialise them)."""
        q = getattr(self._local, "queue", None)
        if q is None:
            from ..runtime import Runtime

            q = self._local.queue = Runtime.get(self.device).new_queue()
        return q

    def _models(self, phmms, ahead, pending, bar):
        """The main loop: each model's filtered targets from the stage, handed to pyhmmer;
        yields the models' results in order as their second passes finish."""
        with _pool(self.cpus) as pool:
            for phmm in phmms:
                got = ahead.get()
                if isinstance(got, BaseException):
                    raise got
                hmm, passing, (plan, groups) = got
                # pyhmmer sequences are built here, not in the workers: building them holds the
                # GIL, and 16 workers queueing for it took 5-10x longer than this one thread
                # (H100 host, 100,000 proteins: 0.07 s here against 6.3-8.3 s summed over 16 workers).
                # Where every sequence was built up front, the workers only assemble their blocks.
                if self._targets is None:
                    self._targets = _Targets(self.db, self.stops)
                E = None if self.z_fixed or not passing.size else wide_threshold(
                    self.options.E, self.Z, int(passing[0]) + 1)
                jobs = []
                for members, F2, F3 in groups or [(passing, None, None)]:
                    k = max(1, min(self.cpus, members.size // self.min_part))
                    for part in np.array_split(members, k):
                        if self._build_all:        # every sequence built: the worker makes its block
                            jobs.append(pool.submit(self._first_part, phmm, part, E, F2, F3))
                            continue
                        block = _block(self._targets, part, phmm.alphabet, described=self.z_fixed)  # see _second_pass
                        jobs.append(pool.submit(self._pyhmmer_part, phmm, block, E, F2, True, F3))
                item = _Pending((hmm, phmm, passing, jobs))
                item.plan = plan
                pending.append(item)
                self._watch(item, pool)
                while pending and pending[0].done():
                    yield self._finish(self._model_result(pending.pop(0)), bar)
            for item in pending:
                yield self._finish(self._model_result(item), bar)

    def _device_viterbi(self) -> bool:
        """Whether the Viterbi filter runs on the device (:mod:`clalign.hmm.vit_search` decides,
        once per search; its DeviceViterbi is made here)."""
        if self._vit is None:
            from ..runtime import Runtime
            from .profile import EASEL_OF_CODE
            from .vit_search import DeviceViterbi, use_device_viterbi

            on = use_device_viterbi(Runtime.get(self.device).caps, work=float(self.stats.nodes) * self.stats.residues)
            self._vit = DeviceViterbi(self.db, np.asarray(self.db.residues), self.stops, self.options.F1,
                                      self.device, [h.M for h in self.hmms], threads=self.cpus,
                                      cmap=EASEL_OF_CODE, layouts=self.layouts if self._slane else None) if on else False
        return bool(self._vit)

    def _viterbi_plan(self, hmm, nats, passing):
        """(plan, groups) of :mod:`clalign.hmm.vit_search` when the Viterbi filter runs on the
        device (chosen there), else (None, None): pyhmmer runs it on every MSV survivor."""
        if not self._vit:
            return None, None
        t0 = time.perf_counter()
        plan = self._vit.plan(hmm, nats, passing, self.lengths)
        with self._stats_lock:
            self.stats.vit_seconds += time.perf_counter() - t0
        return (None, None) if plan is None else (plan, plan.groups)

    def _finish(self, res, bar):
        self.stats.device_pass += res.n_device_pass
        self.stats.past_msv += res.n_past_msv
        self.stats.pyhmmer_seconds += res.seconds
        self.stats.per_model.append(res)
        if bar is not None:
            bar.update(1)
        return res



from .report import write_report  # noqa: E402  (the search's outputs; clalign.hmm.cli)

__all__ = ["hmmsearch", "write_report", "ModelResult", "SearchStats"]
