#!/usr/bin/env bash
# The Linux kernel's sender, acknowledgement by acknowledgement, over a scenario's emulated links
# (run as root): what `braid compare`'s 100 ms `ss` samples cannot show, such as a window held
# flat for ten round trips or a second cut in a start-up (docs/validation.md, stop 33).
#
#   scripts/kernel-trace.sh --scenario FILE [--cc cubic] [--duration 15] [--out DIR] [--tcp]
#
# Runs iperf3 from the testbed's client to its server (under mptcpize, one subflow per path,
# unless --tcp or the scenario has one path) with the kernel's trace events tcp_probe (every
# acknowledgement the sender receives), tcp_cong_state_set (0 open, 1 disorder, 2 CWR,
# 3 recovery, 4 loss) and tcp_retransmit_skb on, and writes into DIR (default kernel-trace):
#   trace.csv   time_s,subflow,port,event,cwnd,ssthresh,in_flight,srtt_ms,snd_wnd,state
#               one row per event; subflow is the client address's path index (198.18.K.2 is
#               path K-1), port the client's (iperf3's control connection has a few rows of its
#               own); in_flight is snd_nxt - snd_una in MSS-sized segments (1448 bytes)
#   iperf3.txt  iperf3's own report
#   trace.txt   the raw trace
#   testbed.log the emulated links' report (packets and drops per link)
# Needs iperf3 (and mptcpize for more than one path), tracefs (mounted here if it is not) and the
# braid binary scripts/testbed.sh uses. Traffic stays inside the testbed's namespaces.
set -euo pipefail

here="$(cd "$(dirname "$0")/.." && pwd)"
scenario="" cc=cubic duration=15 out=kernel-trace plain=0

die() { echo "kernel-trace: $*" >&2; exit 1; }
usage() { awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit "${1:-0}"; }

while [ $# -gt 0 ]; do
  case "$1" in
    --scenario) scenario="${2:?--scenario needs a file}"; shift 2 ;;
    --cc) cc="${2:?--cc needs a controller}"; shift 2 ;;
    --duration) duration="${2:?--duration needs whole seconds}"; shift 2 ;;
    --out) out="${2:?--out needs a folder}"; shift 2 ;;
    --tcp) plain=1; shift ;;
    -h|--help) usage 0 ;;
    *) die "unknown option $1 (see --help)" ;;
  esac
done
[ -n "$scenario" ] || die "--scenario FILE is required (see --help)"
[ -f "$scenario" ] || die "no scenario file $scenario"
[[ "$duration" =~ ^[1-9][0-9]{0,3}$ ]] || die "--duration must be whole seconds, 1 to 9999, not $duration"
[[ "$cc" =~ ^[a-z0-9_]+$ ]] || die "--cc must be a kernel controller name such as cubic, reno or bbr"
[ "$(id -u)" = 0 ] || die "must run as root (network namespaces, trace events)"
command -v iperf3 >/dev/null || die "iperf3 is not installed (apt-get install iperf3)"

tracing=/sys/kernel/tracing
[ -d "$tracing/events" ] || mount -t tracefs nodev "$tracing" 2>/dev/null || true
[ -d "$tracing/events/tcp/tcp_probe" ] || die "no tcp_probe trace event under $tracing (tracefs, CONFIG_TRACEPOINTS)"

braid="${BRAID:-$here/target/release/braid}"
[ -x "$braid" ] || die "no braid binary at $braid: run 'cargo build --release' or set BRAID"
paths=$("$braid" emulate "$scenario" --describe | wc -l)
wrap=""
if [ "$plain" = 0 ] && [ "$paths" -gt 1 ]; then
  command -v mptcpize >/dev/null || die "mptcpize is not installed (apt-get install mptcpd), or pass --tcp"
  wrap="mptcpize run"
fi
mkdir -p "$out"
out="$(cd "$out" && pwd)"

