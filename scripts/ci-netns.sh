#!/usr/bin/env bash
# CI step for the emulator (issue 12), run by .ci/run as root on the CI machine:
#  1. the emulator's accuracy on real packets between network namespaces
#     (crates/braid-emu/tests/netns.rs: one-way delay under a 1 Gbit/s load in both
#     directions, rate, loss counts, an outage schedule, a delivery trace, unshaped throughput);
#  2. a short `braid compare` smoke run: the kernel's MPTCP and Braid's own UDP transport over
#     the emulated testbed must each move data on both paths;
#  3. an interrupted `braid compare` (SIGINT while the kernel runs, SIGTERM while Braid's
#     transport does) must exit soon with an error, leaving no namespace and no process behind;
#  4. `braid emulate` without the right to real-time priority (CAP_SYS_NICE dropped) must
#     still forward and say so, and SIGTERM must end it with its counters and status 0;
#  5. scripts/kernel-trace.sh must trace the kernel's sender on both paths (where the kernel
#     has the tcp_probe trace event).
# Installs iperf3 and mptcpd (for mptcpize) with apt-get when missing. Skips, saying why,
# only where the machine cannot do it at all (not root, no TUN device, no namespaces).
# BRAID_PROFILE=test uses the binaries `cargo test` already built (CI does, to skip a release
# build); the default is release.
set -euo pipefail
cd "$(dirname "$0")/.."

skip() { echo "ci-netns: SKIPPED: $*"; exit 0; }
[ "$(id -u)" = 0 ] || skip "not root (network namespaces and TUN devices need root)"
[ -c /dev/net/tun ] || skip "no /dev/net/tun on this machine"

missing=()
command -v ip >/dev/null || missing+=(iproute2)
command -v iperf3 >/dev/null || missing+=(iperf3)
command -v mptcpize >/dev/null || missing+=(mptcpd)
command -v setpriv >/dev/null || missing+=(util-linux)
if [ ${#missing[@]} -gt 0 ]; then
  echo "ci-netns: installing ${missing[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi
ip netns add braid-ci-probe 2>/dev/null || skip "cannot create network namespaces here"
ip netns del braid-ci-probe

BRAID_NETNS_TESTS=1 cargo test -p braid-emu --test netns -- --nocapture --test-threads=1

profile="${BRAID_PROFILE:-release}"
cargo build --profile "$profile" -q -p braid --bin braid
[ "$profile" = test ] && dir=debug || dir="$profile"
# kernel-trace.sh and testbed.sh run $BRAID.
export BRAID="$PWD/target/$dir/braid"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
"$BRAID" compare scenarios/hybrid-access.toml --cc cubic --with kernel,braid --duration 5s --out "$out"
python3 - "$out/compare.json" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))[0]
for side in ["kernel", "braid"]:
    shares = [s["share"] for s in c[side]["subflows"]]
    assert c[side]["goodput_mbps"] > 50, c[side]
    assert all(s > 0.02 for s in shares), f"a {side} subflow carried no data: {shares}"
    print(f"ci-netns: {side} over the emulator: {c[side]['goodput_mbps']:.1f} Mbit/s, shares {shares}")
PY

