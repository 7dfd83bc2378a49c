#!/usr/bin/env bash
# Braid (`braid send` / `braid recv`, user space over UDP) against the Linux kernel's MPTCP
# (`mptcpize run iperf3`) on the same namespaces, one after the other (issue 11; README table).
# Run as root; needs iperf3 and mptcpd (mptcpize). Not part of CI: about a minute and a half.
#
#   scripts/bench-net.sh [--time SECONDS] [--cc NAME]     (defaults: 8 s, cubic for both)
#
# Three testbeds from scripts/testbed.sh --shaper tbf (client 198.18.1.2 and 198.18.2.2, server
# 198.18.0.2, a router between): paths of 100 and 50 Mbit/s, of 100 and 100 Mbit/s, and the same
# veths with the tbf qdiscs removed (unshaped). Each stack sends for --time with two subflows;
# goodput is what the receiver got over the sender's time. CPU is the sender's and the receiver's
# (user + system) over the wall time of the run, in percent of one core. For Braid's processes
# (one thread each) also the time they were ready to run but waited for a CPU, from
# /proc/PID/schedstat: on a shared machine, what the other jobs took from them.
set -euo pipefail
cd "$(dirname "$0")/.."

secs=8
cc=cubic
while [ $# -gt 0 ]; do
  case "$1" in
    --time) secs="${2:?--time needs seconds}"; shift 2 ;;
    --cc) cc="${2:?--cc needs a name}"; shift 2 ;;
    *) echo "bench-net: unknown option $1" >&2; exit 2 ;;
  esac
done
[ "$(id -u)" = 0 ] || { echo "bench-net: must run as root (network namespaces)" >&2; exit 1; }
for tool in iperf3 mptcpize python3; do
  command -v "$tool" >/dev/null || { echo "bench-net: $tool missing (apt-get install iperf3 mptcpd)" >&2; exit 1; }
done

cargo build --release -q -p braid
braid="$PWD/target/release/braid"
export BRAID="$braid"
prefix=bbench
client="$prefix-client" server="$prefix-server"
work="$(mktemp -d)"
trap 'scripts/testbed.sh down --prefix "$prefix"; rm -rf "$work"' EXIT

# timed NAME NS COMMAND...: runs COMMAND in NS, its CPU time and wall time in NAME.time.
timed() {
  local name=$1 ns=$2
  shift 2
  ip netns exec "$ns" /usr/bin/time -o "$work/$name.time" -f '%U %S %e' timeout 60 "$@"
}

kernel() {
  timed kserver "$server" mptcpize run iperf3 -s -1 -p 5201 >/dev/null &
  local srv=$!
  sleep 0.5
  timed kclient "$client" mptcpize run iperf3 -c 198.18.0.2 -p 5201 -t "$secs" -C "$cc" -J >"$work/kernel.json"
  wait "$srv"
}

# sched NAME NS COMMAND...: runs COMMAND in NS; NAME.sched gets its run and wait times (ns, the
# last sample of /proc/PID/schedstat) and its wall time (s).
sched() {
  local name=$1 ns=$2 start pid
  shift 2
  rm -f "$work/$name.pid" "$work/$name.last"
  start="$(date +%s.%N)"
  ip netns exec "$ns" sh -c 'echo $$ >"$0"; exec "$@"' "$work/$name.pid" "$@" &
  local job=$!
  until [ -s "$work/$name.pid" ]; do sleep 0.01; done
  pid="$(cat "$work/$name.pid")"
  while read -r run wait _ <"/proc/$pid/schedstat" 2>/dev/null; do
    echo "$run $wait" >"$work/$name.last"
    sleep 0.1
  done
  wait "$job"
  echo "$(cat "$work/$name.last") $(python3 -c "import sys; print(float(sys.argv[2]) - float(sys.argv[1]))" "$start" "$(date +%s.%N)")" \
    >"$work/$name.sched"
}

braid_run() {
  sched bserver "$server" "$braid" recv --listen 198.18.0.2 --once --idle-timeout 20s --json >"$work/recv.json" &
  local srv=$!
  sleep 0.5
  sched bclient "$client" "$braid" send --to 198.18.0.2 --via 198.18.1.2,198.18.2.2 --cc "$cc" \
    --time "${secs}s" --timeout 10s --json >"$work/send.json"
  wait "$srv"
}

row() {
  python3 - "$work" "$1" <<'PY' | tee -a "$work/table"
import json, sys
work, label = sys.argv[1:]
def cpu(name):
    u, s, e = map(float, open(f"{work}/{name}.time").read().split()[-3:])
    return 100 * (u + s) / e
def sched(name):
    run, wait, wall = map(float, open(f"{work}/{name}.sched").read().split())
    return f"{100 * run / 1e9 / wall:.0f} ({100 * wait / 1e9 / wall:.0f})"
k = json.load(open(f"{work}/kernel.json"))["end"]
kernel = k["sum_received"]["bits_per_second"] / 1e6
sent = [json.loads(l) for l in open(f"{work}/send.json")][-1]
got = [json.loads(l) for l in open(f"{work}/recv.json")][-1]
assert sent["sha256"] == got["sha256"], "braid: the data differ"
braid = got["bytes"] * 8 / sent["seconds"] / 1e6
shares = "/".join(f"{100 * f['bytes'] / max(1, got['bytes']):.0f}" for f in got["subflows"])
print(f"| {label} | {kernel:.0f} | {cpu('kclient'):.0f} / {cpu('kserver'):.0f} | {braid:.0f} | {sched('bclient')} / {sched('bserver')} | {shares} |")
PY
}

echo "| paths | kernel MPTCP Mbit/s | kernel CPU % send / recv | Braid Mbit/s | Braid CPU % (waiting for a CPU %) send / recv | Braid bytes per subflow % |" >"$work/table"
echo "| --- | ---: | ---: | ---: | ---: | ---: |" >>"$work/table"
for rates in 100Mbit,50Mbit 100Mbit,100Mbit unshaped; do
  if [ "$rates" = unshaped ]; then
    scripts/testbed.sh up --shaper tbf --rates 10Gbit,10Gbit --prefix "$prefix" >/dev/null
    for i in 0 1; do
      ip netns exec "$prefix-link$i" tc qdisc del dev lr root
      ip netns exec "$prefix-link$i" tc qdisc del dev lc root
    done
    label="unshaped veth, 2 subflows"
  else
    scripts/testbed.sh up --shaper tbf --rates "$rates" --prefix "$prefix" >/dev/null
    label="tbf ${rates//Mbit/} Mbit/s"
  fi
  kernel
  braid_run
  row "$label" >/dev/null
  scripts/testbed.sh down --prefix "$prefix"
done
echo "bench-net: $secs s per run, $cc, on $(nproc) cores ($(uname -r))"
cat "$work/table"
