# y52: main cbaa988 (bup and hfasta merged), megablast 100,000 reads at 1 Gbp against BLAST+ 2.12 in the same call (the session's final reads figure), and a timeline of setup_search's parts
source .whl/device-env.sh
S=$PWD/.snap/y52; R=$PWD
python3 -m compileall -q -j 16 /tmp/site clalign tools > /dev/null 2>&1
nvidia-smi --query-gpu=name --format=csv,noheader
W=/tmp/bnb
T0=$(date +%s)
G=$S/GCF_001457455.1_NCTC11397_genomic.fna.gz
python3 -m tools.bench_blastn --warm-only --work $W/warm --genome-mb 10 --reads 8 --genes 8 --device 0:0 --cases megablast:reads --real $G > $OUT/warm.txt 2>&1 &
python3 -c "
from tools.bench_blastn import write_data
print(write_data('$W', 1000, 100000, 0, real='$G'))"
wait; echo "data+warm $(( $(date +%s) - T0 )) s"
cd $W
MA="blastn -task megablast -query reads.fa -db gdb -outfmt 6 -num_threads 16 --device 0:0"
t0=$(date +%s.%N); /usr/bin/time -f "%M KiB" -o rss_bl.txt blastn -task megablast -query reads.fa -db gdb -outfmt 6 -num_threads 16 > bl.tsv; echo "BLAST+ reads $(python3 -c "print(round($(date +%s.%N) - $t0, 2))") s $(cat rss_bl.txt) $(wc -l < bl.tsv) lines"
python3 -m clalign $MA > /dev/null 2>&1
for r in 1 2 3; do t0=$(date +%s.%N); /usr/bin/time -f "%M KiB" -o rss.txt python3 -m clalign $MA > m_$r.tsv 2> /dev/null; echo "clalign reads $r $(python3 -c "print(round($(date +%s.%N) - $t0, 2))") s $(cat rss.txt) $(cmp -s bl.tsv m_$r.tsv && echo identical || echo DIFFERENT) $(wc -l < m_$r.tsv) lines"; done
SP="--span clalign.blast.nucl_setup:setup_search --span clalign.blast.nucl_setup:read_queries --span clalign.blast.nucl_setup:batch_layout --span clalign.blast.nucl_setup:ungapped_groups --span clalign.blast.nucl_setup:set_segments --span clalign.blast.nucl_dust:query_masks --span clalign.blast.nucl_scan:build_flat --span clalign.blast.nucl_context_stats:context_stats --span clalign.blast.nucl_words:compress_query_threads --span clalign.blast.nucl_device:NuclDeviceWords.__init__ --span clalign.blast.blastn:tabular_text"
python3 $R/tools/cli_timeline.py --json $OUT/tl_m.json --min-ms 10 $SP -- $MA -out tl_m.tsv > $OUT/tl_m.txt 2>&1
grep -v "import\|load_overload\|load_cached" $OUT/tl_m.txt | head -40
echo total $(( $(date +%s) - T0 )) s
