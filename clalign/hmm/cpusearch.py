"""``hmmsearch`` entirely in pyhmmer (HMMER's SSE filters on the host): the engine
:func:`clalign.hmm.choice.choose_filter` picks where pyhmmer's MSV filter outruns the OpenCL one
(no GPU, e.g. PoCL on a laptop), so that clalign is never much slower than HMMER there.

Work is split as HMMER's threads split it: one task per model when there are at least as many
models as threads, else each model over ``threads`` consecutive parts of the database, merged
with ``TopHits.merge``. Z is left to pyhmmer (the number of targets, summed over the parts by
the merge) unless ``-Z`` fixes it, so E-values, reported sets and domZ are one search's. The
hit lists then hold what HMMER's serial pipeline lists (``P * i <= E``, i counted inside each
part, so a superset of HMMER's); :func:`_name_width` keeps only HMMER's members, with the
global position i, for the name columns (see :mod:`clalign.hmm.tables`).
"""
from __future__ import annotations

import gzip
import os
import sys
import time
from concurrent.futures import ThreadPoolExecutor

from ..errors import InputError
from .hmmfile import read_hmms
from .options import SearchOptions
from .pyhmmer_adapter import pipeline_counts
from .tables import _name_bytes, listed_name_width

#: Fewest sequences per database part when the models are fewer than the threads.
MIN_PART_SEQS = 256


def _open(path):
    return gzip.open(path, "rb") if open(path, "rb").read(2) == b"\x1f\x8b" else path


def read_targets(seqdb):
    """(pyhmmer DigitalSequenceBlock, seconds) of a FASTA file (HMMER's own reader: names,
    descriptions and '*' exactly as hmmsearch reads them) or of a prepared database."""
    from pyhmmer.easel import Alphabet, SequenceFile

    t0 = time.perf_counter()
    aa = Alphabet.amino()
    path = os.fspath(seqdb) if isinstance(seqdb, (str, os.PathLike)) else None
    if path is None or os.path.isdir(path):
        from ..data import as_database
        from .search import _Targets, _block, _check_targets
        import numpy as np

        db = as_database(seqdb)
        _check_protein(db.alphabet.name.lower() in ("protein", "amino"), db.alphabet.name, path)
        _check_targets(db, seqdb)
        block = _block(_Targets(db, db.stops), np.arange(len(db)), aa)
        return block, time.perf_counter() - t0
    try:
        with SequenceFile(_open(path), format="fasta") as sf:
            guess = sf.guess_alphabet()
        if guess is not None:
            _check_protein(guess.is_amino(), "nucleotide", path)
        with SequenceFile(_open(path), format="fasta", digital=True, alphabet=aa) as sf:
            block = sf.read_block()
    except (ValueError, EOFError, OSError) as exc:
        from ..data import as_database

        as_database(path)          # clalign's reader names the file and line of the problem
        raise InputError(f"HMMER cannot read this FASTA file: {exc}", path) from None
    if len(block) == 0:
        raise InputError("sequence database is empty (no sequences)", path)
    return block, time.perf_counter() - t0


def _check_protein(ok, name, path):
    if not ok:
        raise InputError(f"hmmsearch needs a protein sequence database; this one is {name}", path)


class _ModelInfo:
    """What the report needs of a model (name, M, accession, description), from pyhmmer's HMM."""

    def __init__(self, phmm):
        def text(x):   # as clalign's reader keeps them: the file's bytes, one char a byte (latin-1)
            if x is None:
                return None
            return (x if isinstance(x, bytes) else x.encode("utf-8")).decode("latin-1")

        self.name, self.acc, self.desc = text(phmm.name), text(phmm.accession), text(phmm.description)
        self.M = int(phmm.M)


def _models(hmmfile) -> list:
    """pyhmmer's HMMs of the file, each amino and calibrated. clalign's own reader checks the
    file first and names the file and line of any problem: HMMER's C reader (inside pyhmmer) can
    crash the process on a malformed file (the fuzz tests found one), so it only sees files ours
    accepts (~10 ms a model)."""
    import re

    from .hmmfile import _read_text
    from .search import _pyhmmer_models

    for h in read_hmms(hmmfile):                  # raises the precise error
        h.require_stats()
    try:
        phmms = _pyhmmer_models(hmmfile)
        text = _read_text(hmmfile)
        ok = (len(phmms) > 0 and all(p.alphabet.is_amino() for p in phmms)
              and len(re.findall(r"^STATS LOCAL MSV ", text, re.M)) == len(phmms) == text.count("\n//"))
    except (ValueError, EOFError, OSError):
        ok = False
    if not ok:
        raise InputError("HMMER cannot read this HMM file", hmmfile)
    return phmms


