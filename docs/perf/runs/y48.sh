# y48: main dffab34 (hfasta merged): hmmsearch 14 models x 572,100 from FASTA and prepared against pyhmmer (the session's figures); megablast 100,000 reads at 1 Gbp under py-spy (every thread, where the time after the last block goes); integ's segfault with faulthandler
source .whl/device-env.sh
xz -dc .pspy/py-spy.xz > /tmp/py-spy && chmod +x /tmp/py-spy
S=$PWD/.snap/y48; R=$PWD
python3 -m compileall -q -j 16 /tmp/site clalign tools > /dev/null 2>&1
nvidia-smi --query-gpu=name --format=csv,noheader
rm -rf /tmp/tr_integ && mkdir -p /tmp/tr_integ && cp -r clalign kernels tools /tmp/tr_integ/ && tar -xf $S/integ.tar -C /tmp/tr_integ
W=/tmp/hm; mkdir -p $W; B=/tmp/bnb
T0=$(date +%s)
python3 -c "
from tools.bench_blastn import write_data
print(write_data('$B', 1000, 100000, 1000, real='$S/GCF_001457455.1_NCTC11397_genomic.fna.gz'))" > $OUT/bdata.txt 2>&1 &
BD=$!
python3 -m tools.gen_protein_db -n 570000 --seed 1 -o $W/db.fa > /dev/null
python3 -c "
import gzip
with gzip.open('data/proteome.faa.gz', 'rt') as s, open('$W/db.fa', 'a') as d: d.write(s.read())"
python3 -m clalign makedb -q --force $W/db.fa $W/db
wait $BD; cat $OUT/bdata.txt | tail -1; echo "data $(( $(date +%s) - T0 )) s"
cd $W
run() { local tag=$1; shift; local t0=$(date +%s.%N); "$@" > /dev/null 2> $W/err_$tag.txt; local rc=$?; echo "$tag $(python3 -c "print(round($(date +%s.%N) - $t0, 2))") s rc $rc $(grep -o 'database [0-9.]* s\|device MSV stage [0-9.]* s\|pyhmmer stages [0-9.]* s' $W/err_$tag.txt | tr '\n' ' ')"; }
H="python3 -m clalign hmmsearch --force --cpu 16 -o /dev/null --tblout"
run warm $H $W/w.tbl $R/data/hmms.hmm $W/db.fa
for r in 1 2 3 4; do
  run "r${r}_fasta" $H $W/f_$r.tbl $R/data/hmms.hmm $W/db.fa
  run "r${r}_prepared" $H $W/p_$r.tbl $R/data/hmms.hmm $W/db
  run "r${r}_pyhmmer" python3 $R/tools/pyhmmer_hmmsearch.py $R/data/hmms.hmm $W/db.fa --cpus 16 --tblout $W/y$r.tbl
done
(for f in f_*.tbl p_*.tbl; do grep -v '^#' $f | md5sum; done | sort | uniq -c)
diff <(grep -v '^#' f_1.tbl | tr -s ' ') <(grep -v '^#' y1.tbl | tr -s ' ') | head -3; echo "diff rc $?"
cd $B
MA="blastn -task megablast -query reads.fa -db gdb -outfmt 6 -num_threads 16 --device 0:0"
python3 -m clalign $MA > /dev/null 2> /dev/null   # warm (kernels, numba caches)
for r in 1 2; do t0=$(date +%s.%N); python3 -m clalign $MA > m_$r.tsv 2> /dev/null; echo "megablast reads $r $(python3 -c "print(round($(date +%s.%N) - $t0, 2))") s $(wc -l < m_$r.tsv) lines"; done
/tmp/py-spy record -r 400 -f raw -t -o $OUT/spy_m.txt -- python3 -m clalign $MA -out spy.tsv > /dev/null 2>&1; echo "pyspy rc $?"
/tmp/py-spy record -r 400 -f raw -t --gil -o $OUT/spy_m_gil.txt -- python3 -m clalign $MA -out spy2.tsv > /dev/null 2>&1; echo "pyspy rc $?"
cd $B && PYTHONPATH=/tmp/site:/tmp/tr_integ timeout 300 python3 -X faulthandler -m clalign blastn -task blastn -query genes.fa -db gdb -outfmt 6 -num_threads 16 --device 0:0 > integ.tsv 2> $OUT/integ_fault.txt; echo "integ rc $? $(wc -l < integ.tsv) lines"
echo total $(( $(date +%s) - T0 )) s
