# y58: dsingle (DUST: one compiled call per thread; the tree) against main 4311fbb (overlay: main's nucl_dust_nb.py), megablast 100,000 reads at 1 Gbp, BLAST+ once; dsingle's timeline
source .whl/device-env.sh
S=$PWD/.snap/y58; R=$PWD
python3 -m compileall -q -j 16 /tmp/site clalign tools > /dev/null 2>&1
nvidia-smi --query-gpu=name --format=csv,noheader
for b in main; do rm -rf /tmp/tr_$b && mkdir -p /tmp/tr_$b && cp -r clalign kernels tools /tmp/tr_$b/ && tar -xf $S/$b.tar -C /tmp/tr_$b && python3 -m compileall -q -j 16 /tmp/tr_$b > /dev/null 2>&1; done
W=/tmp/bnb
T0=$(date +%s)
G=$S/GCF_001457455.1_NCTC11397_genomic.fna.gz
warm() { (cd $1 && PYTHONPATH=/tmp/site:$1 python3 -m tools.bench_blastn --warm-only --work $W/warm_$2 --genome-mb 10 --reads 8 --genes 8 --device 0:0 --cases megablast:reads,blastn:genes,megablast:genes --real $G > $OUT/warm_$2.txt 2>&1); }
warm $R dsingle & warm /tmp/tr_main main &
python3 -c "
from tools.bench_blastn import write_data
print(write_data('$W', 1000, 100000, 0, real='$G'))"
wait; echo "data+warm $(( $(date +%s) - T0 )) s"
cd $W
run() {  # label reference tree args...
  local label=$1; local ref=$2; local tree=$3; shift 3
  local t0=$(date +%s.%N)
  PYTHONPATH=/tmp/site:$tree /usr/bin/time -f "%M KiB" -o rss_$label.txt python3 -m clalign "$@" > cl_$label.tsv 2> err_$label.txt
  local t1=$(date +%s.%N)
  echo "$label $(python3 -c "print(round($t1 - $t0, 2))") s $(cat rss_$label.txt) $(cmp -s $ref cl_$label.tsv && echo identical || echo DIFFERENT) $(wc -l < cl_$label.tsv) lines"
}
bl() { local label=$1; shift; local t0=$(date +%s.%N); /usr/bin/time -f "%M KiB" -o rss_bl_$label.txt blastn "$@" -outfmt 6 -num_threads 16 > bl_$label.tsv; echo "BLAST+ $label $(python3 -c "print(round($(date +%s.%N) - $t0, 2))") s $(cat rss_bl_$label.txt) $(wc -l < bl_$label.tsv) lines"; }
bl mreads -task megablast -query reads.fa -db gdb
MA="blastn -task megablast -query reads.fa -db gdb -outfmt 6 -num_threads 16 --device 0:0"
MG="blastn -task megablast -query genes.fa -db gdb -outfmt 6 -num_threads 16 --device 0:0"
GA="blastn -task blastn -query genes.fa -db gdb -outfmt 6 -num_threads 16 --device 0:0"
run main_0 bl_mreads.tsv /tmp/tr_main $MA > /dev/null; run dsingle_0 bl_mreads.tsv $R $MA > /dev/null
for r in 1 2 3 4 5; do run mr_main_$r bl_mreads.tsv /tmp/tr_main $MA; run mr_dsingle_$r bl_mreads.tsv $R $MA; done
SP="--span clalign.blast.nucl_setup:setup_search --span clalign.blast.nucl_fasta:read_queries --span clalign.blast.nucl_setup:batch_layout --span clalign.blast.nucl_setup:ungapped_groups --span clalign.blast.nucl_setup:set_segments --span clalign.blast.nucl_dust:query_mask_arrays --span clalign.blast.nucl_scan:build_flat --span clalign.blast.nucl_context_stats:context_stats --span clalign.blast.nucl_device:NuclDeviceWords.__init__ --span clalign.blast.blastn:tabular_text --span clalign.blast.blastn:_search --span clalign.blast.nucl_pairs:PrelimHits.units --span clalign.blast.nucl_pairs:FinalHits.hit_spans --span clalign.blast.blastn:run_blastn"
PYTHONPATH=/tmp/site:$R python3 $R/tools/cli_timeline.py --json $OUT/tl_dsingle.json --min-ms 10 $SP -- $MA -out tl_dsingle.tsv > $OUT/tl_dsingle.txt 2>&1
grep -v "import\|load_overload\|_compile_for_args\|load_cached" $OUT/tl_dsingle.txt | head -40
cmp bl_mreads.tsv tl_dsingle.tsv && echo same
echo total $(( $(date +%s) - T0 )) s
