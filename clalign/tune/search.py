"""The search: candidates of one family, each verified then timed on every input.

Strategies (after CLBlast's tuner): ``full`` walks the whole grid in order, ``random`` walks it
in a seeded random order, ``annealing`` starts at the built-in values and moves one dimension
at a time, accepting a slower neighbour with a probability that falls as the budget is spent.
Every strategy measures the built-in values first (the baseline), so the result is never a
candidate slower than the table: a candidate is scored by its worst ratio to the baseline over
the inputs (ties: geometric mean), and only candidates that passed verification on every input
are compared; the winner is timed again beside the built-in values (alternating) and kept only
if it is still at least as fast on every input. Candidates the family's constraints or the device's limits exclude are skipped
without running; those that fail to build, to run or to verify are skipped with the reason.
"""
from __future__ import annotations

import itertools
import math
import random
import time
from dataclasses import dataclass, field

import numpy as np

from ..runtime import tuning
from ..runtime.harness import verify_then_time

STRATEGIES = ("full", "random", "annealing")


@dataclass
class Candidate:
    values: dict                     # the family's tuned parameters (what an entry would hold)
    rows: list = field(default_factory=list)     # one per input: label, status, seconds, reason
    status: str = "ok"
    reason: str = ""
    score: float = math.inf          # worst seconds ratio to the baseline over the inputs
    mean: float = math.inf           # geometric mean of those ratios

    def key(self):
        return tuple(sorted((k, repr(v)) for k, v in self.values.items()))


def _flatten(choice: dict) -> dict:
    out = {}
    for dim, v in choice.items():
        out.update(v if isinstance(v, dict) else {dim: v})
    return out


