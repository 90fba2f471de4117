# y69: hmmsearch after the review's refactors (main 2986265: one per-target launch for the Viterbi, Forward and bias kernels) against the session's start (a8e266a's hmm code as overlay), 14 models x 572,100, 3 rounds against main, 14 models x 572,100 FASTA and prepared, pyhmmer in the same call; then 1,000 Pfam-like models x the same database (hfwd2 twice, pyhmmer once)
source .whl/device-env.sh
S=$PWD/.snap/y69; R=$PWD
python3 -m compileall -q -j 16 /tmp/site clalign tools > /dev/null 2>&1
nvidia-smi --query-gpu=name --format=csv,noheader
rm -rf /tmp/tr_main && mkdir -p /tmp/tr_main && cp -r clalign kernels tools /tmp/tr_main/ && tar -xf $S/main.tar -C /tmp/tr_main && rm -f /tmp/tr_main/clalign/hmm/bias_engine.py /tmp/tr_main/clalign/hmm/fwd_engine.py /tmp/tr_main/clalign/hmm/fwd_reference.py /tmp/tr_main/clalign/hmm/layouts.py /tmp/tr_main/clalign/cachedir.py && python3 -m compileall -q -j 16 /tmp/tr_main > /dev/null 2>&1
W=/tmp/hm; mkdir -p $W
T0=$(date +%s)
python3 -m tools.gen_protein_db -n 570000 --seed 1 -o $W/db.fa > /dev/null
python3 -c "
import gzip
with gzip.open('data/proteome.faa.gz', 'rt') as s, open('$W/db.fa', 'a') as d: d.write(s.read())"
python3 -m clalign makedb -q --force $W/db.fa $W/db
echo "data $(( $(date +%s) - T0 )) s"
cd $W
run() { local tag=$1; local tree=$2; shift 2; local t0=$(date +%s.%N); PYTHONPATH=/tmp/site:$tree "$@" > /dev/null 2> $W/err_$tag.txt; local rc=$?; echo "$tag $(python3 -c "print(round($(date +%s.%N) - $t0, 2))") s rc $rc $(grep -o 'database [0-9.]* s\|device MSV stage [0-9.]* s\|bias + Viterbi filters on the device [0-9.]* s\|pyhmmer stages [0-9.]* s\|[0-9]* built\|[0-9.]* TCUPS' $W/err_$tag.txt | tr '\n' ' ')"; }
H="python3 -m clalign hmmsearch --force --cpu 16 -o /dev/null --tblout"
run warm_main /tmp/tr_main $H $W/w.tbl $R/data/hmms.hmm $W/db
run warm_n $R $H $W/w.tbl $R/data/hmms.hmm $W/db
run warm_n2 $R $H $W/w.tbl $R/data/hmms.hmm $W/db.fa
for r in 1 2 3; do
  run "r${r}_prep_main" /tmp/tr_main $H $W/pm_$r.tbl $R/data/hmms.hmm $W/db
  run "r${r}_prep_n" $R $H $W/pn_$r.tbl $R/data/hmms.hmm $W/db
  run "r${r}_fasta_main" /tmp/tr_main $H $W/fm_$r.tbl $R/data/hmms.hmm $W/db.fa
  run "r${r}_fasta_n" $R $H $W/fn_$r.tbl $R/data/hmms.hmm $W/db.fa
  run "r${r}_pyhmmer" $R python3 $R/tools/pyhmmer_hmmsearch.py $R/data/hmms.hmm $W/db.fa --cpus 16 --tblout $W/y$r.tbl
done
(for f in p*.tbl f*.tbl; do grep -v '^#' $f | md5sum; done | sort | uniq -c)
diff <(grep -v '^#' pn_1.tbl | tr -s ' ') <(grep -v '^#' y1.tbl | tr -s ' ') | head -3; echo "diff rc $?"
SP="--span clalign.hmm.search:_Search._start --span clalign.hmm.search:_Search._msv_one --span clalign.hmm.search:_Search._second_pass --span clalign.hmm.search:_Search._model_result --span clalign.hmm.vit_search:DeviceViterbi.split --span clalign.hmm.vit_search:DeviceViterbi._forward --span clalign.hmm.layout:plan_blocks --span clalign.hmm.search:_Search._models --span clalign.cl_early:_make"
PYTHONPATH=/tmp/site:$R python3 $R/tools/cli_timeline.py --json $OUT/tl_n.json --min-ms 10 $SP -- hmmsearch --force --cpu 16 -o /dev/null --tblout $W/t.tbl $R/data/hmms.hmm $W/db > $OUT/tl_n.txt 2>&1
echo "14 done $(( $(date +%s) - T0 )) s"
grep -v "_model_result\|_second_pass" $OUT/tl_n.txt | head -45 | cut -c1-150
echo total $(( $(date +%s) - T0 )) s