class PyhmmerSearch:
    """Iterable search in pyhmmer alone; same results and ``stats`` as the OpenCL search."""

    def __init__(self, hmmfile, seqdb, options: SearchOptions, reason: str = "", progress: bool = False,
                 min_part: int = MIN_PART_SEQS):
        from .search import SearchStats

        self.phmms = _models(hmmfile)
        try:
            self.hmms = [_ModelInfo(p) for p in self.phmms]
        except UnicodeDecodeError:     # pyhmmer cannot decode a non-UTF-8 NAME/DESC; HMMER takes it
            self.hmms = list(read_hmms(hmmfile))
        self.options, self.reason, self.progress = options, reason, progress
        self.min_part = max(1, int(min_part))
        self.hmmfile, self.seqdb = hmmfile, seqdb
        self.block, load = read_targets(seqdb)
        self._position = None
        self.stats = SearchStats(models=len(self.hmms), nodes=sum(h.M for h in self.hmms),
                                 sequences=len(self.block), residues=sum(len(s) for s in self.block),
                                 load_seconds=load)
        self.stats.engine = reason

    def _part(self, phmm, block):
        import pyhmmer

        o = self.options
        t0 = time.perf_counter()
        pipeline = pyhmmer.plan7.Pipeline(phmm.alphabet, Z=o.Z, F1=o.F1, E=o.E, domE=o.domE, incE=o.incE,
                                          incdomE=o.incdomE)
        return pipeline.search_hmm(phmm, block), time.perf_counter() - t0

    def _name_width(self, hits, starts) -> int:
        """Longest name of HMMER's serial hit list among ``hits`` (merged parts, see module doc)."""
        if self.options.Z is not None or len(starts) == 1:
            return listed_name_width(hits)
        width = max((len(_name_bytes(h.name)) for h in hits if h.reported), default=0)
        for h in hits:
            name = _name_bytes(h.name)
            if h.reported or len(name) <= width:
                continue
            if self._position is None:            # earliest position of every name, built once
                self._position = {}
                for i, s in enumerate(self.block):
                    self._position.setdefault(_name_bytes(s.name), i + 1)
            if h.pvalue * self._position[name] <= self.options.E:
                width = len(name)
        return width

    def __iter__(self):
        from .search import ModelResult

        t_start = time.perf_counter()
        phmms = self.phmms
        threads = self.options.threads
        n = len(self.block)
        k = 1 if len(phmms) >= threads else max(1, min(threads, n // self.min_part))
        starts = [n * j // k for j in range(k + 1)]
        parts = [self.block[starts[j]:starts[j + 1]] for j in range(k)] if k > 1 else [self.block]
        bar = None
        if self.progress:
            from tqdm import tqdm
            bar = tqdm(total=len(self.hmms), unit="model", file=sys.stderr, disable=not sys.stderr.isatty())
        with ThreadPoolExecutor(max_workers=threads) as pool:
            futures = [[pool.submit(self._part, p, b) for b in parts] for p in phmms]
            for hmm, fs in zip(self.hmms, futures):
                done = [f.result() for f in fs]
                hits = done[0][0] if len(done) == 1 else done[0][0].merge(*(h for h, _ in done[1:]))
                st = pipeline_counts(hits)
                res = ModelResult(hmm=hmm, hits=hits, n_device_pass=st["n_past_msv"], n_past_msv=st["n_past_msv"],
                                  n_past_bias=st["n_past_bias"], n_past_vit=st["n_past_vit"],
                                  n_past_fwd=st["n_past_fwd"], seconds=sum(t for _, t in done),
                                  name_width=self._name_width(hits, starts[:-1]))
                self.stats.past_msv += res.n_past_msv
                self.stats.device_pass += res.n_device_pass
                self.stats.pyhmmer_seconds += res.seconds
                self.stats.per_model.append(res)
                if bar is not None:
                    bar.update(1)
                yield res
        if bar is not None:
            bar.close()
        self.stats.seconds = time.perf_counter() - t_start
