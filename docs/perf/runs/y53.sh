# y53: main 063f594, megablast 100,000 reads at 1 Gbp: timeline, -dust no arm, py-spy (GIL holders, every thread) to find the serial part
source .whl/device-env.sh
ln -sf /opt/peers/py-spy /tmp/py-spy
S=$PWD/.snap/y53; R=$PWD
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
python3 -m clalign $MA > m_0.tsv 2>/dev/null
for r in 1 2; do t0=$(date +%s.%N); python3 -m clalign $MA > m_$r.tsv 2> /dev/null; echo "clalign reads $r $(python3 -c "print(round($(date +%s.%N) - $t0, 2))") s $(wc -l < m_$r.tsv) lines"; t0=$(date +%s.%N); python3 -m clalign $MA -dust no > d_$r.tsv 2> /dev/null; echo "clalign reads -dust no $r $(python3 -c "print(round($(date +%s.%N) - $t0, 2))") s $(wc -l < d_$r.tsv) lines"; done
SP="--span clalign.blast.nucl_setup:setup_search --span clalign.blast.nucl_setup:read_queries --span clalign.blast.nucl_setup:batch_layout --span clalign.blast.nucl_setup:ungapped_groups --span clalign.blast.nucl_setup:set_segments --span clalign.blast.nucl_dust:query_masks --span clalign.blast.nucl_scan:build_flat --span clalign.blast.nucl_context_stats:context_stats --span clalign.blast.nucl_words:compress_query_threads --span clalign.blast.nucl_device:NuclDeviceWords.__init__ --span clalign.blast.blastn:tabular_text --span clalign.blast.nucl_dust_nb:dust_intervals_many --span clalign.blast.blastn:_search --span clalign.blast.nucl_pairs:PrelimHits.units --span clalign.blast.nucl_pairs:FinalHits.hit_rows"
python3 $R/tools/cli_timeline.py --json $OUT/tl_m.json --min-ms 10 $SP -- $MA -out tl_m.tsv > $OUT/tl_m.txt 2>&1
grep -v "import\|load_overload" $OUT/tl_m.txt | head -60
/tmp/py-spy record -r 500 -f raw -t --gil -o $OUT/spy_gil.txt -- python3 -m clalign $MA -out spy1.tsv > /dev/null 2>&1; echo "pyspy gil rc $?"
/tmp/py-spy record -r 250 -f raw -t -o $OUT/spy_all.txt -- python3 -m clalign $MA -out spy2.tsv > /dev/null 2>&1; echo "pyspy all rc $?"
cmp m_1.tsv tl_m.tsv && echo same
echo total $(( $(date +%s) - T0 )) s
