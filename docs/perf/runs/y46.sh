# y46: hmmsearch 14 models x 572,100 from FASTA: hfasta (numpy FASTA scan, merged with main b4a99a1) against main; prepared database and pyhmmer in the same call; timelines
source .whl/device-env.sh
S=$PWD/.snap/y46; R=$PWD
python3 -m compileall -q -j 16 /tmp/site clalign tools > /dev/null 2>&1
rm -rf /tmp/tr && mkdir -p /tmp/tr && cp -r clalign kernels tools data /tmp/tr/ && tar -xf $S/hfasta.tar -C /tmp/tr && python3 -m compileall -q -j 16 /tmp/tr > /dev/null 2>&1
W=/tmp/hm; mkdir -p $W
python3 -m tools.gen_protein_db -n 570000 --seed 1 -o $W/db.fa > /dev/null
python3 -c "
import gzip
with gzip.open('data/proteome.faa.gz', 'rt') as s, open('$W/db.fa', 'a') as d: d.write(s.read())"
python3 -m clalign makedb -q --force $W/db.fa $W/db
run() { local tag=$1; shift; local t0=$(date +%s.%N); "$@" > /dev/null 2> $W/err.txt; local rc=$?; echo "$tag $(python3 -c "print(round($(date +%s.%N) - $t0, 2))") s rc $rc $(grep -o 'database [0-9.]* s' $W/err.txt | head -1)"; }
(cd /tmp/tr && PYTHONPATH=/tmp/site:/tmp/tr python3 -m tools.bench_fasta_read $W/db.fa --arms numpy compiled --threads 16 --rounds 5)
(cd /tmp/tr && PYTHONPATH=/tmp/site:/tmp/tr python3 -m tools.bench_fasta_read $W/db.fa --arms numpy --threads 4 --rounds 3)
(cd /tmp/tr && PYTHONPATH=/tmp/site:/tmp/tr python3 -m tools.bench_fasta_read $W/db.fa --arms numpy compiled --threads 16 --rounds 3 --busy)
S="python3 -m clalign hmmsearch --force --cpu 16 -o /dev/null --tblout"
H="env PYTHONPATH=/tmp/site:/tmp/tr python3 -m clalign hmmsearch --force --cpu 16 -o /dev/null --tblout"
for r in 0 1 2 3; do
  run "r$r fasta main" $S $W/m$r.tbl data/hmms.hmm $W/db.fa
  run "r$r fasta hfasta" $H $W/f$r.tbl data/hmms.hmm $W/db.fa
  run "r$r fasta hfasta compiled" env CLALIGN_FASTA_SCAN=compiled $H $W/c$r.tbl data/hmms.hmm $W/db.fa
  run "r$r fasta hfasta chunk0" env PYTHONPATH=/tmp/site:/tmp/tr python3 -c "import sys, clalign.data.fasta_np as f; f.CHUNK_BYTES = 0; from clalign.cli import run; sys.argv[0] = 'clalign'; run()" hmmsearch --force --cpu 16 -o /dev/null --tblout $W/g$r.tbl data/hmms.hmm $W/db.fa
  run "r$r prepared" $S $W/p$r.tbl data/hmms.hmm $W/db
  run "r$r pyhmmer" python3 -m tools.pyhmmer_hmmsearch data/hmms.hmm $W/db.fa --cpus 16 --tblout $W/y$r.tbl
done
(cd $W && for f in m*.tbl f*.tbl c*.tbl g*.tbl p*.tbl; do grep -v '^#' $f | md5sum; done | sort | uniq -c)
diff <(grep -v '^#' $W/f1.tbl | tr -s ' ') <(grep -v '^#' $W/y1.tbl | tr -s ' ') | head -3
SP="--span clalign.hmm.search:_Search._start --span clalign.hmm.search:_Search._msv_one --span clalign.hmm.search:_Search._second_pass --span clalign.hmm.search:_Search._model_result"
(cd /tmp/tr && PYTHONPATH=/tmp/site:/tmp/tr python3 $R/tools/cli_timeline.py --json $OUT/tl_f.json --min-ms 30 $SP -- hmmsearch --force --cpu 16 -o /dev/null --tblout $W/t.tbl $R/data/hmms.hmm $W/db.fa > $OUT/tl_f.txt 2>&1)
python3 tools/cli_timeline.py --json $OUT/tl_p.json --min-ms 30 $SP -- hmmsearch --force --cpu 16 -o /dev/null --tblout $W/t.tbl data/hmms.hmm $W/db > $OUT/tl_p.txt 2>&1
