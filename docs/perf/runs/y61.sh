# y61: hmmsearch 14 models x 572,100: hbias (bias filter on the device, no numba on the GPU path) with the device Viterbi filter forced, against main (pyhmmer's Viterbi; and main with the device Viterbi), FASTA and prepared, pyhmmer in the same call; timelines
source .whl/device-env.sh
xz -dc .pspy/py-spy.xz > /tmp/py-spy && chmod +x /tmp/py-spy
S=$PWD/.snap/y61; R=$PWD
python3 -m compileall -q -j 16 /tmp/site clalign tools > /dev/null 2>&1
nvidia-smi --query-gpu=name --format=csv,noheader
rm -rf /tmp/tr_main && mkdir -p /tmp/tr_main && cp -r clalign kernels tools /tmp/tr_main/ && tar -xf $S/main.tar -C /tmp/tr_main && rm -f /tmp/tr_main/clalign/hmm/bias_engine.py && python3 -m compileall -q -j 16 /tmp/tr_main > /dev/null 2>&1
W=/tmp/hm; mkdir -p $W
T0=$(date +%s)
python3 -m tools.gen_protein_db -n 570000 --seed 1 -o $W/db.fa > /dev/null
python3 -c "
import gzip
with gzip.open('data/proteome.faa.gz', 'rt') as s, open('$W/db.fa', 'a') as d: d.write(s.read())"
python3 -m clalign makedb -q --force $W/db.fa $W/db
echo "data $(( $(date +%s) - T0 )) s"
cd $W
run() { local tag=$1; local tree=$2; shift 2; local t0=$(date +%s.%N); PYTHONPATH=/tmp/site:$tree "$@" > /dev/null 2> $W/err_$tag.txt; local rc=$?; echo "$tag $(python3 -c "print(round($(date +%s.%N) - $t0, 2))") s rc $rc $(grep -o 'passed the device MSV filter\|database [0-9.]* s\|device MSV stage [0-9.]* s\|pyhmmer stages [0-9.]* s\|kernels from the cache\|[0-9]* built' $W/err_$tag.txt | tr '\n' ' ')"; }
H="python3 -m clalign hmmsearch --force --cpu 16 -o /dev/null --tblout"
D="env CLALIGN_HMM_VITERBI=device"
run warm_main /tmp/tr_main $H $W/w.tbl $R/data/hmms.hmm $W/db
run warm_md /tmp/tr_main $D $H $W/w.tbl $R/data/hmms.hmm $W/db
run warm_nd $R $D $H $W/w.tbl $R/data/hmms.hmm $W/db
run warm_nd2 $R $D $H $W/w.tbl $R/data/hmms.hmm $W/db.fa
for r in 1 2 3; do
  run "r${r}_prep_main" /tmp/tr_main $H $W/pm_$r.tbl $R/data/hmms.hmm $W/db
  run "r${r}_prep_nd" $R $D $H $W/pn_$r.tbl $R/data/hmms.hmm $W/db
  run "r${r}_fasta_main" /tmp/tr_main $H $W/fm_$r.tbl $R/data/hmms.hmm $W/db.fa
  run "r${r}_fasta_nd" $R $D $H $W/fn_$r.tbl $R/data/hmms.hmm $W/db.fa
  run "r${r}_pyhmmer" $R python3 $R/tools/pyhmmer_hmmsearch.py $R/data/hmms.hmm $W/db.fa --cpus 16 --tblout $W/y$r.tbl
done
for r in 1 2; do run "r${r}_prep_md" /tmp/tr_main $D $H $W/pd_$r.tbl $R/data/hmms.hmm $W/db; run "r${r}_prep_n" $R $H $W/pp_$r.tbl $R/data/hmms.hmm $W/db; done
(for f in p*.tbl f*.tbl; do grep -v '^#' $f | md5sum; done | sort | uniq -c)
diff <(grep -v '^#' pn_1.tbl | tr -s ' ') <(grep -v '^#' y1.tbl | tr -s ' ') | head -3; echo "diff rc $?"
echo "runs $(( $(date +%s) - T0 )) s"
SP="--span clalign.hmm.search:_Search._start --span clalign.hmm.search:_Search._msv_one --span clalign.hmm.search:_Search._second_pass --span clalign.hmm.search:_Search._first_part --span clalign.hmm.search:_Search._model_result --span clalign.hmm.search:_Search._pyhmmer_part --span clalign.hmm.vit_search:DeviceViterbi.split --span clalign.hmm.search:_Search._device_viterbi"
CLALIGN_HMM_VITERBI=device PYTHONPATH=/tmp/site:$R python3 $R/tools/cli_timeline.py --json $OUT/tl_nd.json --min-ms 20 $SP -- hmmsearch --force --cpu 16 -o /dev/null --tblout $W/t.tbl $R/data/hmms.hmm $W/db > $OUT/tl_nd.txt 2>&1
CLALIGN_HMM_VITERBI=device PYTHONPATH=/tmp/site:$R python3 $R/tools/cli_timeline.py --json $OUT/tl_ndf.json --min-ms 20 $SP -- hmmsearch --force --cpu 16 -o /dev/null --tblout $W/t.tbl $R/data/hmms.hmm $W/db.fa > $OUT/tl_ndf.txt 2>&1
head -3 $OUT/tl_nd.txt | cut -c1-600
CLALIGN_HMM_VITERBI=device PYTHONPATH=/tmp/site:$R /tmp/py-spy record -r 250 -f raw -t -o $OUT/spy_nd.txt -- python3 -m clalign hmmsearch --force --cpu 16 -o /dev/null --tblout $W/t.tbl $R/data/hmms.hmm $W/db > /dev/null 2>&1; echo pyspy rc $?
echo total $(( $(date +%s) - T0 )) s
