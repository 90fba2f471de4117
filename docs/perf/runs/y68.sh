# y68: hmmsearch on other data than the session's runs: 300,000 proteins of another seed + the bundled proteome, the 14 bundled models and 100 Pfam-like models of another seed; main 962ba74, tables against pyhmmer's, FASTA and prepared
source .whl/device-env.sh
R=$PWD
python3 -m compileall -q -j 16 /tmp/site clalign tools > /dev/null 2>&1
nvidia-smi --query-gpu=name --format=csv,noheader
W=/tmp/hm2; mkdir -p $W
T0=$(date +%s)
python3 -m tools.gen_pfamlike_hmms -n 100 --seed 77 -o $W/pf100.hmm --jobs 8 > /dev/null 2>&1 &
python3 -m tools.gen_protein_db -n 300000 --seed 7 -o $W/db.fa > /dev/null
python3 -c "
import gzip
with gzip.open('data/proteome.faa.gz', 'rt') as s, open('$W/db.fa', 'a') as d: d.write(s.read())"
python3 -m clalign makedb -q --force $W/db.fa $W/db
wait
cat $R/data/hmms.hmm $W/pf100.hmm > $W/mix.hmm; grep -c "^//" $W/mix.hmm
echo "data $(( $(date +%s) - T0 )) s"
cd $W
run() { local tag=$1; shift; local t0=$(date +%s.%N); PYTHONPATH=/tmp/site:$R "$@" > /dev/null 2> $W/err_$tag.txt; local rc=$?; echo "$tag $(python3 -c "print(round($(date +%s.%N) - $t0, 2))") s rc $rc $(grep -o 'bias, Viterbi and Forward filters on the device [0-9.]* s\|pyhmmer stages [0-9.]* s' $W/err_$tag.txt | tr '\n' ' ')"; }
H="python3 -m clalign hmmsearch --force --cpu 16"
for set in hmms mix; do
  M=$R/data/hmms.hmm; [ $set = mix ] && M=$W/mix.hmm
  run ${set}_warm $H -o /dev/null --tblout w.tbl $M $W/db
  run ${set}_prep $H -o p_$set.out --tblout p_$set.tbl --domtblout p_$set.dom $M $W/db
  run ${set}_fasta $H -o f_$set.out --tblout f_$set.tbl --domtblout f_$set.dom $M $W/db.fa
  run ${set}_pyhmmer python3 $R/tools/pyhmmer_hmmsearch.py $M $W/db.fa --cpus 16 --tblout y_$set.tbl --domtblout y_$set.dom
  for x in tbl dom; do
    cmp <(grep -v '^#' p_$set.$x) <(grep -v '^#' f_$set.$x) && echo "$set $x prepared = FASTA ($(grep -vc '^#' p_$set.$x) rows)"
    diff <(grep -v '^#' p_$set.$x | tr -s ' ') <(grep -v '^#' y_$set.$x | tr -s ' ') > d_$set.$x; echo "$set $x vs pyhmmer: diff rc $? $(wc -l < d_$set.$x) lines"
  done
done
head -5 d_mix.tbl d_mix.dom
echo total $(( $(date +%s) - T0 )) s
