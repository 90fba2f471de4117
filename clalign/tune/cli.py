"""``clalign tune``: search kernel template values on a device and keep the best per family.

    clalign tune [--family NAME ...] [--device P:D] [--max-seconds S] [--strategy annealing]
    clalign tune --show [--device P:D]          what applies to the device, and from where
    clalign tune --export FILE [--family ...]   this device's user entries in the built-in table's format

A tuning run measures the built-in values first, then candidates (each verified against the
reference before it is timed), prints default vs best per input, and stores the best in the
user tuning database (:mod:`clalign.runtime.tuning_db`), which later searches on the same
device, driver and clalign version pick up. ``--results FILE`` keeps every measurement as JSON.
"""
from __future__ import annotations

import sys
import time

import click

from .families import FAMILIES, SIZES
from .search import STRATEGIES


def _echo(msg):
    click.echo(msg, err=True)


def show(rt, families) -> str:
    """Lines: every value of each family on the device and where it came from."""
    from ..runtime import tuning
    from ..runtime.tuning_db import db_path, device_key

    key = device_key(rt.caps)
    lines = [f"device {rt.label}: platform {key['platform']!r}, driver {key['driver']!r}, clalign {key['clalign']}",
             f"user tuning database: {db_path()}"]
    for fam in families:
        lines.append(f"[{fam}]")
        for name, (value, where) in tuning.sources(fam, rt.caps).items():
            lines.append(f"  {name} = {value!r}  ({where})")
    return "\n".join(lines)


def table(best, base) -> str:
    rows = ["| input | built-in s | built-in GCUPS | best s | best GCUPS | speed-up |", "|---|---:|---:|---:|---:|---:|"]
    for b, c in zip(base.rows, best.rows):
        if b["status"] != "ok" or c["status"] != "ok":
            continue
        g = [f"{r['gcups']:.1f}" if r.get("gcups") else "" for r in (b, c)]
        rows.append(f"| {b['input']} | {b['seconds']:.4g} | {g[0]} | {c['seconds']:.4g} | {g[1]} | "
                    f"{b['seconds'] / c['seconds']:.2f} |")
    return "\n".join(rows)


@click.command("tune")
@click.option("--family", "families", multiple=True, type=click.Choice(sorted(FAMILIES)),
              help="kernel family to tune (repeatable; default: every family that applies to the device)")
@click.option("--device", default=None, help="OpenCL device as PLATFORM:DEVICE (see 'clalign devices')")
@click.option("--max-seconds", type=click.FloatRange(min=1), default=600.0, show_default=True,
              help="time budget per family (the built-in values are always measured)")
@click.option("--strategy", type=click.Choice(STRATEGIES), default="annealing", show_default=True,
              help="full: the whole grid in order; random: the grid in a seeded random order; annealing: "
                   "from the built-in values, one parameter at a time")
@click.option("--inputs", "size", type=click.Choice(SIZES), default="standard", show_default=True,
              help="representative inputs: 'standard' (several query lengths / model sizes) or 'quick'")
@click.option("--repeats", type=click.IntRange(1, 100), default=3, show_default=True,
              help="timed runs per candidate and input (median), after the verified warm-up run")
@click.option("--seed", type=int, default=1, show_default=True)
@click.option("--show", is_flag=True, help="print the values that apply to the device and where each comes from")
@click.option("--export", "export", default=None, metavar="FILE",
              help="write this device's tuned entries in the built-in table's format (to contribute them)")
@click.option("--results", default=None, metavar="FILE", help="write every measurement as JSON")
@click.option("--import", "import_", default=None, metavar="FILE",
              help="instead of searching, take the best verified values from a results file made on this "
                   "device (clalign tune --results, tools/device_sw.py) and store them")
