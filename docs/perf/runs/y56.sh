# y56: hmmsearch 14 models x 572,100 (FASTA and prepared) against pyhmmer, the interpreter's switch interval 5 ms (default) / 1 ms / 0.2 ms (python3 -c ... sys.setswitchinterval), main tree
source .whl/device-env.sh
S=$PWD/.snap/y56; R=$PWD
python3 -m compileall -q -j 16 /tmp/site clalign tools > /dev/null 2>&1
nvidia-smi --query-gpu=name --format=csv,noheader
W=/tmp/hm; mkdir -p $W
T0=$(date +%s)
python3 -m tools.gen_protein_db -n 570000 --seed 1 -o $W/db.fa > /dev/null
python3 -c "
import gzip
with gzip.open('data/proteome.faa.gz', 'rt') as s, open('$W/db.fa', 'a') as d: d.write(s.read())"
python3 -m clalign makedb -q --force $W/db.fa $W/db
echo "data $(( $(date +%s) - T0 )) s"
cd $W
run() { local tag=$1; shift; local t0=$(date +%s.%N); "$@" > /dev/null 2> $W/err_$tag.txt; local rc=$?; echo "$tag $(python3 -c "print(round($(date +%s.%N) - $t0, 2))") s rc $rc $(grep -o 'database [0-9.]* s\|device MSV stage [0-9.]* s\|pyhmmer stages [0-9.]* s' $W/err_$tag.txt | tr '\n' ' ')"; }
C="import sys; sys.setswitchinterval(float(sys.argv.pop(1))); from clalign.cli import run; run()"
H="hmmsearch --force --cpu 16 -o /dev/null --tblout"
python3 -c "$C" 0.005 $H $W/w.tbl $R/data/hmms.hmm $W/db.fa > /dev/null 2>&1
python3 -c "$C" 0.005 $H $W/w.tbl $R/data/hmms.hmm $W/db > /dev/null 2>&1
for r in 1 2 3; do
  for si in 0.005 0.001 0.0002; do
    run "r${r}_fasta_$si" python3 -c "$C" $si $H $W/f_${r}_$si.tbl $R/data/hmms.hmm $W/db.fa
    run "r${r}_prepared_$si" python3 -c "$C" $si $H $W/p_${r}_$si.tbl $R/data/hmms.hmm $W/db
  done
  run "r${r}_pyhmmer" python3 $R/tools/pyhmmer_hmmsearch.py $R/data/hmms.hmm $W/db.fa --cpus 16 --tblout $W/y$r.tbl
done
(for f in f_*.tbl p_*.tbl; do grep -v '^#' $f | md5sum; done | sort | uniq -c)
diff <(grep -v '^#' f_1_0.005.tbl | tr -s ' ') <(grep -v '^#' y1.tbl | tr -s ' ') | head -3; echo "diff rc $?"
echo total $(( $(date +%s) - T0 )) s
