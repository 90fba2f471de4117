# y49 (y48's BLASTN half, which needs BLAST+'s makeblastdb: .pdeb): main dffab34, megablast 100,000 reads at 1 Gbp under py-spy (every thread, where the time after the last block goes); integ's segfault with faulthandler
source .whl/device-env.sh
ln -sf /opt/peers/py-spy /tmp/py-spy
S=$PWD/.snap/y49; R=$PWD
python3 -m compileall -q -j 16 /tmp/site clalign tools > /dev/null 2>&1
nvidia-smi --query-gpu=name --format=csv,noheader
rm -rf /tmp/tr_integ && mkdir -p /tmp/tr_integ && cp -r clalign kernels tools /tmp/tr_integ/ && tar -xf $S/integ.tar -C /tmp/tr_integ
B=/tmp/bnb
T0=$(date +%s)
python3 -c "
from tools.bench_blastn import write_data
print(write_data('$B', 1000, 100000, 1000, real='$S/GCF_001457455.1_NCTC11397_genomic.fna.gz'))"
echo "data $(( $(date +%s) - T0 )) s"
cd $B
MA="blastn -task megablast -query reads.fa -db gdb -outfmt 6 -num_threads 16 --device 0:0"
python3 -m clalign $MA > /dev/null 2> /dev/null   # warm (kernels, numba caches)
for r in 1 2; do t0=$(date +%s.%N); python3 -m clalign $MA > m_$r.tsv 2> /dev/null; echo "megablast reads $r $(python3 -c "print(round($(date +%s.%N) - $t0, 2))") s $(wc -l < m_$r.tsv) lines"; done
/tmp/py-spy record -r 400 -f raw -t -o $OUT/spy_m.txt -- python3 -m clalign $MA -out spy.tsv > /dev/null 2>&1; echo "pyspy rc $?"
/tmp/py-spy record -r 400 -f raw -t --gil -o $OUT/spy_m_gil.txt -- python3 -m clalign $MA -out spy2.tsv > /dev/null 2>&1; echo "pyspy rc $?"
cd $B && PYTHONPATH=/tmp/site:/tmp/tr_integ timeout 300 python3 -X faulthandler -m clalign blastn -task blastn -query genes.fa -db gdb -outfmt 6 -num_threads 16 --device 0:0 > integ.tsv 2> $OUT/integ_fault.txt; echo "integ rc $? $(wc -l < integ.tsv) lines"
echo total $(( $(date +%s) - T0 )) s
