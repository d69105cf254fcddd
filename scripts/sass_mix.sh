#!/usr/bin/env bash
# Static SASS opcode mix per kernel: ptxas the module, disassemble, count opcodes of the
# kernels whose names match $1 (a regex). Needs ptxas and cuobjdump (the GPU machine).
set -euo pipefail
ptx=${PTX:-target/ptx/sm_90/kernels.ptx}
re=${1:-.}
ptxas -arch=sm_90 -O3 "$ptx" -o /tmp/k.cubin
cuobjdump -sass /tmp/k.cubin > /tmp/k.sass
awk -v re="$re" '
  /Function :/ { name=$3; keep = (name ~ re); next }
  keep && /\/\*[0-9a-f]+\*\// {
    line=$0; sub(/^[ \t]*\/\*[0-9a-f]+\*\/[ \t]*/, "", line); sub(/^@!?U?P[0-9T] /, "", line);
    split(line, f, /[ ;]/); op=f[1]; sub(/\..*/, "", op);
    if (op != "") { n[name]++; c[name SUBSEP op]++ }
    if (line ~ /c\[0x3\]/) cc[name]++
  }
  END {
    for (k in n) {
      printf "== %s: %d instrs, %d with c[0x3] operands\n", k, n[k], cc[k];
      s="";
      for (kc in c) { split(kc, p, SUBSEP); if (p[1]==k) s = s sprintf("%s:%d ", p[2], c[kc]) }
      print s
    }
  }' /tmp/k.sass
