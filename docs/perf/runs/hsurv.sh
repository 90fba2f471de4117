# hsurv A/B (helper hsurv; for the lead's next device call): 14 bundled models x 572,100 proteins,
# main against the branch hsurv (survivors translated in the stage's threads) and hsurv with
# search.STAGE_BUILDS = True (the sequences built there too), prepared and FASTA, pyhmmer in the
# same call; tables compared; the main loop's block time; GIL holders and a timeline of hsurv.
# Assumes y47's set-up lines (device-env.sh, /tmp/site, /tmp/py-spy) and the hsurv tree
# (clalign, kernels, tools of `git archive hsurv`) unpacked in /tmp/hs.
source .whl/device-env.sh
xz -dc .pspy/py-spy.xz > /tmp/py-spy && chmod +x /tmp/py-spy
R=$PWD
W=/tmp/hm; mkdir -p $W
python3 -m tools.gen_protein_db -n 570000 --seed 1 -o $W/db.fa > /dev/null
python3 -c "
import gzip
with gzip.open('data/proteome.faa.gz', 'rt') as s, open('$W/db.fa', 'a') as d: d.write(s.read())"
python3 -m clalign makedb -q --force $W/db.fa $W/db
rm -rf /tmp/sb && cp -r /tmp/hs /tmp/sb && sed -i 's/^STAGE_BUILDS = False/STAGE_BUILDS = True/' /tmp/sb/clalign/hmm/search.py && grep -c '^STAGE_BUILDS = True' /tmp/sb/clalign/hmm/search.py
python3 -m compileall -q -j 16 /tmp/site clalign tools /tmp/hs /tmp/sb > /dev/null 2>&1
run() { local tag=$1; shift; local t0=$(date +%s.%N); "$@" > /dev/null 2> $W/err_$tag.txt; local rc=$?; echo "$tag $(python3 -c "print(round($(date +%s.%N) - $t0, 2))") s rc $rc $(grep -o 'database [0-9.]* s\|device MSV stage [0-9.]* s\|pyhmmer stages [0-9.]* s' $W/err_$tag.txt | tr '\n' ' ')"; }
S="python3 -m clalign hmmsearch --force --cpu 16 -o /dev/null"
arm() { local a=$1; shift; if [ $a = main ]; then $S "$@"; else PYTHONPATH=/tmp/site:/tmp/$a $S "$@"; fi; }
cd $W          # every clalign run from $W (y46: -m from the repository root shadows PYTHONPATH)
run warm arm main --tblout $W/w.tbl $R/data/hmms.hmm $W/db
run warm_hs arm hs --tblout $W/w.tbl $R/data/hmms.hmm $W/db
for r in 1 2 3 4; do
  for a in main hs sb; do
    run "r${r}_prep_$a" arm $a --tblout $W/p_${a}_$r.tbl --domtblout $W/p_${a}_$r.dom $R/data/hmms.hmm $W/db
  done
  for a in hs main sb; do
    run "r${r}_fasta_$a" arm $a --tblout $W/f_${a}_$r.tbl --domtblout $W/f_${a}_$r.dom $R/data/hmms.hmm $W/db.fa
  done
  run "r${r}_pyhmmer" python3 $R/tools/pyhmmer_hmmsearch.py $R/data/hmms.hmm $W/db.fa --cpus 16 --tblout $W/y$r.tbl
done
(cd $W && for f in p_*.tbl f_*.tbl; do grep -v '^#' $f | md5sum; done | sort | uniq -c; for f in p_*.dom f_*.dom; do grep -v '^#' $f | md5sum; done | sort | uniq -c)
diff <(grep -v '^#' $W/p_hs_1.tbl | tr -s ' ') <(grep -v '^#' $W/y1.tbl | tr -s ' ') | head -3
# the main loop's blocks (wall, CPU) and the chain from the last MSV result (in-process, 3 rounds each)
for a in main hs sb; do echo "== $a"; T=$R; [ $a != main ] && T=/tmp/$a; PYTHONPATH=/tmp/site:$T python3 /tmp/hs/tools/bench_hmm_handoff.py $R/data/hmms.hmm $W/db --cpu 16 --rounds 3; done
# GIL holders and timeline of hsurv (compare y47's gil_prep.txt / tl_p8.txt)
PYTHONPATH=/tmp/site:/tmp/hs /tmp/py-spy record -r 500 -f raw --gil -t -o $OUT/gil_hs.txt -- $S --tblout $W/t.tbl $R/data/hmms.hmm $W/db > /dev/null 2>&1; echo pyspy rc $?
PYTHONPATH=/tmp/site:/tmp/hs /tmp/py-spy record -r 500 -f raw -t -o $OUT/all_hs.txt -- $S --tblout $W/t.tbl $R/data/hmms.hmm $W/db > /dev/null 2>&1; echo pyspy rc $?
SP="--span clalign.hmm.search:_Search._start --span clalign.hmm.search:_Search._msv_one --span clalign.hmm.search:_Search._second_pass --span clalign.hmm.search:_Search._model_result"
PYTHONPATH=/tmp/site:/tmp/hs python3 /tmp/hs/tools/cli_timeline.py --json $OUT/tl_hs.json --min-ms 30 $SP -- hmmsearch --force --cpu 16 -o /dev/null --tblout $W/t.tbl $R/data/hmms.hmm $W/db > $OUT/tl_hs.txt 2>&1
PYTHONPATH=/tmp/site:/tmp/sb python3 /tmp/hs/tools/cli_timeline.py --json $OUT/tl_sb.json --min-ms 30 $SP -- hmmsearch --force --cpu 16 -o /dev/null --tblout $W/t.tbl $R/data/hmms.hmm $W/db > $OUT/tl_sb.txt 2>&1