class Tuner:
    """Search ``family`` (:class:`~clalign.tune.families.Family`) on runtime ``rt``."""

    def __init__(self, rt, family, size="standard", repeats=3, seed=1, log=None, progress=True):
        self.rt, self.family, self.size, self.repeats = rt, family, size, max(1, int(repeats))
        self.seed, self.log, self.progress = seed, log or (lambda msg: None), progress
        self.params = tuning.paramset(family.name)
        self.space = family.space(rt.caps)
        self.tried: dict = {}
        self.baseline: Candidate | None = None
        self.inputs: list = []
        self.refs: list = []

    # -- candidates ---------------------------------------------------------------------
    def baseline_values(self) -> dict:
        """The built-in values of every searched parameter (table over declared defaults)."""
        base = tuning.table_values(self.family.name, self.rt.caps)
        names = set(_flatten({d: (vs[0] if vs else None) for d, vs in self.space.items()}))
        return {k: base[k] for k in sorted(names) if k in base}

    def grid(self):
        dims = list(self.space)
        for combo in itertools.product(*(self.space[d] for d in dims)):
            yield {**self.baseline_values(), **_flatten(dict(zip(dims, combo)))}

    def neighbours(self, values: dict, rng) -> list:
        out = []
        for d, choices in self.space.items():
            for c in choices:
                cand = {**values, **_flatten({d: c})}
                if cand != values:
                    out.append(cand)
        rng.shuffle(out)
        return out

    # -- measuring ------------------------------------------------------------------------
    def prepare(self):
        rng = np.random.default_rng(self.seed)
        self.inputs = self.family.make_inputs(self.rt.caps, self.size, rng)
        t0 = time.perf_counter()
        self.refs = [self.family.reference(inp) for inp in self.inputs]
        self.log(f"{self.family.name}: {len(self.inputs)} inputs ({', '.join(i.label for i in self.inputs)}), "
                 f"reference computed in {time.perf_counter() - t0:.1f} s")

    def measure(self, values: dict, deadline: float | None = None) -> Candidate:
        """Verify and time ``values`` on every input; past ``deadline`` (perf_counter) between
        inputs the candidate is left unfinished (status ``budget``), never half-compared."""
        cand = Candidate(dict(values))
        if cand.key() in self.tried:
            return self.tried[cand.key()]
        self.tried[cand.key()] = cand
        full = {**self.family.fixed, **values}
        try:
            checked = self.params.check_partial(full)
        except Exception as exc:            # a value outside its declared range
            cand.status, cand.reason = "limit", str(exc).splitlines()[0]
            return cand
        why = self.params.problems({**tuning.table_values(self.family.name, self.rt.caps), **checked}, self.rt.caps)
        if why:
            cand.status, cand.reason = "limit", "; ".join(why)
            return cand
        ratios = []
        for inp, ref in zip(self.inputs, self.refs):
            if deadline is not None and time.perf_counter() > deadline:
                cand.status, cand.reason = "budget", "time budget spent before every input was measured"
                return cand

            def verify(out, ref=ref):
                bad = self.family.check(out, ref)
                if bad is None and "all" in ref and "all" in out:
                    from ..runtime.harness import compare
                    bad = compare(out["all"], ref["all"], "full score vector vs the verified built-in values")
                return bad

            m = verify_then_time(lambda inp=inp: self.family.run(self.rt, full, inp), verify, self.repeats)
            cand.rows.append({"input": inp.label, "status": m.status, "seconds": m.seconds, "samples": m.samples,
                              "reason": m.reason, "gcups": (inp.cells / m.seconds / 1e9) if m.ok and m.seconds else None})
            if not m.ok:
                cand.status, cand.reason = m.status, f"{inp.label}: {m.reason}"
                return cand
            if self.baseline is not None and self.baseline.status == "ok":
                b = next(r["seconds"] for r in self.baseline.rows if r["input"] == inp.label)
                ratios.append(m.seconds / b if b > 0 else 1.0)
        if ratios:
            cand.score = max(ratios)
            cand.mean = float(np.exp(np.mean(np.log(np.maximum(ratios, 1e-12)))))
        return cand

    def run_baseline(self) -> Candidate:
        """Measure the built-in values; their full outputs then verify every other candidate."""
        values = self.baseline_values()
        cand = Candidate(dict(values))
        full = {**self.family.fixed, **values}
        self.tried[cand.key()] = cand
        for i, (inp, ref) in enumerate(zip(self.inputs, self.refs)):
            holder = {}

            def run(inp=inp):
                out, secs = self.family.run(self.rt, full, inp)
                holder["out"] = out
                return out, secs

            m = verify_then_time(run, lambda out, ref=ref: self.family.check(out, ref), self.repeats)
            cand.rows.append({"input": inp.label, "status": m.status, "seconds": m.seconds, "samples": m.samples,
                              "reason": m.reason, "gcups": (inp.cells / m.seconds / 1e9) if m.ok and m.seconds else None})
            if not m.ok:
                cand.status, cand.reason = m.status, f"{inp.label}: {m.reason}"
                break
            if "all" in holder.get("out", {}):
                self.refs[i] = {**ref, "all": holder["out"]["all"]}
        cand.score = cand.mean = 1.0 if cand.status == "ok" else math.inf
        self.baseline = cand
        return cand

    # -- the search -----------------------------------------------------------------------
    def search(self, strategy: str = "annealing", max_seconds: float = 600.0) -> tuple:
        """(best, baseline, every candidate tried) within ``max_seconds`` (baseline included)."""
        if strategy not in STRATEGIES:
            raise ValueError(f"strategy must be one of {STRATEGIES}")
        t0 = time.perf_counter()
        self.prepare()
        base = self.run_baseline()
        self.log(f"{self.family.name}: built-in values {base.values}: {base.status} {base.reason}")
        if base.status != "ok":
            return base, base, list(self.tried.values())
        rng = random.Random(self.seed)
        left = lambda: max_seconds - (time.perf_counter() - t0)  # noqa: E731
        bar = _bar(self.progress, self.family.name, max_seconds)
        best = base
        try:
            if strategy in ("full", "random"):
                order = list(self.grid())
                if strategy == "random":
                    rng.shuffle(order)
                for values in order:
                    if left() <= 0:
                        break
                    c = self.measure(values, t0 + max_seconds)
                    best = _better(best, c)
                    bar(time.perf_counter() - t0, best)
            else:
                cur = base
                while left() > 0:
                    nxt = [v for v in self.neighbours(cur.values, rng) if Candidate(v).key() not in self.tried]
                    if not nxt:
                        fresh = [v for v in self.grid() if Candidate(v).key() not in self.tried]
                        if not fresh:
                            break
                        nxt = [rng.choice(fresh)]
                    c = self.measure(nxt[0], t0 + max_seconds)
                    best = _better(best, c)
                    temp = max(1e-3, 0.05 * left() / max_seconds)
                    if c.status == "ok" and (c.score < cur.score or rng.random() < math.exp(-(c.score - cur.score) / temp)):
                        cur = c
                    bar(time.perf_counter() - t0, best)
        finally:
            bar(None, best)
        if best is not base:
            best, base = self.confirm(best, base)
        return best, base, list(self.tried.values())

    def confirm(self, best: Candidate, base: Candidate, rounds: int = 2) -> tuple:
        """Time the winner and the built-in values again, alternating, and keep the winner only
        if it is still at least as fast on every input: the search measured the baseline once,
        at the start, and a shared machine's load may have changed since. Returns the
        (best, baseline) pair with the confirming times in their rows."""
        runs = {"best": [], "base": []}
        for _ in range(rounds):
            for tag, cand in (("base", base), ("best", best)):
                runs[tag].append(self._times(cand.values))
        rows = {}
        for tag, cand in (("base", base), ("best", best)):
            got = [r for r in runs[tag] if r is not None]
            if not got:
                return base, base
            rows[tag] = Candidate(cand.values, status="ok")
            for i, inp in enumerate(self.inputs):
                secs = min(r[i] for r in got)
                rows[tag].rows.append({"input": inp.label, "status": "ok", "seconds": secs, "samples": [r[i] for r in got],
                                       "reason": "confirmation", "gcups": inp.cells / secs / 1e9})
        ratios = [c["seconds"] / b["seconds"] for c, b in zip(rows["best"].rows, rows["base"].rows)]
        rows["base"].score = rows["base"].mean = 1.0
        rows["best"].score = max(ratios)
        rows["best"].mean = float(np.exp(np.mean(np.log(ratios))))
        if rows["best"].score > 1.0:
            self.log(f"{self.family.name}: {best.values} not confirmed (worst ratio {rows['best'].score:.3f} "
                     f"when timed again beside the built-in values); keeping the built-in values")
            return rows["base"], rows["base"]
        return rows["best"], rows["base"]

    def _times(self, values: dict):
        """Verified kernel seconds of ``values`` per input, or None."""
        full = {**self.family.fixed, **values}
        out = []
        for inp, ref in zip(self.inputs, self.refs):
            m = verify_then_time(lambda inp=inp: self.family.run(self.rt, full, inp),
                                 lambda o, ref=ref: self.family.check(o, ref), self.repeats)
            if not m.ok:
                return None
            out.append(m.seconds)
        return out


