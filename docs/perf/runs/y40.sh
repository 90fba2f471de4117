# y40: hmmsearch 14 models x 572,100 proteins after hlay (layouts filled on the device, text hand-off): new vs old arms, pyhmmer in each round
source .whl/device-env.sh
R=$PWD
python3 -m compileall -q -j 16 /tmp/site clalign tools > /dev/null 2>&1
nvidia-smi --query-gpu=name --format=csv,noheader
W=/tmp/hm; mkdir -p $W
T0=$(date +%s)
python3 -m tools.gen_protein_db -n 570000 --seed 1 -o $W/db.fa
python3 -c "
import gzip
with gzip.open('data/proteome.faa.gz', 'rt') as s, open('$W/db.fa', 'a') as d: d.write(s.read())"
python3 -m clalign makedb -q $W/db.fa $W/db
grep -c '>' $W/db.fa
echo "data $(( $(date +%s) - T0 )) s"
run() { local tag=$1; shift; local t0=$(date +%s.%N); "$@" > /dev/null 2> $W/err.txt; local rc=$?; echo "$tag $(python3 -c "print(round($(date +%s.%N) - $t0, 2))") s rc $rc"; }
OLD="env CLALIGN_HMM_LAYOUT=host CLALIGN_HMM_HANDOFF=objects"
S="python3 -m clalign hmmsearch --force --cpu 16 -o /dev/null --tblout"
for r in 0 1 2 3; do
  run "r$r new prepared" $S $W/n$r.tbl data/hmms.hmm $W/db
  run "r$r old prepared" $OLD $S $W/o$r.tbl data/hmms.hmm $W/db
  run "r$r new fasta" $S $W/nf$r.tbl data/hmms.hmm $W/db.fa
  run "r$r old fasta" $OLD $S $W/of$r.tbl data/hmms.hmm $W/db.fa
  run "r$r pyhmmer" python3 -m tools.pyhmmer_hmmsearch data/hmms.hmm $W/db.fa --cpus 16 --tblout $W/p$r.tbl
done
tail -3 $W/err.txt
(cd $W && md5sum n*.tbl o*.tbl nf*.tbl of*.tbl | awk '{print $1}' | sort | uniq -c; wc -l n1.tbl p1.tbl)
diff <(grep -v '^#' $W/n1.tbl | tr -s ' ') <(grep -v '^#' $W/p1.tbl | tr -s ' ') | head -5
python3 tools/cli_timeline.py --json $OUT/tl_hp.json --min-ms 20 -- hmmsearch --force --cpu 16 -o /dev/null --tblout $W/tl.tbl data/hmms.hmm $W/db > $OUT/tl_hp.txt 2>&1
python3 tools/cli_timeline.py --json $OUT/tl_hf.json --min-ms 20 -- hmmsearch --force --cpu 16 -o /dev/null --tblout $W/tlf.tbl data/hmms.hmm $W/db.fa > $OUT/tl_hf.txt 2>&1
echo total $(( $(date +%s) - T0 )) s
