#!/usr/bin/env bash
# Runs on the GPU machine, from the repo root, what scripts/device-bundle.sh built into
# .dc1/: the chosen parts among tests, main, roofline, peers, criterion. Logs go to
# $OUT (the device tool's return folder) or /tmp/gpuconv-logs.
set -uo pipefail
cd "$(dirname "$0")/.."
d=.dc1; out=${OUT:-/tmp/gpuconv-logs}; mkdir -p "$out"
parts=${*:-tests main roofline peers}
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,memory.total --format=csv | tee "$out/gpu.txt"
status=0
for part in $parts; do
  echo "===== $part ($(date -u +%FT%TZ))"
  case $part in
    tests)
      for t in "$d"/tests/*; do
        echo "----- $(basename "$t")"
        "$t" --include-ignored --test-threads=1 2>&1 | tee -a "$out/tests.log" | grep -E "^test result|FAILED|panicked|^test .*(FAILED|ignored)" || true
        [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
      done ;;
    main) "$d/gpuconv" 2>&1 | tee "$out/main.log" || status=1 ;;
    main-big)
      for r in 1 2 3 4; do "$d/gpuconv" --image 8192 --signal 268435456 --radius2d $r --radius1d $((r==3 ? 16 : r)) 2>&1 | tee -a "$out/main-big.log" || status=1; done ;;
    roofline) "$d/roofline" 2>&1 | tee "$out/roofline.log" || status=1 ;;
    criterion) "$d/criterion_variants" --bench 2>&1 | grep -vE "^(Benchmarking|Found|  [0-9]+ \(|$)" | tee "$out/criterion.log" || status=1 ;;
    peers)
      nvcc -O3 -arch=sm_90 -std=c++17 -o /tmp/conv_peers "$d/peers/conv_peers.cu" && /tmp/conv_peers 2>&1 | tee "$out/peers.log" || status=1
      PYTHONUNBUFFERED=1 python3 "$d/peers/lib_peers.py" 2>&1 | tee -a "$out/peers.log" || status=1 ;;
    ptxas) for f in "$d"/*.ptx; do ptxas -arch=sm_90 -v -o /dev/null "$f" 2>&1 | tee "$out/ptxas.log"; done ;;
    *) echo "unknown part $part"; status=1 ;;
  esac
done
exit $status
