# y37: the issue's full scale on main 2cbc695: 1 Gbp, -task blastn 1,000 genes, megablast 100,000 reads and 1,000 genes
source .whl/device-env.sh
S=$PWD/.snap/y37; R=$PWD
python3 -m compileall -q -j 16 /tmp/site clalign tools > /dev/null 2>&1
nvidia-smi --query-gpu=name --format=csv,noheader
W=/tmp/bnb
T0=$(date +%s)
python3 -m tools.bench_blastn --warm-only --work $W/warm --genome-mb 20 --reads 8 --genes 8 --device 0:0 --cases blastn:genes,megablast:reads,megablast:genes --real $S/GCF_001457455.1_NCTC11397_genomic.fna.gz > $OUT/warm.txt 2>&1 &
WP=$!
python3 -c "
from tools.bench_blastn import write_data
print(write_data('$W', 1000, 100000, 1000, real='$S/GCF_001457455.1_NCTC11397_genomic.fna.gz'))"
wait $WP; echo warm rc $?; echo "data+warm $(( $(date +%s) - T0 )) s"
cd $W
ls -la reads.fa genes.fa
run() {  # label args...
  local label=$1; shift
  local t0=$(date +%s.%N)
  /usr/bin/time -f "%M KiB" -o rss_$label.txt python3 -m clalign "$@" > cl_$label.tsv 2> err_$label.txt
  local t1=$(date +%s.%N)
  echo "$label $(python3 -c "print(round($t1 - $t0, 2))") s $(cat rss_$label.txt) $(cmp -s bl_$TASK.tsv cl_$label.tsv && echo identical || echo DIFFERENT) $(wc -l < cl_$label.tsv) lines"
}
bl() {  # label args...
  local label=$1; shift
  local t0=$(date +%s.%N)
  /usr/bin/time -f "%M KiB" -o rss_bl.txt blastn "$@" > bl_$TASK.tsv
  echo "BLAST+ $label $(python3 -c "print(round($(date +%s.%N) - $t0, 2))") s $(cat rss_bl.txt) $(wc -l < bl_$TASK.tsv) lines"
}
TASK=mgenes
bl mgenes -task megablast -query genes.fa -db gdb -outfmt 6 -num_threads 16
bl mgenes -task megablast -query genes.fa -db gdb -outfmt 6 -num_threads 16
for r in 1 2 3; do run mg_$r blastn -task megablast -query genes.fa -db gdb -outfmt 6 -num_threads 16 --device 0:0; done
TASK=blastn
bl blastn1000 -task blastn -query genes.fa -db gdb -outfmt 6 -num_threads 16
for r in 1 2 3; do run g_$r blastn -task blastn -query genes.fa -db gdb -outfmt 6 -num_threads 16 --device 0:0; done
echo "after blastn $(( $(date +%s) - T0 )) s"
TASK=megablast
bl reads100k -task megablast -query reads.fa -db gdb -outfmt 6 -num_threads 16
for r in 1 2 3; do run m_$r blastn -task megablast -query reads.fa -db gdb -outfmt 6 -num_threads 16 --device 0:0; done
echo "after reads $(( $(date +%s) - T0 )) s"
python3 $R/tools/cli_timeline.py --json $OUT/tl_g.json --min-ms 20 --span clalign.blast.nucl_device:NuclDeviceWords._start --span clalign.blast.nucl_device:NuclDeviceWords._settle --span clalign.blast.nucl_device:NuclDeviceWords._rows -- blastn -task blastn -query genes.fa -db gdb -outfmt 6 -num_threads 16 --device 0:0 -out tl_g.tsv > $OUT/tl_g.txt 2>&1
python3 -c "
import time, json
from clalign.blast.blastn import run_blastn
from clalign.blast.nucl_setup import BlastnOptions
for task, q in (('blastn', 'genes.fa'), ('megablast', 'reads.fa')):
    ph = {}
    t = time.perf_counter()
    run_blastn(q, 'gdb', BlastnOptions(task=task), device='0:0', times=ph, num_threads=16)
    print('inproc', task, q, round(time.perf_counter() - t, 3), json.dumps({k: (round(v, 3) if isinstance(v, float) else v) for k, v in ph.items()}))
"
echo total $(( $(date +%s) - T0 )) s
