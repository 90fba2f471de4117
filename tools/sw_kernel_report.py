"""Print what the OpenCL compiler made of Smith-Waterman kernel variants.

For each variant (``NAME=K=V,K=V`` or the tuned default) this renders and builds
``kernels/sw_intertask.mako`` for the device and prints the kernel's private (spill) and local
memory sizes and, on NVIDIA, the ptxas register report (``-cl-nv-verbose``).

    python3 -m tools.sw_kernel_report [--device P:D] "tuned" "w32=WIDTH=32,ROWS=64"
"""
import argparse
import warnings

import pyopencl as cl

from clalign.sw.engine import SWEngine
from clalign.sw.params import SW_PARAMS


def parse(spec):
    name, _, rest = spec.partition("=")
    ov = {}
    for kv in filter(None, rest.split(",")):
        k, v = kv.split("=")
        ov[k] = v if not v.lstrip("-").isdigit() else int(v)
    return name, ov


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("variants", nargs="+")
    ap.add_argument("--device", default=None)
    args = ap.parse_args()
    for spec in args.variants:
        name, ov = parse(spec)
        eng = SWEngine(device=args.device, **ov)
        width = eng.first_width
        vals = eng.values(width, ov.get("PROFILE", eng.profile_layout(width, 1000)), ov.get("SCHEDULE", "dynamic"))
        opts = ["-cl-nv-verbose"] if eng.caps.is_nvidia else []
        from clalign.runtime import render
        src = render("sw_intertask.mako", SW_PARAMS.validate(vals))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            prg = cl.Program(eng.rt.ctx, src).build(options=opts)
        log = prg.get_build_info(eng.rt.device, cl.program_build_info.LOG)
        k = cl.Kernel(prg, "sw_intertask")
        priv = k.get_work_group_info(cl.kernel_work_group_info.PRIVATE_MEM_SIZE, eng.rt.device)
        loc = k.get_work_group_info(cl.kernel_work_group_info.LOCAL_MEM_SIZE, eng.rt.device)
        print(f"== {name}: {vals}\n   private {priv} B, local {loc} B")
        for line in log.splitlines():
            if "sw_intertask" in line or "registers" in line or "spill" in line or "stack" in line:
                print("   " + line.strip())


if __name__ == "__main__":
    main()
