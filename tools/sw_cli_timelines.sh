#!/bin/bash
# clalign sw on the GPU machine: timelines of a fresh and repeated CLI runs (tools/cli_timeline.py),
# then CUDASW++4.0 `align` and the API split search (WG 128 vs 256), in one command. From a snapshot:
#   source .whl/device-env.sh && cd .snap/NAME && export PYTHONPATH=$PWD:$PYTHONPATH && bash tools/sw_cli_timelines.sh > $OUT/log.txt 2>&1
# (carry .whl, .snap/NAME, .peers). Env: X work folder (/tmp), N sequences (570000), Q queries,
# NOCUDA=1 skips CUDASW++4.0. Writes $OUT/timelines.tgz and $OUT/sw_tail.json. docs/perf/sw.md runs 15-16.
X=${X:-/tmp}
S=$PWD; Q=${Q:-$S/tests/data/cudasw/cudasw_queries.fasta}; PY0=$PYTHONPATH
mkdir -p $X/tl
log(){ echo "[$(date +%T)] $*"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
log compileall; python3 -m compileall -q -j 8 $S/clalign $S/tools /tmp/site >/dev/null 2>&1; log compiled
PYTHONPATH=$S:$PY0 python3 tools/gen_protein_db.py -n ${N:-570000} --seed 1 -o $X/db.fa | tail -c 120
PYTHONPATH=$S:$PY0 python3 -m clalign makedb $X/db.fa $X/prep -q --force; log makedb done
cli(){ # name env...
  local name=$1; shift
  local s=$(date +%s.%N)
  env "$@" PYTHONPATH=$S:$PY0 timeout 60 python3 $S/tools/cli_timeline.py --min-ms 15 --json $X/tl/$name.json -- sw -query $Q -db $X/prep -out $X/hits_$name.tsv --force --verbose > $X/tl/$name.out 2> $X/tl/$name.err
  local rc=$? e=$(date +%s.%N)
  echo "CLI $name rc=$rc wall=$(python3 -c "print(f'{$e-$s:.2f}')") s"
  grep -E "^sw: [0-9]+ queries|kernel cache|subject\(s\) longer|measured per-cell|error|timeline:" $X/tl/$name.err | cut -c1-300
}
tl(){ sed -n '/^   start/,$p' $X/tl/$1.err | grep -v "import numba\.\|import llvmlite\.\|_select\|_align_group\|Worker\.\(begin\|end\)" ; }
env CUDA_CACHE_DISABLE=1 CLALIGN_CACHE_DIR=$X/kcw PYTHONPATH=$S:$PY0 python3 -m clalign sw -query $Q -db $X/prep -out $X/warm.tsv --force 2>&1 | tail -1; log numba warm
cli fresh CUDA_CACHE_DISABLE=1 CLALIGN_CACHE_DIR=$X/kc; tl fresh
for r in 1 2 3; do cli rep$r CLALIGN_CACHE_DIR=$X/kc CUDA_CACHE_PATH=$X/nv; done; tl rep3
for r in 1 2; do s=$(date +%s.%N); CLALIGN_CACHE_DIR=$X/kc CUDA_CACHE_PATH=$X/nv PYTHONPATH=$S:$PY0 python3 -m clalign sw -query $Q -db $X/prep -out $X/hits_plain$r.tsv --force 2>/dev/null; e=$(date +%s.%N); echo "CLI plain (python3 -m clalign, no timeline) rep wall=$(python3 -c "print(f'{$e-$s:.2f}')") s"; done
cmp $X/hits_fresh.tsv $X/hits_rep3.tsv && cmp $X/hits_rep3.tsv $X/hits_plain2.tsv && echo "hits fresh == repeated == plain"
tar -czf $OUT/timelines.tgz -C $X tl
[ -n "$NOCUDA" ] || bash ../../.peers/cudasw4/run.sh $Q $X/db.fa 2>&1 | tail -n 2
log api; CLALIGN_CACHE_DIR=$X/kc CUDA_CACHE_PATH=$X/nv PYTHONPATH=$S:$PY0 timeout 60 python3 tools/bench_sw_tail.py --db $X/prep --out $X/bt --work $X/bw --no-old --skip-intra --split-variants "WG=256" 2>&1 | cut -c1-700; cp $X/bt/sw_tail.json $OUT/ 2>/dev/null
log end
