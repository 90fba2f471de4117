#!/usr/bin/env python3
"""Check and time every kernels/simd.mako function on one OpenCL device (meant for the H100).

For each SIMD variant the device builds (swar, ptx, ptx+s16x2; clalign.simd.variants):
  1. correctness: every op and width against the numpy reference on 10^6 random words plus
     every combination of lane boundary values in adjacent lanes and carry/borrow-leak words
     (the same data as tests/test_simd.py);
  2. throughput: kernel b_<op>_<width> of kernels/simd_bench.mako (a dependent chain of
     --iters calls per work-item over random words in registers, enough work-items to fill
     the device), timed with OpenCL profiling events: median of --reps runs after 2 warm-ups.
     Each kernel's first run is checked against a numpy simulation of the chain on a few
     work-items before it is timed (clalign.runtime.harness: a wrong kernel is never timed);
     the outputs of the variants are compared with each other (all must be bit-identical).
Prints a table and writes simd_check.json, simd_bench.json and simd_bench.md under --out.

    source .whl/device-env.sh && python3 -m tools.device_simd --out $OUT
"""
from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import time
import traceback
from pathlib import Path

import numpy as np
import pyopencl as cl

from clalign.errors import KernelBuildError
from clalign.runtime import Runtime
from clalign.runtime.harness import compare, result_doc, verify_then_time, write_results
from clalign.simd import harness, reference, variants


def log(*a):
    print(*a, flush=True)


def isolate_build_failure(rt, template_kind, values, iters, out: Path, variant: str) -> list:
    """Build one bench kernel at a time to name the ops whose code does not build."""
    failed = []
    for name in harness.bench_names():
        try:
            harness.bench_program(rt, values, iters, only=name)
        except KernelBuildError as exc:
            failed.append(name)
            (out / f"build_fail_{variant}_{name}.log").write_text(str(exc) + "\n" + str(getattr(exc, "log", "")))
    log(f"  [{variant}] {template_kind}: ops failing to build alone: {failed or 'none'}")
    return failed


def check_variants(rt, vlist, n_random, out: Path) -> dict:
    results = {}
    cache = {}
    for variant in vlist:
        values = harness.variant_values(rt.caps, variant)
        t0 = time.perf_counter()
        try:
            prg = harness.program(rt, values)
        except KernelBuildError as exc:
            (out / f"build_fail_test_{variant}.log").write_text(str(exc) + "\n" + str(getattr(exc, "log", "")))
            log(f"[{variant}] test program FAILED to build (log in build_fail_test_{variant}.log)")
            results[variant] = {"build": False,
                                "failing_ops": isolate_build_failure(rt, "test", values, 4, out, variant)}
            continue
        rows, nbad_total = [], 0
        for width in reference.WIDTHS:
            for op in reference.OPS:
                key = (op, width)
                if key not in cache:
                    a, b, c = harness.check_inputs(op, width, n_random, seed=7)
                    cache[key] = (a, b, c, harness.expected(op, width, a, b, c))
                a, b, c, want = cache[key]
                got = harness.run_op(rt, prg, op, width, a, b, c)
                bad = np.flatnonzero(got != want)
                first = None
                if bad.size:
                    i = bad[0]
                    first = [f"0x{int(v):08x}" for v in (a[i], b[i], c[i], got[i], want[i])]
                rows.append({"op": op, "width": width, "words": int(a.size), "bad": int(bad.size),
                             "first_bad(a,b,c,got,want)": first})
                nbad_total += int(bad.size)
        results[variant] = {"build": True, "ops": rows, "total_bad": nbad_total,
                            "seconds": round(time.perf_counter() - t0, 2)}
        failing = [f"{r['op']}_{r['width']}" for r in rows if r["bad"]]
        log(f"[{variant}] correctness: {len(rows)} op/width pairs, "
            f"{sum(r['words'] for r in rows):,} words, wrong: {failing or 'none'} "
            f"({results[variant]['seconds']} s)")
        for r in rows:
            if r["bad"]:
                log(f"    {r['op']}_{r['width']}: {r['bad']} wrong, first {r['first_bad(a,b,c,got,want)']}")
    return results


