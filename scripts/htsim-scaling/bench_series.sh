#!/bin/bash
# htsim vs Braid, the `braid bench` scaling series: N two-subflow LIA flows on one
# dumbbell bottleneck of N x 10 Mbit/s, 20 ms RTT, 1-BDP queue, 1 s warm-up, then a
# window of ~2 M delivered data packets (same window formula as braid's main.rs).
# Usage: [FLOWS="10 100 1000 10000"] [REPS=3] [BRAID_REPEAT=2] [RUNDIR=runs] ./bench_series.sh
set -u
# Writes into $RUNDIR (relative to the current directory).
FLOWS=${FLOWS:-"10 100 1000 10000"}
REPS=${REPS:-3}
BRAID_REPEAT=${BRAID_REPEAT:-2}
BRAID=${BRAID:-/work/main/target/release/braid}
H=${HTSIM_BENCH:?set HTSIM_BENCH to the patched driver/mptcp_bench (see README.md)}
RUNDIR=${RUNDIR:-runs}; mkdir -p $RUNDIR
LOG=$RUNDIR/log.txt
say() { echo "$(date +%T) $*" | tee -a $LOG; }
# busy CPU cores over an interval, from /proc/stat (ours counts ~1.0; the rest is other work)
stat0() { S0=($(head -1 /proc/stat)); }
busy() { local S1=($(head -1 /proc/stat)); local i b=0 t=0
  for i in 1 2 3 4 5 6 7 8; do d=$(( S1[i] - S0[i] )); t=$((t + d)); [ $i -ne 4 ] && [ $i -ne 5 ] && b=$((b + d)); done
  python3 -c "print('%.2f' % ($b / max($t, 1) * $(nproc)))"; }
# wait (up to QUIET_WAIT s) until the machine has been nearly idle for 2 s
QUIET_WAIT=${QUIET_WAIT:-0}
quiet() { local w=0; while [ $w -lt $QUIET_WAIT ]; do stat0; sleep 2; w=$((w+2));
  python3 -c "import sys; sys.exit(0 if $(busy) < 0.3 else 1)" && return; done
  [ $QUIET_WAIT -gt 0 ] && say "  (not quiet after ${QUIET_WAIT}s; running anyway)"; }
for n in $FLOWS; do
  # braid's window: ceil(2e6 / (n * 10 Mbit/s / 8 / 1500 B) s) in ms
  win_ms=$(python3 -c "import math; print(math.ceil(2e6/(($n*10e6)/8/1500)*1e3))")
  dur=$(python3 -c "print(1 + $win_ms/1000)")
  for r in $(seq 1 $REPS); do
    quiet; l0=$(cut -d' ' -f1-3 /proc/loadavg); stat0
    /usr/bin/time -v -o $RUNDIR/htsim_$n.$r.time $H dumbbell $n $dur mirror per_flow_mbit=10 warmup=1 \
        > $RUNDIR/htsim_$n.$r.out 2> $RUNDIR/htsim_$n.$r.err
    l1=$(cut -d' ' -f1-3 /proc/loadavg); bz=$(busy)
    say "htsim n=$n rep=$r load_before=[$l0] load_after=[$l1] busy_cores=$bz $(grep '^WINDOW' $RUNDIR/htsim_$n.$r.out | cut -d' ' -f2-)"
  done
  if [ -x "$BRAID" ]; then
    sha=$(sha256sum "$BRAID" | cut -c1-16); mt=$(stat -c %y "$BRAID")
    quiet; l0=$(cut -d' ' -f1-3 /proc/loadavg); stat0
    /usr/bin/time -v -o $RUNDIR/braid_$n.time "$BRAID" bench --flows $n --repeat $BRAID_REPEAT --ack-every 1 \
        > $RUNDIR/braid_$n.out 2> $RUNDIR/braid_$n.err
    l1=$(cut -d' ' -f1-3 /proc/loadavg); bz=$(busy)
    say "braid n=$n sha=$sha mtime=[$mt] load_before=[$l0] load_after=[$l1] busy_cores=$bz $(cat $RUNDIR/braid_$n.out)"
  else
    say "braid n=$n SKIPPED: $BRAID missing"
  fi
done
