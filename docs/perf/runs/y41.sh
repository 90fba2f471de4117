# y41: which of hlay's two changes is slower on the H200 (y40: new 3.9-4.0 s vs old 2.9-3.2 s prepared): arms per variable, spans
source .whl/device-env.sh
R=$PWD
python3 -m compileall -q -j 16 /tmp/site clalign tools > /dev/null 2>&1
W=/tmp/hm; mkdir -p $W
python3 -m tools.gen_protein_db -n 570000 --seed 1 -o $W/db.fa > /dev/null
python3 -c "
import gzip
with gzip.open('data/proteome.faa.gz', 'rt') as s, open('$W/db.fa', 'a') as d: d.write(s.read())"
python3 -m clalign makedb -q $W/db.fa $W/db
run() { local tag=$1; shift; local t0=$(date +%s.%N); "$@" > /dev/null 2> $W/err.txt; local rc=$?; echo "$tag $(python3 -c "print(round($(date +%s.%N) - $t0, 2))") s rc $rc"; }
S="python3 -m clalign hmmsearch --force --cpu 16 -o /dev/null --tblout"
for r in 0 1 2 3; do
  run "r$r new" $S $W/n$r.tbl data/hmms.hmm $W/db
  run "r$r layout=host" env CLALIGN_HMM_LAYOUT=host $S $W/l$r.tbl data/hmms.hmm $W/db
  run "r$r handoff=objects" env CLALIGN_HMM_HANDOFF=objects $S $W/h$r.tbl data/hmms.hmm $W/db
  run "r$r old" env CLALIGN_HMM_LAYOUT=host CLALIGN_HMM_HANDOFF=objects $S $W/o$r.tbl data/hmms.hmm $W/db
done
(cd $W && for f in n*.tbl l*.tbl h*.tbl o*.tbl; do grep -v '^#' $f | md5sum; done | sort | uniq -c)
SP="--span clalign.hmm.layout_dev:fill_device --span clalign.hmm.layout_dev:upload_residues --span clalign.hmm.layout:plan_blocks --span clalign.hmm.layout:fill_host --span clalign.hmm.targets:fasta_text --span clalign.hmm.targets:block --span clalign.hmm.engine:_layout --span clalign.hmm.engine:_block_buffers --span clalign.hmm.engine:_msv_slane --span clalign.hmm.startup:residues_early"
python3 tools/cli_timeline.py --json $OUT/tl_new.json --min-ms 5 $SP -- hmmsearch --force --cpu 16 -o /dev/null --tblout $W/tl.tbl data/hmms.hmm $W/db > $OUT/tl_new.txt 2>&1
env CLALIGN_HMM_LAYOUT=host CLALIGN_HMM_HANDOFF=objects python3 tools/cli_timeline.py --json $OUT/tl_old.json --min-ms 5 $SP -- hmmsearch --force --cpu 16 -o /dev/null --tblout $W/tl.tbl data/hmms.hmm $W/db > $OUT/tl_old.txt 2>&1
