# y38: nw_redo per piece (branch redo 5161124) against main 2cbc695: -task blastn 1,000 and 200 genes at 1 Gbp
source .whl/device-env.sh
S=$PWD/.snap/y38; R=$PWD
rm -rf /tmp/tr && mkdir -p /tmp/tr && cp -r clalign kernels tools /tmp/tr/ && tar -xf $S/redo.tar -C /tmp/tr
python3 -m compileall -q -j 16 /tmp/site clalign tools /tmp/tr > /dev/null 2>&1
nvidia-smi --query-gpu=name --format=csv,noheader
W=/tmp/bnb
T0=$(date +%s)
python3 -m tools.bench_blastn --warm-only --work $W/warm --genome-mb 20 --reads 8 --genes 8 --device 0:0 --cases blastn:genes --real $S/GCF_001457455.1_NCTC11397_genomic.fna.gz > $OUT/warm.txt 2>&1 &
WP=$!
(cd /tmp/tr && python3 -m tools.bench_blastn --warm-only --work $W/warm2 --genome-mb 20 --reads 8 --genes 8 --device 0:0 --cases blastn:genes --real $S/GCF_001457455.1_NCTC11397_genomic.fna.gz > $OUT/warm2.txt 2>&1) &
WP2=$!
python3 -c "
from tools.bench_blastn import write_data, case_queries
print(write_data('$W', 1000, 0, 1000, real='$S/GCF_001457455.1_NCTC11397_genomic.fna.gz'))
case_queries('$W', 'genes', 200)"
wait $WP; wait $WP2; echo "data+warm $(( $(date +%s) - T0 )) s"
cd $W
run() {  # label tree args...
  local label=$1; local tree=$2; shift 2
  local t0=$(date +%s.%N)
  PYTHONPATH=/tmp/site:$tree python3 -m clalign "$@" > cl_$label.tsv 2> err_$label.txt
  local t1=$(date +%s.%N)
  echo "$label $(python3 -c "print(round($t1 - $t0, 2))") s $(md5sum < cl_$label.tsv | cut -c1-8) $(wc -l < cl_$label.tsv) lines"
}
for r in 1 2; do
  run g1000_main_$r $R blastn -task blastn -query genes.fa -db gdb -outfmt 6 -num_threads 16 --device 0:0
  run g1000_redo_$r /tmp/tr blastn -task blastn -query genes.fa -db gdb -outfmt 6 -num_threads 16 --device 0:0
done
for r in 1 2 3; do
  run g200_main_$r $R blastn -task blastn -query genes200.fa -db gdb -outfmt 6 -num_threads 16 --device 0:0
  run g200_redo_$r /tmp/tr blastn -task blastn -query genes200.fa -db gdb -outfmt 6 -num_threads 16 --device 0:0
done
echo "after A/B $(( $(date +%s) - T0 )) s"
for tree in /tmp/tr $R; do
PYTHONPATH=/tmp/site:$tree python3 -c "
import time, json
from clalign.blast.blastn import run_blastn
from clalign.blast.nucl_setup import BlastnOptions
for q in ('genes.fa', 'genes200.fa'):
    ph = {}
    t = time.perf_counter()
    run_blastn(q, 'gdb', BlastnOptions(task='blastn'), device='0:0', times=ph, num_threads=16)
    print('inproc $tree', q, round(time.perf_counter() - t, 3), json.dumps({k: (round(v, 3) if isinstance(v, float) else v) for k, v in ph.items()}))
"
done
cd /tmp/tr && PYTHONPATH=/tmp/site:/tmp/tr python3 $R/tools/cli_timeline.py --json $OUT/tl_g.json --min-ms 20 --span clalign.blast.nucl_device:NuclDeviceWords._start --span clalign.blast.nucl_device:NuclDeviceWords._settle --span clalign.blast.nucl_device:NuclDeviceWords._rows -- blastn -task blastn -query $W/genes.fa -db $W/gdb -outfmt 6 -num_threads 16 --device 0:0 -out $W/tl_g.tsv > $OUT/tl_g.txt 2>&1
echo total $(( $(date +%s) - T0 )) s
