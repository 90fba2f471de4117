# y60: why DUST's compiled code runs ~5x slower per core on the H200 host than on the 2-core VM (same numba 0.68.1 / llvmlite 0.50.0): LLVM's host CPU, and DUST on one thread compiled for the host CPU (default) and for NUMBA_CPU_NAME=generic / x86-64-v2 / x86-64-v3, each with its own cache
source .whl/device-env.sh
python3 -c "
import llvmlite.binding as l
l.initialize_native_target(); l.initialize_native_asmprinter()
print('host cpu', l.get_host_cpu_name()); f = l.get_host_cpu_features()
print('features', ' '.join(sorted(k for k, v in f.items() if v))[:900])"
grep -m1 "^flags" /proc/cpuinfo | cut -c1-700
cat > /tmp/dust1.py <<'PY'
import os, time, numpy as np
t0 = time.perf_counter()
from clalign.blast.nucl_dust_nb import dust_arrays
rng = np.random.default_rng(1)
lens = rng.integers(150, 1001, 10000)
starts = np.zeros(lens.size + 1, dtype=np.int64); np.cumsum(lens, out=starts[1:])
text = np.frombuffer(b"ACGT", dtype=np.uint8)[rng.integers(0, 4, int(starts[-1]))]
dust_arrays(text[:starts[10]], starts[:11], threads=1)
t1 = time.perf_counter()
best = min(time.perf_counter() - t if (t := time.perf_counter()) and dust_arrays(text, starts, threads=1) is not None else 0 for _ in range(3))
print(f"{os.environ.get('NUMBA_CPU_NAME', 'host')}: first call (compile) {t1 - t0:.1f} s; DUST one thread {best:.3f} s for {starts[-1]} bases: {best / starts[-1] * 1e9:.1f} ns a base")
PY
for cpu in host generic x86-64-v2 x86-64-v3; do
  if [ $cpu = host ]; then NUMBA_CACHE_DIR=/tmp/nc_$cpu python3 /tmp/dust1.py; else NUMBA_CPU_NAME=$cpu NUMBA_CACHE_DIR=/tmp/nc_$cpu python3 /tmp/dust1.py; fi
done
