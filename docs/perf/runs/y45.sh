# y45: main b4a99a1 against integ (bfeed+bfix), msetup (set-up for many reads) and cand (both), merged with main; 1 Gbp, -task blastn 1,000 genes and megablast 100,000 reads, interleaved, with BLAST+ 2.12 in the same call
source .whl/device-env.sh
S=$PWD/.snap/y45; R=$PWD
python3 -m compileall -q -j 16 /tmp/site clalign tools > /dev/null 2>&1
nvidia-smi --query-gpu=name --format=csv,noheader
for b in integ msetup cand; do
  rm -rf /tmp/tr_$b && mkdir -p /tmp/tr_$b && cp -r clalign kernels tools /tmp/tr_$b/ && tar -xf $S/$b.tar -C /tmp/tr_$b
  python3 -m compileall -q -j 16 /tmp/tr_$b > /dev/null 2>&1
done
W=/tmp/bnb
T0=$(date +%s)
G=$S/GCF_001457455.1_NCTC11397_genomic.fna.gz
warm() { (cd $1 && PYTHONPATH=/tmp/site:$1 python3 -m tools.bench_blastn --warm-only --work $W/warm_$2 --genome-mb 10 --reads 8 --genes 8 --device 0:0 --cases blastn:genes,megablast:reads --real $G > $OUT/warm_$2.txt 2>&1); }
warm $R main & warm /tmp/tr_integ integ & warm /tmp/tr_cand cand &
python3 -c "
from tools.bench_blastn import write_data
print(write_data('$W', 1000, 100000, 1000, real='$G'))"
wait; echo "data+warm $(( $(date +%s) - T0 )) s"
cd $W
run() {  # label tree args...
  local label=$1; local tree=$2; shift 2
  local t0=$(date +%s.%N)
  PYTHONPATH=/tmp/site:$tree /usr/bin/time -f "%M KiB" -o rss_$label.txt python3 -m clalign "$@" > cl_$label.tsv 2> err_$label.txt
  local t1=$(date +%s.%N)
  echo "$label $(python3 -c "print(round($t1 - $t0, 2))") s $(cat rss_$label.txt) $(cmp -s bl_$TASK.tsv cl_$label.tsv && echo identical || echo DIFFERENT) $(wc -l < cl_$label.tsv) lines"
}
bl() {  # label args...
  local label=$1; shift
  local t0=$(date +%s.%N)
  /usr/bin/time -f "%M KiB" -o rss_bl.txt blastn "$@" > bl_$TASK.tsv
  echo "BLAST+ $label $(python3 -c "print(round($(date +%s.%N) - $t0, 2))") s $(cat rss_bl.txt) $(wc -l < bl_$TASK.tsv) lines"
}
GA="blastn -task blastn -query genes.fa -db gdb -outfmt 6 -num_threads 16 --device 0:0"
MA="blastn -task megablast -query reads.fa -db gdb -outfmt 6 -num_threads 16 --device 0:0"
TASK=blastn
bl blastn1000 -task blastn -query genes.fa -db gdb -outfmt 6 -num_threads 16
for r in 1 2 3; do
  run g_main_$r $R $GA; run g_integ_$r /tmp/tr_integ $GA; run g_cand_$r /tmp/tr_cand $GA
done
echo "after blastn $(( $(date +%s) - T0 )) s"
TASK=megablast
bl reads100k -task megablast -query reads.fa -db gdb -outfmt 6 -num_threads 16
for r in 1 2 3; do
  run m_main_$r $R $MA; run m_msetup_$r /tmp/tr_msetup $MA; run m_cand_$r /tmp/tr_cand $MA
done
echo "after reads $(( $(date +%s) - T0 )) s"
for b in main cand; do
  T=$R; [ $b = cand ] && T=/tmp/tr_cand
  PYTHONPATH=/tmp/site:$T python3 $R/tools/cli_timeline.py --json $OUT/tl_m_$b.json --min-ms 20 --span clalign.blast.nucl_setup:setup_search --span clalign.blast.nucl_device:NuclDeviceWords._start -- $MA -out tl_m.tsv > $OUT/tl_m_$b.txt 2>&1
done
PYTHONPATH=/tmp/site:/tmp/tr_cand python3 $R/tools/cli_timeline.py --json $OUT/tl_g_cand.json --min-ms 20 --span clalign.blast.nucl_setup:setup_search --span clalign.blast.nucl_device:NuclDeviceWords._start --span clalign.blast.nucl_device:NuclDeviceWords._settle -- $GA -out tl_g.tsv > $OUT/tl_g_cand.txt 2>&1
echo total $(( $(date +%s) - T0 )) s
