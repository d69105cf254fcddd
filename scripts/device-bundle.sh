#!/usr/bin/env bash
# Builds everything a GPU run needs here (the GPU machine has no Rust toolchain) and
# copies it into .dc1/ (ignored by git through .git/info/exclude), to be carried to
# the device machine and run there by scripts/device-run.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
out=.dc1
rm -rf "$out"; mkdir -p "$out/tests" "$out/peers"
# GPU tests are compiled in (not ignored) for the GPU machine.
export GPUCONV_GPU_TESTS=1
cargo build --release -p gpuconv --bin gpuconv
cargo build --release -p gpuconv-benches --bin roofline
cp target/release/gpuconv target/release/roofline "$out/"
cargo bench -p gpuconv-benches --bench variants --no-run --message-format=json 2>/dev/null \
  | python3 -c 'import json,sys
for l in sys.stdin:
    m=json.loads(l)
    if m.get("reason")=="compiler-artifact" and m.get("executable") and m["target"]["name"]=="variants": print(m["executable"])' \
  | xargs -I{} cp {} "$out/criterion_variants"
cargo test --release --workspace --no-run --message-format=json 2>/dev/null \
  | python3 -c 'import json,sys
for l in sys.stdin:
    m=json.loads(l)
    # The library and its test crate: the GPU-facing tests (tool crates run in CI).
    pkg=m.get("package_id","")
    if m.get("reason")=="compiler-artifact" and m.get("executable") and m["profile"]["test"] \
       and ("/host#" in pkg or "/tests#" in pkg):
        print(m["target"]["name"], m["executable"])' \
  | while read -r name exe; do cp "$exe" "$out/tests/$name"; done
cp ../shared/peers/conv_peers.cu ../shared/peers/lib_peers.py "$out/peers/" 2>/dev/null || cp shared/peers/* "$out/peers/"
du -sh "$out"; ls "$out" "$out/tests"
