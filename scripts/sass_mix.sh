#!/usr/bin/env bash
# Static SASS opcode mix per kernel: ptxas the module, disassemble, count opcodes of the
# kernels whose names match $1 (a regex). Needs ptxas and cuobjdump (the GPU machine, or
# PTXAS and CUOBJDUMP pointing at them). Also counts the FFMAs that read two distinct
# registers of one bank (register number mod 2), neither from the reuse cache: what held
# 3D r = 3's baked loop at -O3 (BENCHMARKS.md §8, the sixty-second and seventy-seventh
# sessions). OPT is ptxas's level: 3 (the driver JIT's default, level 4) or 1.
set -euo pipefail
ptx=${PTX:-target/ptx/sm_90/kernels.ptx}
re=${1:-.}
"${PTXAS:-ptxas}" -arch=sm_90 -O"${OPT:-3}" "$ptx" -o /tmp/k.cubin
"${CUOBJDUMP:-cuobjdump}" -sass /tmp/k.cubin > /tmp/k.sass
awk -v re="$re" '
  /Function :/ { name=$3; keep = (name ~ re); next }
  keep && /\/\*[0-9a-f]+\*\// {
    line=$0; sub(/^[ \t]*\/\*[0-9a-f]+\*\/[ \t]*/, "", line); sub(/^@!?U?P[0-9T] /, "", line);
    split(line, f, /[ ;]/); op=f[1]; sub(/\..*/, "", op);
    if (op != "") { n[name]++; c[name SUBSEP op]++ }
    if (line ~ /c\[0x3\]/) cc[name]++
    if (op == "FFMA") {
      ops=line; sub(/^[^ ]+ [^,]+, */, "", ops); sub(/ *;.*/, "", ops);
      m=split(ops, o, /, */); split("", seen); b0=0; b1=0;
      for (i=1; i<=m; i++) {
        r=o[i]; sub(/^-?\|?/, "", r);
        if (r ~ /^R[0-9]+/ && r !~ /\.reuse/) {
          x=substr(r, 2); sub(/[^0-9].*$/, "", x);
          if (!(x in seen)) { seen[x]=1; if (x % 2) b1++; else b0++ }
        }
      }
      if (b0 >= 2 || b1 >= 2) fb[name]++
    }
  }
  END {
    for (k in n) {
      printf "== %s: %d instrs, %d with c[0x3] operands, %d of %d FFMAs with two register sources in one bank\n", k, n[k], cc[k], fb[k], c[k SUBSEP "FFMA"];
      s="";
      for (kc in c) { split(kc, p, SUBSEP); if (p[1]==k) s = s sprintf("%s:%d ", p[2], c[kc]) }
      print s
    }
  }' /tmp/k.sass
