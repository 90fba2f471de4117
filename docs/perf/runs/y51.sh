# y51: hmmsearch 14 models x 572,100: main da9d299 against hsurv (survivors translated in the MSV stage threads) and hsurv with STAGE_BUILDS = True; prepared and FASTA, pyhmmer in the same call (helper hsurv's script, 3 rounds, without its py-spy and timelines: device time)
source .whl/device-env.sh
rm -rf /tmp/hs && mkdir -p /tmp/hs && cp -r clalign kernels tools /tmp/hs/ && tar -xf .snap/y51/hsurv.tar -C /tmp/hs
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
for r in 1 2 3; do
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
for a in main hs sb; do echo "== $a"; T=$R; [ $a != main ] && T=/tmp/$a; PYTHONPATH=/tmp/site:$T python3 /tmp/hs/tools/bench_hmm_handoff.py $R/data/hmms.hmm $W/db --cpu 16 --rounds 2; done
