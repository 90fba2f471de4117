# y59: DUST alone on the H200 host (main): dust_arrays on 100,000 random reads (150-1,000 bp) at 1, 2, 4, 8, 16 threads; the host's CPUs (nproc, cgroup quota, lscpu)
source .whl/device-env.sh
python3 -m compileall -q -j 16 /tmp/site clalign tools > /dev/null 2>&1
nproc; cat /sys/fs/cgroup/cpu.max 2>/dev/null; lscpu | grep -E "^CPU\(s\)|Thread|Core|Socket|Model name"
python3 - <<'PY'
import os, time, numpy as np
print("cpu_count", os.cpu_count(), "affinity", len(os.sched_getaffinity(0)))
from clalign.blast.nucl_dust_nb import dust_arrays
rng = np.random.default_rng(1)
lens = rng.integers(150, 1001, 100000)
starts = np.zeros(lens.size + 1, dtype=np.int64); np.cumsum(lens, out=starts[1:])
text = np.frombuffer(b"ACGT", dtype=np.uint8)[rng.integers(0, 4, int(starts[-1]))]
dust_arrays(text[:starts[100]], starts[:101], threads=1)   # compile or load
for th in (1, 2, 4, 8, 16, 16, 8):
    t0 = time.perf_counter(); c0 = time.process_time()
    ivs, cnt = dust_arrays(text, starts, threads=th)
    print(f"threads {th}: wall {time.perf_counter() - t0:.3f} s, cpu {time.process_time() - c0:.3f} s, {len(ivs)} intervals, {starts[-1]} bases")
PY
