# y50: main e956428 against bup (BLASTN set-up: device buffers filled on a thread, read_queries' records, output text; helper bup's script), megablast 100,000 reads and -task blastn 1,000 genes at 1 Gbp; plus one -task blastn run each of bfeedm (main + bfeed alone) and integr (integ with 33f4b91 reverted): where integ's segfault comes from
source .whl/device-env.sh
S=$PWD/.snap/y50; R=$PWD
python3 -m compileall -q -j 16 /tmp/site clalign tools > /dev/null 2>&1
nvidia-smi --query-gpu=name --format=csv,noheader
rm -rf /tmp/tr_bup && mkdir -p /tmp/tr_bup && cp -r clalign kernels tools /tmp/tr_bup/ && tar -xf $S/bup.tar -C /tmp/tr_bup
python3 -m compileall -q -j 16 /tmp/tr_bup > /dev/null 2>&1
for b in bfeedm integr; do rm -rf /tmp/tr_$b && mkdir -p /tmp/tr_$b && cp -r clalign kernels tools /tmp/tr_$b/ && tar -xf $S/$b.tar -C /tmp/tr_$b; done
W=/tmp/bnb
T0=$(date +%s)
G=$S/GCF_001457455.1_NCTC11397_genomic.fna.gz
warm() { (cd $1 && PYTHONPATH=/tmp/site:$1 python3 -m tools.bench_blastn --warm-only --work $W/warm_$2 --genome-mb 10 --reads 8 --genes 8 --device 0:0 --cases blastn:genes,megablast:reads --real $G > $OUT/warm_$2.txt 2>&1); }
warm $R main & warm /tmp/tr_bup bup & warm /tmp/tr_bfeedm bfeedm & warm /tmp/tr_integr integr &
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
MA="blastn -task megablast -query reads.fa -db gdb -outfmt 6 -num_threads 16 --device 0:0"
GA="blastn -task blastn -query genes.fa -db gdb -outfmt 6 -num_threads 16 --device 0:0"
TASK=megablast
blastn -task megablast -query reads.fa -db gdb -outfmt 6 -num_threads 16 > bl_$TASK.tsv
run m_main_0 $R $MA > /dev/null; run m_bup_0 /tmp/tr_bup $MA > /dev/null   # the data's page cache, both arms
for r in 1 2 3; do run m_main_$r $R $MA; run m_bup_$r /tmp/tr_bup $MA; done
echo "after reads $(( $(date +%s) - T0 )) s"
TASK=blastn
PYTHONPATH=/tmp/site:$R python3 -m clalign $GA > bl_$TASK.tsv 2> /dev/null   # main's output (identical to blastn's in y45 on this data) is the reference
for r in 1 2; do run g_main_$r $R $GA; run g_bup_$r /tmp/tr_bup $GA; done
run g_bfeedm_1 /tmp/tr_bfeedm $GA; run g_integr_1 /tmp/tr_integr $GA
[ -s err_g_bfeedm_1.txt ] && tail -n 3 err_g_bfeedm_1.txt; [ -s err_g_integr_1.txt ] && tail -n 3 err_g_integr_1.txt
echo "after genes $(( $(date +%s) - T0 )) s"
SP="--span clalign.blast.nucl_setup:setup_search --span clalign.blast.nucl_setup:read_queries --span clalign.blast.nucl_device:NuclDeviceWords.__init__ --span clalign.blast.nucl_device:NuclDeviceWords._start --span clalign.blast.blastn:tabular_lines --span clalign.blast.blastn:tabular_text"
for b in main bup; do
  T=$R; [ $b = bup ] && T=/tmp/tr_bup
  PYTHONPATH=/tmp/site:$T python3 $R/tools/cli_timeline.py --json $OUT/tl_m_$b.json --min-ms 20 $SP -- $MA -out tl_m_$b.tsv > $OUT/tl_m_$b.txt 2>&1
done
PYTHONPATH=/tmp/site:/tmp/tr_bup python3 /tmp/tr_bup/tools/bench_nucl_upload.py reads.fa gdb --device 0:0 --threads 16 --rounds 4 > $OUT/upload_inproc.txt 2>&1; cat $OUT/upload_inproc.txt
echo total $(( $(date +%s) - T0 )) s