# 3. Interrupted comparisons. `compare` installs handlers for SIGINT and SIGTERM; every wait
# checks them, and the run ends through the code that takes children and testbed down.
# interrupt SIGNAL PATTERN WITH: starts a 30 s comparison with --with WITH, waits until a
# process matching PATTERN runs, sends SIGNAL, and checks the exit and what is left.
interrupt_failed() {
  echo "ci-netns: $2"
  # Take down what the failed run left, so that CI ends.
  kill -KILL "$1" 2>/dev/null || true
  pkill -KILL -f -- "braid-cmp|198\.18\.0\.2" || true
  scripts/testbed.sh down --prefix braid-cmp >/dev/null 2>&1 || true
  exit 1
}
interrupt() {
  local sig="$1" pattern="$2" with="$3" pid i
  "$BRAID" compare scenarios/hybrid-access.toml --cc cubic --with "$with" --duration 30s \
    >"$out/interrupt.out" 2>"$out/interrupt.err" &
  pid=$!
  for i in $(seq 1 300); do pgrep -f -- "$pattern" >/dev/null && break; sleep 0.1; done
  pgrep -f -- "$pattern" >/dev/null || interrupt_failed "$pid" "'$pattern' never started"
  sleep 1
  kill -"$sig" "$pid"
  for i in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  if kill -0 "$pid" 2>/dev/null; then
    interrupt_failed "$pid" "compare still running 10 s after SIG$sig"
  fi
  local rc=0
  wait "$pid" || rc=$?
  [ "$rc" != 0 ] || interrupt_failed "$pid" "an interrupted compare exited with 0"
  grep -q interrupted "$out/interrupt.err" || interrupt_failed "$pid" "no 'interrupted' from compare: $(cat "$out/interrupt.err")"
  sleep 0.5
  ! ip netns list | grep -q braid-cmp || interrupt_failed "$pid" "namespaces left after SIG$sig: $(ip netns list | tr '\n' ' ')"
  if pgrep -f -- "braid-cmp|198\.18\.0\.2" >/dev/null; then
    interrupt_failed "$pid" "processes left after SIG$sig: $(pgrep -af -- "braid-cmp|198\.18\.0\.2")"
  fi
  echo "ci-netns: SIG$sig while '$pattern' ran: compare exited ($rc) within $((i / 10)).$((i % 10)) s, nothing left"
}
interrupt INT "iperf3 -c 198.18.0.2" kernel,braid
interrupt TERM "braid send --to 198.18.0.2" braid

# 4. The emulator without real-time priority, ended by SIGTERM.
emulate_unprivileged() {
  local c=braid-ci-rt-client s=braid-ci-rt-server pid i rc=0
  ip netns del "$c" 2>/dev/null || true; ip netns del "$s" 2>/dev/null || true
  ip netns add "$c"; ip netns add "$s"
  setpriv --inh-caps=-sys_nice --bounding-set=-sys_nice -- \
    "$BRAID" emulate scenarios/hybrid-access.toml --client-ns "$c" --server-ns "$s" >"$out/emulate.txt" 2>&1 &
  pid=$!
  for i in $(seq 1 100); do grep -q '^ready' "$out/emulate.txt" && break; sleep 0.1; done
  kill -TERM "$pid"
  wait "$pid" || rc=$?
  ip netns del "$c"; ip netns del "$s"
  [ "$rc" = 0 ] || { echo "ci-netns: emulate exited with $rc on SIGTERM:"; cat "$out/emulate.txt"; exit 1; }
  grep -q '^ready' "$out/emulate.txt" || { echo "ci-netns: emulate never ready:"; cat "$out/emulate.txt"; exit 1; }
  grep -q '^L2-rev ' "$out/emulate.txt" || { echo "ci-netns: no counters after SIGTERM:"; cat "$out/emulate.txt"; exit 1; }
  grep -q 'warning: no real-time priority' "$out/emulate.txt" ||
    { echo "ci-netns: no warning without real-time priority:"; cat "$out/emulate.txt"; exit 1; }
  echo "ci-netns: emulate without CAP_SYS_NICE warned, and SIGTERM ended it with its counters"
}
emulate_unprivileged

# 5. scripts/kernel-trace.sh: the kernel's sender per acknowledgement on both subflows.
tracing=/sys/kernel/tracing
if [ -d "$tracing/events/tcp/tcp_probe" ] || { mount -t tracefs nodev "$tracing" 2>/dev/null && [ -d "$tracing/events/tcp/tcp_probe" ]; }; then
  scripts/kernel-trace.sh --scenario scenarios/hybrid-access.toml --duration 2 --out "$out/trace"
  python3 - "$out/trace/trace.csv" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
acks = [r for r in rows if r["event"] == "ack"]
for k in ("0", "1"):
    mine = [r for r in acks if r["subflow"] == k]
    assert len(mine) > 100, f"subflow {k}: {len(mine)} acknowledgements traced"
    assert max(int(r["cwnd"]) for r in mine) >= 10, f"subflow {k}: no window"
print(f"ci-netns: kernel trace: {len(acks)} acknowledgements on both subflows")
PY
  echo "ci-netns: 5 passed, 0 failed"
else
  echo "ci-netns: 4 passed, 0 failed (kernel trace SKIPPED: no tcp_probe trace event)"
fi
