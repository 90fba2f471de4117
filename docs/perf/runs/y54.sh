# y54: pcomb (the tree: pieces merged as rows, evalues_bits table, HitRows spans, preload lock, DUST groups) against main 063f594 (overlay of main's files), megablast 100,000 reads at 1 Gbp, BLAST+ once; pcomb's timeline
source .whl/device-env.sh
ln -sf /opt/peers/py-spy /tmp/py-spy
S=$PWD/.snap/y54; R=$PWD
python3 -m compileall -q -j 16 /tmp/site clalign tools > /dev/null 2>&1
nvidia-smi --query-gpu=name --format=csv,noheader
rm -rf /tmp/tr_main && mkdir -p /tmp/tr_main && cp -r clalign kernels tools /tmp/tr_main/ && tar -xf $S/main.tar -C /tmp/tr_main
python3 -m compileall -q -j 16 /tmp/tr_main > /dev/null 2>&1
W=/tmp/bnb
T0=$(date +%s)
G=$S/GCF_001457455.1_NCTC11397_genomic.fna.gz
warm() { (cd $1 && PYTHONPATH=/tmp/site:$1 python3 -m tools.bench_blastn --warm-only --work $W/warm_$2 --genome-mb 10 --reads 8 --genes 8 --device 0:0 --cases megablast:reads --real $G > $OUT/warm_$2.txt 2>&1); }
warm $R pcomb & warm /tmp/tr_main main &
python3 -c "
from tools.bench_blastn import write_data
print(write_data('$W', 1000, 100000, 0, real='$G'))"
wait; echo "data+warm $(( $(date +%s) - T0 )) s"
cd $W
run() {  # label tree args...
  local label=$1; local tree=$2; shift 2
  local t0=$(date +%s.%N)
  PYTHONPATH=/tmp/site:$tree /usr/bin/time -f "%M KiB" -o rss_$label.txt python3 -m clalign "$@" > cl_$label.tsv 2> err_$label.txt
  local t1=$(date +%s.%N)
  echo "$label $(python3 -c "print(round($t1 - $t0, 2))") s $(cat rss_$label.txt) $(cmp -s bl.tsv cl_$label.tsv && echo identical || echo DIFFERENT) $(wc -l < cl_$label.tsv) lines"
}
MA="blastn -task megablast -query reads.fa -db gdb -outfmt 6 -num_threads 16 --device 0:0"
t0=$(date +%s.%N); blastn -task megablast -query reads.fa -db gdb -outfmt 6 -num_threads 16 > bl.tsv; echo "BLAST+ $(python3 -c "print(round($(date +%s.%N) - $t0, 2))") s $(wc -l < bl.tsv) lines"
run main_0 /tmp/tr_main $MA > /dev/null; run pcomb_0 $R $MA > /dev/null
for r in 1 2 3 4; do run main_$r /tmp/tr_main $MA; run pcomb_$r $R $MA; done
SP="--span clalign.blast.nucl_setup:setup_search --span clalign.blast.nucl_setup:read_queries --span clalign.blast.nucl_setup:batch_layout --span clalign.blast.nucl_setup:ungapped_groups --span clalign.blast.nucl_setup:set_segments --span clalign.blast.nucl_dust:query_masks --span clalign.blast.nucl_scan:build_flat --span clalign.blast.nucl_context_stats:context_stats --span clalign.blast.nucl_device:NuclDeviceWords.__init__ --span clalign.blast.blastn:tabular_text --span clalign.blast.blastn:_search --span clalign.blast.nucl_pairs:PrelimHits.units --span clalign.blast.nucl_pairs:FinalHits.hit_spans --span clalign.blast.blastn:run_blastn"
PYTHONPATH=/tmp/site:$R python3 $R/tools/cli_timeline.py --json $OUT/tl_pcomb.json --min-ms 10 $SP -- $MA -out tl_pcomb.tsv > $OUT/tl_pcomb.txt 2>&1
grep -v "import\|load_overload" $OUT/tl_pcomb.txt | head -50
cmp bl.tsv tl_pcomb.tsv && echo same
/tmp/py-spy record -r 250 -f raw -t -o $OUT/spy_all.txt -- python3 -m clalign $MA -out spy2.tsv > /dev/null 2>&1; echo "pyspy all rc $?"
echo total $(( $(date +%s) - T0 )) s
