# y47: hmmsearch (hfasta arm again) (every clalign run from $W, so that the working directory does not shadow PYTHONPATH: y46's hfasta arms ran main's code) 14 models x 572,100, main b4a99a1: MSV stage threads (MSV_WORKERS 1/2/4 against the default 8), prepared and FASTA, pyhmmer in the same call; py-spy of the GIL holders; timeline with 2 workers
source .whl/device-env.sh
xz -dc .pspy/py-spy.xz > /tmp/py-spy && chmod +x /tmp/py-spy
R=$PWD
python3 -m compileall -q -j 16 /tmp/site clalign tools > /dev/null 2>&1
W=/tmp/hm; mkdir -p $W
python3 -m tools.gen_protein_db -n 570000 --seed 1 -o $W/db.fa > /dev/null
python3 -c "
import gzip
with gzip.open('data/proteome.faa.gz', 'rt') as s, open('$W/db.fa', 'a') as d: d.write(s.read())"
python3 -m clalign makedb -q --force $W/db.fa $W/db
run() { local tag=$1; shift; local t0=$(date +%s.%N); "$@" > /dev/null 2> $W/err_$tag.txt; local rc=$?; echo "$tag $(python3 -c "print(round($(date +%s.%N) - $t0, 2))") s rc $rc $(grep -o 'database [0-9.]* s\|device MSV stage [0-9.]* s\|pyhmmer stages [0-9.]* s' $W/err_$tag.txt | tr '\n' ' ')"; }
S="python3 -m clalign hmmsearch --force --cpu 16 -o /dev/null --tblout"
for n in 1 2 4; do rm -rf /tmp/w$n && mkdir -p /tmp/w$n && cp -r clalign kernels /tmp/w$n/ && sed -i "s/^MSV_WORKERS: int | None = None/MSV_WORKERS: int | None = $n/" /tmp/w$n/clalign/hmm/search.py && grep -c "MSV_WORKERS: int | None = $n" /tmp/w$n/clalign/hmm/search.py && python3 -m compileall -q /tmp/w$n > /dev/null; done
mw() { local n=$1; shift; PYTHONPATH=/tmp/site:/tmp/w$n python3 -m clalign hmmsearch --force --cpu 16 -o /dev/null --tblout "$@"; }
rm -rf /tmp/tr && mkdir -p /tmp/tr && cp -r clalign kernels /tmp/tr/ && tar -xf .snap/y47/hfasta.tar -C /tmp/tr && python3 -m compileall -q /tmp/tr > /dev/null
cd $W
run warm $S $W/w.tbl $R/data/hmms.hmm $W/db
for r in 1 2 3; do
  run "r${r}_prep_w8" $S $W/p8_$r.tbl $R/data/hmms.hmm $W/db
  run "r${r}_prep_w1" mw 1 $W/p1_$r.tbl $R/data/hmms.hmm $W/db
  run "r${r}_prep_w2" mw 2 $W/p2_$r.tbl $R/data/hmms.hmm $W/db
  run "r${r}_prep_w4" mw 4 $W/p4_$r.tbl $R/data/hmms.hmm $W/db
  run "r${r}_fasta_w8" $S $W/f8_$r.tbl $R/data/hmms.hmm $W/db.fa
  run "r${r}_fasta_w2" mw 2 $W/f2_$r.tbl $R/data/hmms.hmm $W/db.fa
  run "r${r}_fasta_hfasta" env PYTHONPATH=/tmp/site:/tmp/tr $S $W/fh_$r.tbl $R/data/hmms.hmm $W/db.fa
  run "r${r}_pyhmmer" python3 $R/tools/pyhmmer_hmmsearch.py $R/data/hmms.hmm $W/db.fa --cpus 16 --tblout $W/y$r.tbl
done
(cd $W && for f in p*.tbl f*.tbl; do grep -v '^#' $f | md5sum; done | sort | uniq -c)
diff <(grep -v '^#' $W/p8_1.tbl | tr -s ' ') <(grep -v '^#' $W/y1.tbl | tr -s ' ') | head -3
/tmp/py-spy record -r 500 -f raw --gil -t -o $OUT/gil_prep.txt -- $S $W/t.tbl $R/data/hmms.hmm $W/db > /dev/null 2>&1; echo pyspy rc $?
/tmp/py-spy record -r 500 -f raw -t -o $OUT/all_prep.txt -- $S $W/t.tbl $R/data/hmms.hmm $W/db > /dev/null 2>&1; echo pyspy rc $?
/tmp/py-spy record -r 500 -f raw --gil -t -o $OUT/gil_fasta.txt -- $S $W/t.tbl $R/data/hmms.hmm $W/db.fa > /dev/null 2>&1; echo pyspy rc $?
SP="--span clalign.hmm.search:_Search._start --span clalign.hmm.search:_Search._msv_one --span clalign.hmm.search:_Search._second_pass --span clalign.hmm.search:_Search._first_part --span clalign.hmm.search:_Search._model_result"
PYTHONPATH=/tmp/site:/tmp/w2 python3 $R/tools/cli_timeline.py --json $OUT/tl_p2.json --min-ms 30 $SP -- hmmsearch --force --cpu 16 -o /dev/null --tblout $W/t.tbl $R/data/hmms.hmm $W/db > $OUT/tl_p2.txt 2>&1
python3 $R/tools/cli_timeline.py --json $OUT/tl_p8.json --min-ms 30 $SP -- hmmsearch --force --cpu 16 -o /dev/null --tblout $W/t.tbl $R/data/hmms.hmm $W/db > $OUT/tl_p8.txt 2>&1
