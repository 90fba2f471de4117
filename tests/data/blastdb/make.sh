#!/usr/bin/env bash
# Rebuild the small BLAST+ databases and golden id tables in this folder (see README.md).
# Needs BLAST+ 2.12 (Debian ncbi-blast+): makeblastdb, blastp, blastn.
set -euo pipefail
cd "$(dirname "$0")"
rm -rf db golden && mkdir -p db golden
mk() { makeblastdb "$@" >/dev/null; }
for v in 4 5; do
  mk -in prot.fa -dbtype prot -blastdb_version $v -out db/prot_v$v
  mk -in prot.fa -dbtype prot -blastdb_version $v -parse_seqids -out db/prot_ps_v$v
  mk -in nucl.fa -dbtype nucl -blastdb_version $v -out db/nucl_v$v
  mk -in nucl.fa -dbtype nucl -blastdb_version $v -parse_seqids -out db/nucl_ps_v$v
done
# multi-volume (prefix.NN.* volumes and a .pal/.nal alias)
mk -in prot.fa -dbtype prot -blastdb_version 4 -max_file_sz 3000 -out db/prot_mv
mk -in nucl.fa -dbtype nucl -blastdb_version 5 -max_file_sz 2000 -out db/nucl_mv
# id rules: every kind of FASTA id, without and with -parse_seqids (v5 refuses this id list)
mk -in prot_ids.fa -dbtype prot -blastdb_version 4 -out db/ids
mk -in prot_ids.fa -dbtype prot -blastdb_version 4 -parse_seqids -out db/ids_ps
# golden subject ids as blastp prints them: one hit per subject (each has its own length)
head -2 prot_ids.fa | sed 's/^>.*/>q/' > golden/q.fa
cols="6 slen sseqid sacc stitle sallseqid sallacc salltitles sgi"
for d in ids ids_ps; do
  blastp -query golden/q.fa -db db/$d -outfmt "$cols" -comp_based_stats 0 -seg no \
    -max_target_seqs 500 -max_hsps 1 -evalue 1e-5 | sort -n -k1,1 > golden/$d.tsv
done
# the same rules for nucleotide subjects (blastn on a nucleotide copy of the id list)
awk '/^>/{print; next} {print "ACGTTGCAACGGTACCATGGCATGCAAGCTTGGATCCGAATTCTGCAGCTCGAGCGGCCGCACTAGTGCGGCCGCTCGAG" substr("ACCGGTTAACCGGTTAACCGGTTAACCGGTTAACCGGTTAACCGGTTAA", 1, ++k)}' prot_ids.fa > golden/nucl_ids.fa
mk -in golden/nucl_ids.fa -dbtype nucl -blastdb_version 4 -parse_seqids -out db/nids_ps
mk -in golden/nucl_ids.fa -dbtype nucl -blastdb_version 4 -out db/nids
head -2 golden/nucl_ids.fa | sed 's/^>.*/>q/' > golden/qn.fa
for d in nids nids_ps; do
  blastn -task blastn -query golden/qn.fa -db db/$d -outfmt "$cols" -max_target_seqs 500 -max_hsps 1 \
    -evalue 1e-5 | sort -n -k1,1 > golden/$d.tsv
done
# the v5 LMDB files (accession -> OID) are not read by clalign; keep the folder small
rm -f db/*.pdb db/*.pos db/*.pot db/*.ptf db/*.pto db/*.ndb db/*.nos db/*.not db/*.ntf db/*.nto
rm -f db/*.pog db/*.psd db/*.psi db/*.pni db/*.pnd db/*.nog db/*.nsd db/*.nsi db/*.nni db/*.nnd
