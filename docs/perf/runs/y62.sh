# y62: hmmsearch 14 models x 572,100: hbias2 (y61's hbias + early database read and context, threaded residue check, long targets to pyhmmer, device Viterbi on by default at this size) against main, FASTA and prepared; LONG_TARGET off; OPENBLAS_NUM_THREADS=1; numpy import on the host; per-model Viterbi/bias kernel figures; timelines
source .whl/device-env.sh
S=$PWD/.snap/y62; R=$PWD
python3 -m compileall -q -j 16 /tmp/site clalign tools > /dev/null 2>&1
nvidia-smi --query-gpu=name --format=csv,noheader
rm -rf /tmp/tr_main && mkdir -p /tmp/tr_main && cp -r clalign kernels tools /tmp/tr_main/ && tar -xf $S/main.tar -C /tmp/tr_main && rm -f /tmp/tr_main/clalign/hmm/bias_engine.py && python3 -m compileall -q -j 16 /tmp/tr_main > /dev/null 2>&1
rm -rf /tmp/tr_nl && mkdir -p /tmp/tr_nl && cp -r clalign kernels tools /tmp/tr_nl/ && sed -i 's/^LONG_TARGET = 8192/LONG_TARGET = None/' /tmp/tr_nl/clalign/hmm/vit_search.py && grep -c "^LONG_TARGET = None" /tmp/tr_nl/clalign/hmm/vit_search.py && python3 -m compileall -q -j 16 /tmp/tr_nl > /dev/null 2>&1
for i in 1 2 3; do python3 -X importtime -c "import numpy" 2>&1 | tail -1; OPENBLAS_NUM_THREADS=1 python3 -X importtime -c "import numpy" 2>&1 | tail -1; done
python3 -c "import numpy; numpy.show_config()" 2>&1 | grep -i -A3 "blas" | head -12
W=/tmp/hm; mkdir -p $W
T0=$(date +%s)
python3 -m tools.gen_protein_db -n 570000 --seed 1 -o $W/db.fa > /dev/null
python3 -c "
import gzip
with gzip.open('data/proteome.faa.gz', 'rt') as s, open('$W/db.fa', 'a') as d: d.write(s.read())"
python3 -m clalign makedb -q --force $W/db.fa $W/db
echo "data $(( $(date +%s) - T0 )) s"
cd $W
run() { local tag=$1; local tree=$2; shift 2; local t0=$(date +%s.%N); PYTHONPATH=/tmp/site:$tree "$@" > /dev/null 2> $W/err_$tag.txt; local rc=$?; echo "$tag $(python3 -c "print(round($(date +%s.%N) - $t0, 2))") s rc $rc $(grep -o 'database [0-9.]* s\|device MSV stage [0-9.]* s\|bias + Viterbi filters on the device [0-9.]* s\|pyhmmer stages [0-9.]* s\|[0-9]* built' $W/err_$tag.txt | tr '\n' ' ')"; }
H="python3 -m clalign hmmsearch --force --cpu 16 -o /dev/null --tblout"
run warm_main /tmp/tr_main $H $W/w.tbl $R/data/hmms.hmm $W/db
run warm_n $R $H $W/w.tbl $R/data/hmms.hmm $W/db
run warm_n2 $R $H $W/w.tbl $R/data/hmms.hmm $W/db.fa
run warm_nl /tmp/tr_nl $H $W/w.tbl $R/data/hmms.hmm $W/db
for r in 1 2 3; do
  run "r${r}_prep_main" /tmp/tr_main $H $W/pm_$r.tbl $R/data/hmms.hmm $W/db
  run "r${r}_prep_n" $R $H $W/pn_$r.tbl $R/data/hmms.hmm $W/db
  run "r${r}_fasta_main" /tmp/tr_main $H $W/fm_$r.tbl $R/data/hmms.hmm $W/db.fa
  run "r${r}_fasta_n" $R $H $W/fn_$r.tbl $R/data/hmms.hmm $W/db.fa
  run "r${r}_prep_nl" /tmp/tr_nl $H $W/pl_$r.tbl $R/data/hmms.hmm $W/db
  run "r${r}_prep_nblas" $R env OPENBLAS_NUM_THREADS=1 $H $W/pb_$r.tbl $R/data/hmms.hmm $W/db
  run "r${r}_fasta_nblas" $R env OPENBLAS_NUM_THREADS=1 $H $W/fb_$r.tbl $R/data/hmms.hmm $W/db.fa
  run "r${r}_pyhmmer" $R python3 $R/tools/pyhmmer_hmmsearch.py $R/data/hmms.hmm $W/db.fa --cpus 16 --tblout $W/y$r.tbl
done
(for f in p*.tbl f*.tbl; do grep -v '^#' $f | md5sum; done | sort | uniq -c)
diff <(grep -v '^#' pn_1.tbl | tr -s ' ') <(grep -v '^#' y1.tbl | tr -s ' ') | head -3; echo "diff rc $?"
echo "runs $(( $(date +%s) - T0 )) s"
PYTHONPATH=/tmp/site:$R python3 $S/vitk.py $R/data/hmms.hmm $W/db > $OUT/vitk.txt 2>&1; head -3 $OUT/vitk.txt
PYTHONPATH=/tmp/site:$R python3 $S/vitk.py $R/data/hmms.hmm $W/db nolong > $OUT/vitk_nl.txt 2>&1; head -1 $OUT/vitk_nl.txt
SP="--span clalign.hmm.search:_Search._start --span clalign.hmm.search:_Search._msv_one --span clalign.hmm.search:_Search._second_pass --span clalign.hmm.search:_Search._model_result --span clalign.hmm.search:_Search._pyhmmer_part --span clalign.hmm.vit_search:DeviceViterbi.split --span clalign.hmm.startup:Loading.early --span clalign.hmm.startup:Loading.result --span clalign.hmm.layout:plan_blocks --span clalign.hmm.search:_Search._models"
PYTHONPATH=/tmp/site:$R python3 $R/tools/cli_timeline.py --json $OUT/tl_n.json --min-ms 15 $SP -- hmmsearch --force --cpu 16 -o /dev/null --tblout $W/t.tbl $R/data/hmms.hmm $W/db > $OUT/tl_n.txt 2>&1
PYTHONPATH=/tmp/site:$R python3 $R/tools/cli_timeline.py --json $OUT/tl_nf.json --min-ms 15 $SP -- hmmsearch --force --cpu 16 -o /dev/null --tblout $W/t.tbl $R/data/hmms.hmm $W/db.fa > $OUT/tl_nf.txt 2>&1
head -2 $OUT/tl_n.txt | cut -c1-700
echo total $(( $(date +%s) - T0 )) s
