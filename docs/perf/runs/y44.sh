# y44: bfeed + bfix (integ 610364b) against main 5741018: -task blastn 1,000 genes at 700 Mb, interleaved; every output compared
source .whl/device-env.sh
S=$PWD/.snap/y44; R=$PWD
rm -rf /tmp/tr && mkdir -p /tmp/tr && cp -r clalign kernels tools /tmp/tr/ && tar -xf $S/integ.tar -C /tmp/tr
W=/tmp/bnb
T0=$(date +%s)
(python3 -m tools.bench_blastn --warm-only --work $W/warm --genome-mb 10 --reads 8 --genes 8 --device 0:0 --cases blastn:genes --real $S/GCF_001457455.1_NCTC11397_genomic.fna.gz > $OUT/warm.txt 2>&1) &
(cd /tmp/tr && PYTHONPATH=/tmp/site:/tmp/tr python3 -m tools.bench_blastn --warm-only --work $W/warm2 --genome-mb 10 --reads 8 --genes 8 --device 0:0 --cases blastn:genes --real $S/GCF_001457455.1_NCTC11397_genomic.fna.gz > $OUT/warm2.txt 2>&1) &
python3 -c "
from tools.bench_blastn import write_data, case_queries
print(write_data('$W', 700, 0, 1000, real='$S/GCF_001457455.1_NCTC11397_genomic.fna.gz'))
case_queries('$W', 'genes', 200)"
wait; echo "data+warm $(( $(date +%s) - T0 )) s"
cd $W
run() {  # label tree args...
  local label=$1; local tree=$2; shift 2
  local t0=$(date +%s.%N)
  PYTHONPATH=/tmp/site:$tree python3 -m clalign "$@" > cl_$label.tsv 2> err_$label.txt
  local t1=$(date +%s.%N)
  echo "$label $(python3 -c "print(round($t1 - $t0, 2))") s $(md5sum < cl_$label.tsv | cut -c1-8) $(wc -l < cl_$label.tsv) lines"
}
for r in 1 2 3; do
  run g1000_main_$r $R blastn -task blastn -query genes.fa -db gdb -outfmt 6 -num_threads 16 --device 0:0
  run g1000_integ_$r /tmp/tr blastn -task blastn -query genes.fa -db gdb -outfmt 6 -num_threads 16 --device 0:0
  run g200_main_$r $R blastn -task blastn -query genes200.fa -db gdb -outfmt 6 -num_threads 16 --device 0:0
  run g200_integ_$r /tmp/tr blastn -task blastn -query genes200.fa -db gdb -outfmt 6 -num_threads 16 --device 0:0
  echo "round $r at $(( $(date +%s) - T0 )) s"
done
