"""``clalign devices``: every OpenCL platform and device, what the probe found, and the SIMD
variant each device would use."""
from __future__ import annotations

import json

import click

from .device import all_devices, select_devices
from .probe import probe


def _kib(n):
    return f"{n // 1024} KiB" if n < 1 << 30 else f"{n / (1 << 30):.1f} GiB"


@click.command("devices")
@click.option("--json", "as_json", is_flag=True, help="Print the probe of every device as JSON.")
def devices(as_json):
    """List OpenCL platforms and devices with their capabilities."""
    table = all_devices()
    try:
        chosen = select_devices(None)[0]
    except Exception:  # a bad CLALIGN_DEVICE should not hide the listing
        chosen = None
    rows = []
    for p, d, dev in table:
        c = probe(dev)
        rows.append((f"{p}:{d}", c, dev == chosen))
    if as_json:
        click.echo(json.dumps([{"id": i, "default": dflt, **c.as_dict()} for i, c, dflt in rows], indent=2))
        return
    cols = ["id", "device", "platform", "type", "CUs", "local", "global", "L2", "cc", "ptx", "s16x2", "shfl",
            "subgrp", "clangvec", "simd"]
    out = [cols]
    for i, c, dflt in rows:
        out.append([
            i + ("*" if dflt else ""), c.name[:40], c.platform[:28], "GPU" if c.is_gpu else ("CPU" if c.is_cpu else "other"),
            str(c.compute_units), _kib(c.local_mem), _kib(c.global_mem), _kib(c.global_cache),
            "-" if c.compute_capability is None else "%d.%d" % c.compute_capability,
            "yes" if c.ptx else "no", "yes" if c.ptx_s16x2 else "no", "yes" if c.ptx_shfl else "no",
            "yes" if c.subgroups else "no", "yes" if c.clang_vectors else "no", c.simd_variant,
        ])
    widths = [max(len(r[k]) for r in out) for k in range(len(cols))]
    for r in out:
        click.echo("  ".join(x.ljust(w) for x, w in zip(r, widths)).rstrip())
    click.echo("* = default device (override with --device P:D, CLALIGN_DEVICE or PYOPENCL_CTX)")


def _size(n: int) -> str:
    return f"{n / (1 << 20):.1f} MiB" if n >= 1 << 20 else f"{n / 1024:.1f} KiB"


@click.group("cache")
def cache():
    """The persistent kernel-binary cache (CLALIGN_CACHE_DIR; CLALIGN_NO_CACHE=1 disables it)."""


@cache.command("info")
@click.option("--json", "as_json", is_flag=True, help="Print the information as JSON.")
def cache_info(as_json):
    """Location, size bound, and entries and bytes per device."""
    from .cache import get_cache

    info = get_cache().info()
    if as_json:
        click.echo(json.dumps(info, indent=2))
        return
    state = "enabled" if info["enabled"] else "disabled (CLALIGN_NO_CACHE)"
    click.echo(f"location: {info['location']} ({state})")
    click.echo(f"entries:  {info['entries']}, {_size(info['bytes'])} of at most {_size(info['max_bytes'])}")
    for d in info["devices"]:
        click.echo(f"  {d['entries']:5d}  {_size(d['bytes']):>10}  {d.get('device', '?')} | "
                   f"{d.get('platform', '?')} | driver {d.get('driver', '?')}  [{d['folder']}]")


@cache.command("clear")
def cache_clear():
    """Delete every cached kernel binary (only files clalign wrote)."""
    from .cache import get_cache

    c = get_cache()
    n = c.clear()
    click.echo(f"removed {n} cached kernel(s) from {c.root}")