# The trace events, the ring buffer's size and whether tracing is on are the whole machine's:
# all go back as they were.
events=(tcp/tcp_probe tcp/tcp_cong_state_set tcp/tcp_retransmit_skb)
was_on=$(cat "$tracing/tracing_on")
was_size=$(awk '{ print $1; exit }' "$tracing/buffer_size_kb")
stop_tracing() {
  for e in "${events[@]}"; do echo 0 >"$tracing/events/$e/enable"; done
  echo 0 >"$tracing/events/tcp/tcp_probe/filter"
  echo "$was_size" >"$tracing/buffer_size_kb"
  echo "$was_on" >"$tracing/tracing_on"
}
trap stop_tracing EXIT
echo 0 >"$tracing/tracing_on"
echo >"$tracing/trace"
echo 262144 >"$tracing/buffer_size_kb"
echo 'dport == 5201' >"$tracing/events/tcp/tcp_probe/filter"
for e in "${events[@]}"; do echo 1 >"$tracing/events/$e/enable"; done

# The testbed runs this with its namespaces' names exported.
run=$(cat <<EOF
set -e
ip netns exec "\$BRAID_SERVER_NS" $wrap iperf3 -s -1 -D
sleep 0.3
echo 1 >"$tracing/tracing_on"
ip netns exec "\$BRAID_CLIENT_NS" $wrap iperf3 -c "\$BRAID_SERVER_ADDR" -t "$duration" -C "$cc" >"$out/iperf3.txt"
echo 0 >"$tracing/tracing_on"
EOF
)
"$here/scripts/testbed.sh" run --scenario "$scenario" -- bash -c "$run" >/dev/null 2>"$out/testbed.log" ||
  { cat "$out/testbed.log" >&2; die "the run failed (its log above, and in $out/testbed.log)"; }
cp "$tracing/trace" "$out/trace.txt"

# The sender's side only: events whose source is a client address (198.18.K.2, K >= 1). The
# source port tells iperf3's control connection (a few events) from the data.
awk '
  function field(name,   i) { for (i = 1; i <= NF; i++) if (index($i, name "=") == 1) return substr($i, length(name) + 2); return "" }
  function hex(s,   i, v) { v = 0; s = tolower(substr(s, 3)); for (i = 1; i <= length(s); i++) v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1; return v }
  function path(addr,   p) { split(addr, p, "[.:]"); return (p[1] == 198 && p[2] == 18 && p[3] >= 1 && p[4] == 2) ? p[3] - 1 : -1 }
  function stamp(   t) { match($0, / [0-9]+\.[0-9]+: tcp_/); t = substr($0, RSTART + 1, RLENGTH - 7) + 0; if (t0 == "") t0 = t; return t - t0 }
  BEGIN { print "time_s,subflow,port,event,cwnd,ssthresh,in_flight,srtt_ms,snd_wnd,state" }
  / tcp_probe: / {
    split(field("src"), a, ":"); k = path(a[1]); if (k < 0) next
    ss = field("ssthresh"); if (ss + 0 >= 2147483647) ss = ""
    flight = (hex(field("snd_nxt")) - hex(field("snd_una")) + 4294967296) % 4294967296
    printf "%.6f,%d,%s,ack,%s,%s,%.1f,%.3f,%s,\n", stamp(), k, a[2], field("snd_cwnd"), ss, flight / 1448, field("srtt") / 1000, field("snd_wnd")
    next
  }
  / tcp_cong_state_set: / { k = path(field("saddr")); if (k >= 0) printf "%.6f,%d,%s,state,,,,,,%s\n", stamp(), k, field("sport"), field("cong_state"); next }
  / tcp_retransmit_skb: / { k = path(field("saddr")); if (k >= 0) printf "%.6f,%d,%s,retransmit,,,,,,\n", stamp(), k, field("sport") }
' "$out/trace.txt" >"$out/trace.csv"
grep -q ',ack,' "$out/trace.csv" ||
  die "no acknowledgement of the client's traced (raw trace in $out/trace.txt; iperf3's report in $out/iperf3.txt)"
echo "kernel-trace: $(($(wc -l <"$out/trace.csv") - 1)) events in $out/trace.csv; iperf3's report in $out/iperf3.txt"
