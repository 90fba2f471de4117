#!/usr/bin/env bash
# Build the ignored folders that travel to the lent GPU machine (`carry`), under its 64 MiB
# limit: numba 0.68's llvmlite wheel alone is 57 MB, so numba and llvmlite go as stripped
# tar.xz (~41 MB with the other wheels), BLAST+ as a tar.xz of blastn/blastp/makeblastdb/
# blastdbcmd and their libraries (~11 MB), py-spy as one xz binary (~2 MB), pyhmmer & co. as
# wheels (pyhmmer in .pwhl, pyopal and parasail in .psw: all together are past the limit).
# The run's command begins with `source .whl/device-env.sh && `, which unpacks what is carried.
#
#   tools/device_carry.sh      # then carry [".whl", ".pdeb"] (+ ".pwhl" or ".psw"; + ".snap/NAME")
#
# Needs this VM's Debian ncbi-blast+ .debs (apt-get download) and pip access to the wheels.
set -euo pipefail
root=$(git rev-parse --show-toplevel)
cd "$root"
for d in .whl .pdeb .pwhl .psw .snap; do
  grep -qx "/$d/" .git/info/exclude 2>/dev/null || echo "/$d/" >> .git/info/exclude
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
plat=(--platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64)
get() { python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp "${plat[@]}" -d "$@"; }

mkdir -p .whl .pdeb .pwhl
get .whl pyopencl pytools platformdirs siphash24 mako click tqdm scoring-matrices
get "$tmp/jit" numba llvmlite
for w in "$tmp"/jit/*.whl; do
  name=$(basename "$w" | cut -d- -f1-2)
  mkdir -p "$tmp/x/$name" && (cd "$tmp/x/$name" && python3 -m zipfile -e "$w" .)
  case $name in llvmlite-*)    # its 180 MB library; numba's own are left as built
    find "$tmp/x/$name" -name '*.so*' -exec strip --strip-unneeded {} + 2>/dev/null || true ;;
  esac
  tar -C "$tmp/x/$name" -cf - . | xz -T0 -6 > ".whl/$name.tar.xz"
done
get .pwhl pyhmmer archspec
mkdir -p .psw
get .psw pyopal parasail

(cd "$tmp" && apt-get download -qq ncbi-blast+ liblmdb0 libmbedcrypto7 libmbedtls14 libmbedx509-1 libpcre3)
mkdir -p "$tmp/blast"
for f in "$tmp"/*.deb; do dpkg -x "$f" "$tmp/blast"; done
find "$tmp/blast/usr/bin" -type f ! -name blastn ! -name blastp ! -name makeblastdb ! -name blastdbcmd -delete
rm -rf "$tmp/blast/usr/share"
tar -C "$tmp/blast" -cf - . | xz -T0 -9 > .pdeb/blast-peers.tar.xz
get "$tmp/spy" py-spy
(cd "$tmp/spy" && python3 -m zipfile -e py_spy-*.whl x && xz -9 -c "$(find x -name py-spy -type f)") > .pdeb/py-spy.xz

cat > .whl/device-env.sh <<'ENV'
# Sourced at the start of every command on the GPU machine (made by tools/device_carry.sh).
if [ ! -d /tmp/site/pyopencl ]; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || return 1
  for f in .whl/*.tar.xz; do tar -xJf "$f" -C /tmp/site || return 1; done
fi
for d in .pwhl .psw; do
  if [ -d $d ] && [ ! -e /tmp/site/.$d ]; then
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site $d/*.whl || return 1
    touch /tmp/site/.$d
  fi
done
if [ -d .pdeb ] && [ ! -d /opt/peers ]; then
  mkdir -p /opt/peers
  for f in .pdeb/*.tar.xz; do tar -xJf "$f" -C /opt/peers; done
  [ -e .pdeb/py-spy.xz ] && xz -dc .pdeb/py-spy.xz > /opt/peers/py-spy && chmod +x /opt/peers/py-spy
fi
if [ -d /opt/peers ]; then
  export PATH=/opt/peers/usr/bin:/opt/peers:$PATH
  export LD_LIBRARY_PATH=/opt/peers/usr/lib/ncbi-blast+:/opt/peers/usr/lib/x86_64-linux-gnu:/opt/peers/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
fi
export PYTHONPATH=/tmp/site:$PWD${PYTHONPATH:+:$PYTHONPATH}
export PYTHONUNBUFFERED=1
if [ ! -e /etc/OpenCL/vendors/nvidia.icd ]; then
  mkdir -p /etc/OpenCL/vendors && echo libnvidia-opencl.so.1 > /etc/OpenCL/vendors/nvidia.icd
fi
ENV
du -sh .whl .pdeb .pwhl .psw
echo 'carry: [".whl", ".pdeb"] (+ ".pwhl" or ".psw"), command: source .whl/device-env.sh && ...'