@click.option("--no-save", is_flag=True, help="do not store the result in the user tuning database")
@click.option("--force", is_flag=True, help="overwrite --export/--results files; replace a damaged tuning database")
@click.option("--quiet", is_flag=True, help="no progress bar")
def tune(families, device, max_seconds, strategy, size, repeats, seed, show, export, results, import_,
         no_save, force, quiet):
    """Search kernel template values on a device (every candidate verified before it is timed)."""
    from ..outfile import plan_outputs
    from ..runtime import Runtime, tuning_db
    from ..runtime.harness import result_doc, write_results
    from .search import Tuner

    rt = Runtime.get(device)
    names = list(families) or list(FAMILIES)
    plan_outputs({"--export": export, "--results": results}, force=force)
    if show or export:                  # reporting modes: nothing is tuned
        if show:
            click.echo(show_text(rt, names))
        if export:
            _export(rt, names, export, force)
        return
    if not no_save and not force:       # a damaged database stops us before the search, not after
        tuning_db.read_entries(strict=True)
    if import_:
        _import(rt, import_, families, force)
        return
    rows, done = [], []
    for name in names:
        fam = FAMILIES[name]
        why = fam.applies(rt.caps)
        if why:
            _echo(f"tune {name}: skipped on {rt.label}: {why}")
            continue
        t0 = time.perf_counter()
        tuner = Tuner(rt, fam, size, repeats, seed, log=_echo, progress=not quiet)
        best, base, tried = tuner.search(strategy, max_seconds)
        n_ok = sum(c.status == "ok" for c in tried)
        skipped = [c for c in tried if c.status != "ok"]
        _echo(f"tune {name}: {len(tried)} candidates in {time.perf_counter() - t0:.0f} s, {n_ok} verified and "
              f"timed, {len(skipped)} skipped")
        for c in skipped[:20]:
            _echo(f"  skipped {c.values}: {c.status}: {c.reason}")
        for c in tried:
            rows.extend({"family": name, "values": c.values, "candidate_status": c.status, **r} for r in c.rows)
            if not c.rows:
                rows.append({"family": name, "values": c.values, "candidate_status": c.status, "input": None,
                             "status": c.status, "seconds": None, "reason": c.reason})
        if base.status != "ok":
            _echo(f"tune {name}: the built-in values failed ({base.status}: {base.reason}); nothing stored")
            continue
        click.echo(f"\n[{name}] on {rt.label}: built-in {base.values}\n  best {best.values} "
                   f"(worst ratio to built-in {best.score:.3f})")
        click.echo(table(best, base))
        done.append(name)
        if not no_save:
            src = (f"clalign tune {time.strftime('%Y-%m-%d', time.gmtime())} --strategy {strategy} "
                   f"--max-seconds {max_seconds:g} --inputs {size}: " +
                   ", ".join(f"{b['input']} x{b['seconds'] / c['seconds']:.2f}" for b, c in zip(base.rows, best.rows)))
            path = tuning_db.store(rt.caps, name, best.values, src,
                                   results=[{"input": b["input"], "builtin_s": b["seconds"], "best_s": c["seconds"]}
                                            for b, c in zip(base.rows, best.rows)], force=force)
            _echo(f"tune {name}: stored in {path}")
    if results:
        write_results(results, result_doc(rt.caps, " ".join(["clalign"] + sys.argv[1:]), rows,
                                          strategy=strategy, max_seconds=max_seconds, inputs=size))


def show_text(rt, names):
    return show(rt, names)


def _export(rt, names, path, force):
    """This device's user entries as ``Entry("device", {"name": ...}, ...)`` lines."""
    from ..outfile import write_text
    from ..runtime import tuning, tuning_db

    out = [f"# clalign tune --export, {time.strftime('%Y-%m-%d', time.gmtime())}: {rt.label}",
           f"# key {tuning_db.device_key(rt.caps)}"]
    n = 0
    for name in names:
        user = tuning_db.user_values(name, rt.caps)
        if not user:
            continue
        e = tuning.Entry("device", {"name": rt.caps.name}, user["values"], source=user.get("source", ""))
        out.append(tuning.format_entry(e, name))
        n += 1
    if not n:
        raise click.ClickException(f"no user tuning entries for {rt.caps.name}; run 'clalign tune' first")
    write_text(path, "\n".join(out) + "\n", force=force)
    _echo(f"tune: wrote {n} entr{'y' if n == 1 else 'ies'} to {path}")


def _import(rt, path, families, force):
    """Store the best verified values of each family found in a results file of this device."""
    from ..runtime import tuning, tuning_db
    from ..runtime.harness import read_results
    from .search import pick_from_rows

    try:
        doc = read_results(path)
    except (OSError, ValueError) as exc:
        raise click.ClickException(f"{path}: {exc}")
    key = tuning_db.device_key(rt.caps)
    if doc.get("device") and any(doc["device"].get(k) != key[k] for k in ("platform", "device", "driver")):
        raise click.ClickException(f"{path} was measured on {doc['device']}, not on this device ({key})")
    names = sorted({r.get("family") for r in doc["rows"]} & set(tuning.families()))
    names = [n for n in names if not families or n in families]
    if not names:
        raise click.ClickException(f"{path}: no rows of a tuning family")
    for name in names:
        try:
            best, base = pick_from_rows(doc["rows"], name, rt.caps)
        except ValueError as exc:
            raise click.ClickException(f"{path}: {exc}")
        click.echo(f"[{name}] from {path}: built-in {base.values}\n  best {best.values}")
        click.echo(table(best, base))
        src = f"imported from {path} ({doc['meta'].get('command', '')}, {doc['meta'].get('date', '')})"
        _echo(f"tune {name}: stored in {tuning_db.store(rt.caps, name, best.values, src, force=force)}")
