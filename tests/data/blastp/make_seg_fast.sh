#!/usr/bin/env bash
# Rebuild the SEG / blastp-fast / word-size golden files of tests/test_blastp_seg_fast.py
# (provenance in README.md). Needs BLAST+ 2.12 (Debian ncbi-blast+): blastp, makeblastdb, segmasker.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
zcat "$root/data/proteome.faa.gz" | sed 's/\*$//' > "$tmp/proteome.faa"
makeblastdb -in "$tmp/proteome.faa" -dbtype prot -out "$tmp/proteome" > /dev/null
zcat "$here/synth_db.faa.gz" > "$tmp/synth.faa"
makeblastdb -in "$tmp/synth.faa" -dbtype prot -out "$tmp/synth" > /dev/null
B="blastp -comp_based_stats 0 -max_target_seqs 500"
F="6 qseqid sseqid pident length mismatch gapopen nident positive ppos gaps btop qseq sseq evalue bitscore score"
cd "$here"
$B -db "$tmp/proteome" -query seg_queries.faa -seg yes -outfmt "$F" > seg_hard_fields.tsv
$B -db "$tmp/proteome" -query seg_queries.faa -seg "10 1.8 2.1" -soft_masking true -evalue 1e-3 \
   -outfmt 6 > seg_10_1.8_2.1_soft_e1e-3.tsv
$B -db "$tmp/proteome" -query fast_queries.faa -task blastp-fast -seg no -outfmt 6 > fast_proteome.tsv
$B -db "$tmp/synth" -query synth_queries.faa -task blastp-fast -seg no -outfmt 6 > fast_synth.tsv
$B -db "$tmp/synth" -query synth_queries.faa -task blastp-fast -seg yes -word_size 7 -matrix BLOSUM45 \
   -outfmt 6 > fast_w7_blosum45_seg.tsv
$B -db "$tmp/synth" -query synth_queries.faa -task blastp -seg no -word_size 2 -outfmt 6 > ws2_synth.tsv
$B -db "$tmp/synth" -query synth_queries.faa -task blastp -seg no -word_size 4 -threshold 15 -outfmt 6 \
   > ws4_t15_synth.tsv
$B -db "$tmp/synth" -query synth_queries.faa -task blastp -seg no -threshold 13.5 -window_size 25 \
   -outfmt 6 > t13.5_a25_synth.tsv
$B -db "$tmp/synth" -query synth_queries.faa -task blastp -seg no -window_size 0 -outfmt 6 > onehit_synth.tsv
$B -db "$tmp/synth" -query synth_queries.faa -task blastp-fast -seg no -window_size 0 -outfmt 6 \
   > onehit_fast_synth.tsv
for p in "12 2.2 2.5" "10 2.0 2.3" "8 1.5 1.9"; do set -- $p
  segmasker -in seg_synthetic.faa -outfmt interval -window $1 -locut $2 -hicut $3 > "segmasker_$1_$2_$3.txt"
done
