#!/bin/bash
# Data-cache misses per delivered packet on the `braid bench` scaling series,
# counted by cachegrind (simulated caches, so the figures are deterministic,
# unlike timings on a shared machine). Each point runs twice, with a window
# of W and of 2W after the same setup and warm-up; the difference is the
# steady state only.
#
# Cachegrind ignores software prefetches: the figures count every cache
# line the simulator touches that the simulated cache no longer holds,
# hidden from the CPU's stalls by prefetching or not. They say how much
# memory a packet touches, not how long it waits for it.
#
# Usage: [FLOWS="10 1000 10000"] [LL=1048576] scripts/cache-misses.sh [BRAID]
# LL is the simulated last-level cache in bytes (default 1 MiB: this
# machine's L2 per core); L1 is 32 KiB, 8-way, 64-byte lines.
set -eu
BRAID=${1:-target/release/braid}
FLOWS=${FLOWS:-"10 1000 10000"}
LL=${LL:-1048576}
command -v valgrind >/dev/null || { echo "needs valgrind (apt-get install valgrind)" >&2; exit 2; }
TMP=$(mktemp -d); trap 'rm -rf "$TMP"' EXIT

# count FLOWS WINDOW_S -> "delivered_pkts D1_misses LL_misses" for the whole process
count() {
  valgrind --tool=cachegrind --cache-sim=yes --D1=32768,8,64 --LL=$LL,16,64 \
    --cachegrind-out-file=/dev/null "$BRAID" bench --flows "$1" --repeat 1 --duration "${2}s" > "$TMP/out" 2>&1
  python3 - "$TMP/out" <<'PY'
import re, sys
t = open(sys.argv[1]).read()
def misses(k):
    return int(re.search(k + r':\s+([\d,]+)', t).group(1).replace(',', ''))
print(re.search(r'delivered_pkts=(\d+)', t).group(1), misses('D1  misses'), misses('LLd misses'))
PY
}

printf '%8s %14s %14s %14s\n' flows window_pkts D1_miss/pkt LL_miss/pkt
for n in $FLOWS; do
  # about 200,000 delivered packets per window (N x 10 Mbit/s of 1500-byte packets)
  w=$(python3 -c "print(round(2e5 / ($n * 10e6 / 8 / 1500), 4))")
  read -r p1 d1 l1 < <(count "$n" "$w")
  read -r p2 d2 l2 < <(count "$n" "$(python3 -c "print(2 * $w)")")
  python3 -c "
p = $p2 - $p1
print('%8d %14d %14.1f %14.1f' % ($n, p, ($d2 - $d1) / p, ($l2 - $l1) / p))"
done