def bench_variants(rt, vlist, iters, items, reps, out: Path) -> dict:
    caps = rt.caps
    lsize = 256
    n = items or caps.compute_units * 2048 * 4
    n = (n + lsize - 1) // lsize * lsize
    rng = np.random.default_rng(11)
    inp = rng.integers(0, 1 << 32, size=5 * n, dtype=np.uint64).astype(np.uint32)
    mf = cl.mem_flags
    din = cl.Buffer(rt.ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=inp)
    dout = cl.Buffer(rt.ctx, mf.WRITE_ONLY, 4 * n)
    log(f"bench: {n:,} work-items x {iters} dependent calls, work-group {lsize}, "
        f"median of {reps} after 2 warm-ups")
    res = {"work_items": n, "iters": iters, "local_size": lsize, "reps": reps, "variants": {}}
    outputs = {}
    m = 16      # work-items whose chain a numpy simulation checks before any kernel is timed
    sim_inp = np.concatenate([inp[j * n:j * n + m] for j in range(5)])
    want = {name: harness.simulate_chain(name, sim_inp, m, iters) for name in harness.bench_names()}
    for variant in vlist:
        values = harness.variant_values(caps, variant)
        t0 = time.perf_counter()
        try:
            prg = harness.bench_program(rt, values, iters)
        except KernelBuildError as exc:
            (out / f"build_fail_bench_{variant}.log").write_text(str(exc) + "\n" + str(getattr(exc, "log", "")))
            log(f"[{variant}] bench program FAILED to build")
            res["variants"][variant] = {"build": False}
            continue
        build_s = time.perf_counter() - t0
        if variant == vlist[-1]:
            try:  # the PTX the driver produced (NVIDIA returns PTX text as the "binary")
                (out / f"simd_bench_{variant.replace('+', '_')}.ptx").write_bytes(prg.get_info(cl.program_info.BINARIES)[0])
            except Exception:  # the dump is only informative
                pass
        rows = {}
        for name in harness.bench_names():
            knl = getattr(prg, f"b_{name}")

            def once(knl=knl):
                t = harness.time_kernel(rt, knl, n, lsize, (din, dout), reps=1, warmup=0)[0]
                o = np.empty(n, dtype=np.uint32)
                cl.enqueue_copy(rt.queue, o, dout)
                rt.queue.finish()
                return o, t

            got = {}
            meas = verify_then_time(once, lambda o, name=name: got.update(o=o) or compare(o[:m], want[name], name),
                                    repeats=reps, warmup=1)
            if "o" in got:
                outputs.setdefault(name, {})[variant] = got["o"]
            if not meas.ok:                    # wrong (or failed): never timed
                rows[name] = {"status": meas.status, "reason": meas.reason}
                continue
            times = meas.samples
            t = statistics.median(times)
            rows[name] = {"status": "ok", "median_s": t, "min_s": min(times), "max_s": max(times),
                          "ns_per_op_per_item": t / iters * 1e9,
                          "gops": n * iters / t / 1e9}
        res["variants"][variant] = {"build": True, "build_s": round(build_s, 2), "ops": rows}
        log(f"[{variant}] bench built in {build_s:.1f} s, timed {len(rows)} kernels")
    # agreement between variants, and the numpy simulation of a few work-items
    disagree, sim_bad = [], []
    for name, per in outputs.items():
        vs = list(per)
        if any(not np.array_equal(per[vs[0]], per[v]) for v in vs[1:]):
            disagree.append(name)
        for v in vs:
            if not np.array_equal(per[v][:m], want[name]):
                sim_bad.append(f"{name}[{v}]")
    res["variants_disagree"] = disagree
    res["simulation_mismatch"] = sim_bad
    log(f"bench outputs: variants disagree on {disagree or 'none'}; "
        f"numpy chain simulation ({m} work-items) mismatches: {sim_bad or 'none'}")
    return res


def table(bench: dict, caps) -> str:
    vs = [v for v, r in bench["variants"].items() if r.get("build")]
    imad = {v: bench["variants"][v]["ops"]["imad"].get("median_s") for v in vs}
    head = "| op | " + " | ".join(f"{v} ns/op/item | {v} Gops/s | {v} xIMAD" for v in vs) + " |"
    sep = "|---|" + "---:|" * (3 * len(vs))
    lines = [head, sep]
    for name in harness.bench_names():
        cells = []
        for v in vs:
            r = bench["variants"][v]["ops"][name]
            if r["status"] != "ok":
                cells += [r["status"], "", ""]
                continue
            cells += [f"{r['ns_per_op_per_item']:.3f}", f"{r['gops']:,.0f}",
                      f"{r['median_s'] / imad[v]:.2f}" if imad[v] else ""]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True, help="folder for logs and JSON/markdown results")
    ap.add_argument("--device", default=None, help="P:D (default: the GPU with most compute units)")
    ap.add_argument("--n-random", type=int, default=1_000_000, help="random words per op check")
    ap.add_argument("--iters", type=int, default=4096, help="dependent calls per work-item")
    ap.add_argument("--items", type=int, default=0, help="work-items (default: 8192 per compute unit)")
    ap.add_argument("--reps", type=int, default=7, help="timed runs per kernel (median)")
    ap.add_argument("--variants", default="", help="comma list (default: all the device builds)")
    ap.add_argument("--skip-check", action="store_true")
    args = ap.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)

    rt = Runtime.get(args.device)
    caps = rt.caps
    vlist = args.variants.split(",") if args.variants else variants(caps)
    meta = {"device": caps.name, "driver": caps.driver, "platform": caps.platform,
            "compute_capability": caps.compute_capability, "compute_units": caps.compute_units,
            "variants": vlist, "date": time.strftime("%Y-%m-%d %H:%M:%S"), "host": platform.node(),
            "numpy": np.__version__, "pyopencl": cl.VERSION_TEXT, "argv": sys.argv}
    log(json.dumps(meta))
    log(json.dumps(caps.as_dict()))
    status = 0
    if not args.skip_check:
        try:
            chk = check_variants(rt, vlist, args.n_random, out)
        except Exception:
            traceback.print_exc()
            chk = {"error": traceback.format_exc()}
            status = 1
        (out / "simd_check.json").write_text(json.dumps({"meta": meta, "results": chk}, indent=1))
        if any((not r.get("build", False)) or r.get("total_bad") for r in chk.values() if isinstance(r, dict)):
            status = 1
    bench = bench_variants(rt, vlist, args.iters, args.items, args.reps, out)
    rows = [{"family": "simd", "variant": v, "input": op, "status": r.get("status", "ok"),
             "seconds": r.get("median_s"), "reason": r.get("reason", ""), "gops": r.get("gops")}
            for v, vr in bench["variants"].items() for op, r in vr.get("ops", {}).items()]
    write_results(out / "simd_bench.json", result_doc(caps, " ".join(sys.argv), rows, info=meta, bench=bench))
    md = table(bench, caps)
    (out / "simd_bench.md").write_text(md + "\n")
    log("\n" + md)
    if bench["variants_disagree"] or bench["simulation_mismatch"]:
        status = 1
    log(f"done, status {status}")
    return status


if __name__ == "__main__":
    sys.exit(main())
