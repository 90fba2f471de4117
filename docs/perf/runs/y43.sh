# y43: hmmsearch 14 models x 572,100 after the text hand-off's revert (device layouts + objects): FASTA and prepared vs pyhmmer, device Viterbi arm
source .whl/device-env.sh
python3 -m compileall -q -j 16 /tmp/site clalign tools > /dev/null 2>&1
W=/tmp/hm; mkdir -p $W
python3 -m tools.gen_protein_db -n 570000 --seed 1 -o $W/db.fa > /dev/null
python3 -c "
import gzip
with gzip.open('data/proteome.faa.gz', 'rt') as s, open('$W/db.fa', 'a') as d: d.write(s.read())"
python3 -m clalign makedb -q --force $W/db.fa $W/db
run() { local tag=$1; shift; local t0=$(date +%s.%N); "$@" > /dev/null 2> $W/err.txt; local rc=$?; echo "$tag $(python3 -c "print(round($(date +%s.%N) - $t0, 2))") s rc $rc"; }
S="python3 -m clalign hmmsearch --force --cpu 16 -o /dev/null --tblout"
for r in 0 1 2 3; do
  run "r$r prepared" $S $W/n$r.tbl data/hmms.hmm $W/db
  run "r$r fasta" $S $W/f$r.tbl data/hmms.hmm $W/db.fa
  run "r$r pyhmmer" python3 -m tools.pyhmmer_hmmsearch data/hmms.hmm $W/db.fa --cpus 16 --tblout $W/p$r.tbl
  [ $r -ge 2 ] && run "r$r prepared vit=device" env CLALIGN_HMM_VITERBI=device $S $W/v$r.tbl data/hmms.hmm $W/db
done
(cd $W && for f in n*.tbl f*.tbl v*.tbl; do grep -v '^#' $f | md5sum; done | sort | uniq -c)
diff <(grep -v '^#' $W/n1.tbl | tr -s ' ') <(grep -v '^#' $W/p1.tbl | tr -s ' ') | head -3
