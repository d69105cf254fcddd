#!/usr/bin/env python3
"""Counts the FFMAs of a SASS listing whose register sources pair up in one bank.

The seventy-seventh session's audit (BENCHMARKS.md §8). With the taps baked in as
immediates an FFMA reads two registers; where two distinct ones share a bank (register
number mod 2 on sm_90) and neither comes from the operand reuse cache (`.reuse`), the
read takes an extra cycle (the sixty-second session's 3D r = 3 finding). Usage:

    ptxas -arch sm_90 -O3 target/ptx/sm_90/kernels.baked/E.ptx -o E.cubin
    cuobjdump -sass -fun E E.cubin > E.sass
    python3 docs/experiments/ffma-register-banks.py E.sass

`-O3` is the driver JIT's level 4 (its default), `-O1` its level 1.
"""
import re
import sys

FFMA = re.compile(r"\bFFMA\S*\s+(?:R\d+|RZ),\s*(.*?);")
REG = re.compile(r"-?\|?R(\d+)(\.reuse)?")


def pairs(path):
    total = paired = 0
    for line in open(path):
        m = FFMA.search(line)
        if not m:
            continue
        total += 1
        fresh = set()
        for op in m.group(1).split(","):
            r = REG.match(op.strip())
            if r and not r.group(2):
                fresh.add(int(r.group(1)))
        banks = [r % 2 for r in fresh]
        if any(banks.count(b) >= 2 for b in (0, 1)):
            paired += 1
    return total, paired


for p in sys.argv[1:]:
    t, n = pairs(p)
    print(f"{p}: {t} FFMAs, {n} with two register sources in one bank")