def _better(a: Candidate, b: Candidate) -> Candidate:
    if b.status != "ok":
        return a
    return b if (b.score, b.mean) < (a.score, a.mean) else a


def _bar(enabled, name, total):
    """A tqdm bar over the time budget (the number of candidates is not known ahead)."""
    if not enabled:
        return lambda t, best: None
    from tqdm import tqdm

    bar = tqdm(total=round(total), desc=f"tune {name}", unit="s", leave=False)

    def update(t, best):
        if t is None:
            bar.close()
            return
        bar.n = min(round(t), bar.total)
        bar.set_postfix_str(f"best x{1 / best.score:.2f}" if best.score > 0 else "")
        bar.refresh()
    return update


def pick_from_rows(rows: list, family: str, caps) -> tuple:
    """(best, baseline) Candidates from result rows of ``family`` (``clalign tune --results``,
    ``tools/device_sw.py``): the baseline is the row set whose values equal the built-in table
    on their keys; the best is chosen as the search chooses (worst ratio to the baseline over
    the inputs the baseline has, verified rows only)."""
    table = tuning.table_values(family, caps)
    ps = tuning.paramset(family)
    cands: dict = {}
    for r in rows:
        if r.get("family") != family or not isinstance(r.get("values"), dict) or r.get("input") is None:
            continue
        values = ps.check_partial({k: (tuple(tuple(x) for x in v) if isinstance(v, list) else v)
                                   for k, v in r["values"].items()})
        c = cands.setdefault(Candidate(values).key(), Candidate(values))
        c.rows.append(r)
    base = next((c for c in cands.values() if all(table.get(k) == v for k, v in c.values.items())), None)
    if base is None:
        raise ValueError(f"no {family} rows with the built-in values {table} to compare with")
    bsec = {r["input"]: r["seconds"] for r in base.rows if r.get("status") == "ok"}
    if not bsec:
        raise ValueError(f"the built-in values of {family} have no verified timing")
    base.score = base.mean = 1.0
    best = base
    for c in cands.values():
        got = {r["input"]: r["seconds"] for r in c.rows if r.get("status") == "ok"}
        common = [i for i in bsec if i in got]       # a sweep may time a subset of the inputs
        if c is base or any(r.get("status") != "ok" for r in c.rows) or not common:
            continue
        ratios = [got[i] / bsec[i] for i in common]
        c.score, c.mean = max(ratios), float(np.exp(np.mean(np.log(ratios))))
        best = _better(best, c)
    common = [i for i in bsec if any(r["input"] == i for r in best.rows)]
    for c in (best, base):     # rows of the inputs both have, in the baseline's order, for the table
        c.rows = [next(r for r in c.rows if r["input"] == i) for i in common]
    return best, base
