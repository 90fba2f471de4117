# y39: nd_pass (branch redo 2nd commit) against y38's redo tree; BLAST+ -task blastn on the same data; 1 Gbp, 1,000 and 200 genes
source .whl/device-env.sh
S=$PWD/.snap/y39; R=$PWD
for t in redo redo2; do rm -rf /tmp/$t && mkdir -p /tmp/$t && cp -r clalign kernels tools /tmp/$t/ && tar -xf $S/$t.tar -C /tmp/$t; done
python3 -m compileall -q -j 16 /tmp/site /tmp/redo /tmp/redo2 > /dev/null 2>&1
nvidia-smi --query-gpu=name --format=csv,noheader
W=/tmp/bnb
T0=$(date +%s)
for t in redo redo2; do (cd /tmp/$t && python3 -m tools.bench_blastn --warm-only --work $W/warm$t --genome-mb 20 --reads 8 --genes 8 --device 0:0 --cases blastn:genes --real $S/GCF_001457455.1_NCTC11397_genomic.fna.gz > $OUT/warm$t.txt 2>&1) & done
python3 -c "
from tools.bench_blastn import write_data, case_queries
print(write_data('$W', 1000, 0, 1000, real='$S/GCF_001457455.1_NCTC11397_genomic.fna.gz'))
case_queries('$W', 'genes', 200)"
wait; echo "data+warm $(( $(date +%s) - T0 )) s"
cd $W
run() {  # label tree args...
  local label=$1; local tree=$2; shift 2
  local t0=$(date +%s.%N)
  PYTHONPATH=/tmp/site:$tree python3 -m clalign "$@" > cl_$label.tsv 2> err_$label.txt
  local t1=$(date +%s.%N)
  echo "$label $(python3 -c "print(round($t1 - $t0, 2))") s $(md5sum < cl_$label.tsv | cut -c1-8) $(wc -l < cl_$label.tsv) lines"
}
bl() {
  local label=$1; shift
  local t0=$(date +%s.%N)
  blastn "$@" > bl_$label.tsv
  echo "BLAST+ $label $(python3 -c "print(round($(date +%s.%N) - $t0, 2))") s $(md5sum < bl_$label.tsv | cut -c1-8) $(wc -l < bl_$label.tsv) lines"
}
bl g200 -task blastn -query genes200.fa -db gdb -outfmt 6 -num_threads 16
for r in 1 2 3; do
  run g200_redo_$r /tmp/redo blastn -task blastn -query genes200.fa -db gdb -outfmt 6 -num_threads 16 --device 0:0
  run g200_redo2_$r /tmp/redo2 blastn -task blastn -query genes200.fa -db gdb -outfmt 6 -num_threads 16 --device 0:0
done
bl g1000 -task blastn -query genes.fa -db gdb -outfmt 6 -num_threads 16
for r in 1 2; do
  run g1000_redo_$r /tmp/redo blastn -task blastn -query genes.fa -db gdb -outfmt 6 -num_threads 16 --device 0:0
  run g1000_redo2_$r /tmp/redo2 blastn -task blastn -query genes.fa -db gdb -outfmt 6 -num_threads 16 --device 0:0
done
echo "after A/B $(( $(date +%s) - T0 )) s"
PYTHONPATH=/tmp/site:/tmp/redo2 python3 -c "
import time, json
from clalign.blast.blastn import run_blastn
from clalign.blast.nucl_setup import BlastnOptions
for q in ('genes.fa', 'genes200.fa', 'genes.fa'):
    ph = {}
    t = time.perf_counter()
    run_blastn(q, 'gdb', BlastnOptions(task='blastn'), device='0:0', times=ph, num_threads=16)
    print('inproc redo2', q, round(time.perf_counter() - t, 3), json.dumps({k: (round(v, 3) if isinstance(v, float) else v) for k, v in ph.items()}))
"
cd /tmp/redo2 && PYTHONPATH=/tmp/site:/tmp/redo2 python3 $R/tools/cli_timeline.py --json $OUT/tl_g.json --min-ms 20 --span clalign.blast.nucl_device:NuclDeviceWords._start --span clalign.blast.nucl_device:NuclDeviceWords._settle --span clalign.blast.nucl_device:NuclDeviceWords._rows -- blastn -task blastn -query $W/genes.fa -db $W/gdb -outfmt 6 -num_threads 16 --device 0:0 -out $W/tl_g.tsv > $OUT/tl_g.txt 2>&1
PYTHONPATH=/tmp/site:/tmp/redo2 python3 $R/tools/cli_timeline.py --json $OUT/tl_g200.json --min-ms 20 --span clalign.blast.nucl_device:NuclDeviceWords._start --span clalign.blast.nucl_device:NuclDeviceWords._settle --span clalign.blast.nucl_device:NuclDeviceWords._rows -- blastn -task blastn -query $W/genes200.fa -db $W/gdb -outfmt 6 -num_threads 16 --device 0:0 -out $W/tl_g200.tsv > $OUT/tl_g200.txt 2>&1
echo total $(( $(date +%s) - T0 )) s
