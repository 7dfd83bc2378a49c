#!/usr/bin/env bash
# End-to-end tests of `braid send` / `braid recv` over real packets (issue 11), run by .ci/run as
# root: the testbed of scripts/testbed.sh with the tbf shaper, two 100 Mbit/s paths (client
# 198.18.1.2 and 198.18.2.2, server 198.18.0.2), plus an attacker namespace on the router.
#   1. 200 MB over both paths: SHA-256 equal on both sides, both subflows carry data, goodput at
#      least 90% of 200 Mbit/s (a miss while the hypervisor stole CPU is repeated; see case_1).
#   2. Path 0 down mid-transfer (its router port, a blackhole) and back up: intact, the sender's
#      per-second lines show path 0 idle then used again, the receiver's longest stall under 1 s.
#   3. Both paths down: the sender exits non-zero with a clear error within its --timeout, and
#      `recv --once` non-zero after its --idle-timeout.
#   4. Forged joins from a third namespace that knows the connection's token: refused (counted as
#      invalid, no byte on the forged subflow, no answer larger than the request), transfer intact.
#   5. 10 concurrent clients to one server: all intact.
#   6. As 2, with the client's interface for path 0 going down and up instead.
#   7. Path 0 carrying only 1420-byte packets: known from the client's interface (its subflow
#      sized from the start) and silently dropped on the way (black-hole detection); then the
#      server's interface at 1420 (its subflows sized, the client's falling back): intact.
# Every command runs under `timeout`; the namespaces are removed on exit, also on failure.
# Skips, saying why, only where the machine cannot do it (not root, no namespaces).
#
#   scripts/net-e2e.sh [CASE...]      e.g. scripts/net-e2e.sh 1 3  (default: all)
# BRAID_PROFILE=test uses the binaries `cargo test` already built (CI does, to skip a release
# build); the default is release.
set -euo pipefail
cd "$(dirname "$0")/.."

skip() { echo "net-e2e: SKIPPED: $*"; exit 0; }
[ "$(id -u)" = 0 ] || skip "not root (network namespaces need root)"
ip netns add braid-e2e-probe 2>/dev/null || skip "cannot create network namespaces here"
ip netns del braid-e2e-probe
command -v python3 >/dev/null || { echo "net-e2e: python3 is needed to read the JSON lines" >&2; exit 1; }

profile="${BRAID_PROFILE:-release}"
cargo build --profile "$profile" -q -p braid -p braid-net --bins --example forge_join
[ "$profile" = test ] && dir=debug || dir="$profile"
braid="$PWD/target/$dir/braid"
forge="$PWD/target/$dir/examples/forge_join"
export BRAID="$braid"

prefix=bnet
client="$prefix-client" server="$prefix-server" router="$prefix-router" attacker="$prefix-attacker"
work="$(mktemp -d)"
cleanup() {
  ip netns del "$attacker" 2>/dev/null || true
  scripts/testbed.sh down --prefix "$prefix"
  rm -rf "$work"
}
trap cleanup EXIT
scripts/testbed.sh up --shaper tbf --rates 100Mbit,100Mbit --prefix "$prefix" >/dev/null

# The attacker: a namespace on the router, outside both paths (a killed run may have left one).
ip netns del "$attacker" 2>/dev/null || true
ip netns add "$attacker"
ip -n "$attacker" link set lo up
ip -n "$router" link add name ra type veth peer name att netns "$attacker"
ip -n "$router" addr add 198.18.9.1/24 dev ra
ip -n "$router" link set ra up
ip -n "$attacker" addr add 198.18.9.2/24 dev att
ip -n "$attacker" link set att up
ip -n "$attacker" route add default via 198.18.9.1

passed=0
failed=()
path() { ip -n "$prefix-link$1" link set lr "$2"; }   # path N up|down, at its router port

# recv NAME ARGS...: a receiver in the background, once it listens.
recv() {
  local name=$1
  shift
  ip netns exec "$server" timeout 120 "$braid" recv --listen 198.18.0.2 --json "$@" \
    >"$work/$name.recv" 2>"$work/$name.recv.err" &
  echo $! >"$work/$name.recv.pid"
  for _ in $(seq 50); do
    grep -q '"listening"' "$work/$name.recv" 2>/dev/null && return 0
    sleep 0.1
  done
  echo "net-e2e: the receiver did not start: $(cat "$work/$name.recv.err")" >&2
  return 1
}

# send NAME ARGS...: a sender over both paths, in the foreground.
send() {
  local name=$1
  shift
  ip netns exec "$client" timeout 120 "$braid" send --to 198.18.0.2 --via 198.18.1.2,198.18.2.2 --json "$@" \
    >"$work/$name.send" 2>"$work/$name.send.err"
}

# check NAME PYTHON: runs PYTHON with `sent` and `got` (the JSON lines of NAME's sender and
# receiver) and `same(sent_summary, got_summary)`.
check() {
  python3 - "$work" "$1" "$2" <<'PY'
import json, os, sys
work, name, code = sys.argv[1:]
def lines(path):
    return [json.loads(l) for l in open(path)] if os.path.exists(path) else []
sent, got = lines(f"{work}/{name}.send"), lines(f"{work}/{name}.recv")
def summaries(ls):
    return [l for l in ls if l["event"] == "summary"]
def same(s, r):
    assert s["sha256"] == r["sha256"] and s["bytes"] == r["bytes"], f"sent {s['bytes']} B {s['sha256']}, received {r['bytes']} B {r['sha256']}"
exec(code)
PY
}

# CPU time (ms) the hypervisor has given to other machines since boot (`steal` in /proc/stat).
stolen_ms() { awk -v hz="$(getconf CLK_TCK)" '/^cpu /{print int($9 * 1000 / hz)}' /proc/stat; }
# Waits up to 10 s for a second in which the hypervisor stole nothing.
quiet_host() {
  local a
  for _ in $(seq 10); do
    a="$(stolen_ms)"
    sleep 1
    [ "$(stolen_ms)" = "$a" ] && return 0
  done
}

# Goodput is a timing target: a miss while the hypervisor stole more than 20 ms of CPU is void
# (as in crates/braid-emu/tests/netns.rs) and the transfer is repeated, up to four times in all.
# Integrity and the split over both paths are asserted on every attempt.
case_1() {
  local k rc
  for k in 1 2 3 4; do
    quiet_host
    local before
    before="$(stolen_ms)"
    recv c1 --once
    send c1 --bytes 200MB
    wait "$(cat "$work/c1.recv.pid")"
    rc=0
    STOLEN=$(($(stolen_ms) - before)) check c1 '
s, r = summaries(sent)[-1], summaries(got)[-1]
same(s, r)
assert s["bytes"] == 200_000_000
per = [f["bytes"] for f in r["subflows"]]
assert len(per) == 2 and min(per) > 0.2 * sum(per), f"bytes per subflow {per}"
g, stolen = r["goodput_mbps"], int(os.environ["STOLEN"])
print("  200 MB: goodput %.1f Mbit/s at the receiver (%.1f at the sender), bytes per subflow %s, %d ms stolen" % (g, s["goodput_mbps"], per, stolen))
if g < 180 and stolen > 20:
    print("  void: goodput below 180 Mbit/s while the hypervisor stole %d ms of CPU" % stolen)
    sys.exit(3)
assert g >= 180, "goodput %.1f Mbit/s < 90%% of 200" % g
' || rc=$?
    [ "$rc" = 3 ] || return "$rc"
  done
  echo "  goodput NOT JUDGED: the hypervisor stole CPU during every attempt (data intact each time)"
}

# flap NAME CUT RESTORE: a 150 MB transfer; 2 s in, CUT (a function) takes path 0 away, 3 s later
# RESTORE brings it back. Intact, path 0 idle while path 1 carries the data then used again,
# the receiver's longest stall under 1 s.
flap() {
  local name=$1 cut=$2 restore=$3
  recv "$name" --once
  (sleep 2; "$cut"; sleep 3; "$restore") &
  local flapper=$!
  send "$name" --bytes 150MB
  wait "$flapper"
  wait "$(cat "$work/$name.recv.pid")"
  check "$name" '
s, r = summaries(sent)[-1], summaries(got)[-1]
same(s, r)
iv = [l for l in sent if l["event"] == "interval" and len(l["subflows"]) == 2]
for l in iv:
    print("  [%5.1fs] sf0 %6.1f  sf1 %6.1f Mbit/s  %s" % (l["t"], l["subflows"][0]["mbps"], l["subflows"][1]["mbps"], l["subflows"][0]["state"]))
down = [i for i, l in enumerate(iv) if l["subflows"][0]["mbps"] < 1 and l["subflows"][1]["mbps"] > 50]
assert down, "no second with path 0 idle and path 1 carrying the data"
assert any(l["subflows"][0]["mbps"] > 10 for l in iv[down[-1] + 1:]), "path 0 not used again after it came back"
stall = r["max_stall_ms"]
print("  longest stall %.0f ms" % stall)
assert stall < 1000, "stall of %.0f ms" % stall
'
}

blackhole() { path 0 down; }
unblackhole() { path 0 up; }
case_2() { flap c2 blackhole unblackhole; }

case_3() {
  recv c3 --once --idle-timeout 5s
  (sleep 1.5; path 0 down; path 1 down; date +%s.%N >"$work/c3.down") &
  local cut=$! rc=0
  send c3 --bytes 10GB --timeout 3s || rc=$?
  local end
  end="$(date +%s.%N)"
  wait "$cut"
  path 0 up
  path 1 up
  local recv_rc=0
  wait "$(cat "$work/c3.recv.pid")" || recv_rc=$?
  [ "$rc" != 0 ] && [ "$rc" != 124 ] || { echo "  send exited with $rc" >&2; return 1; }
  # The receiver heard nothing more: recv --once ends non-zero after its idle timeout.
  [ "$recv_rc" != 0 ] && [ "$recv_rc" != 124 ] || { echo "  recv --once exited with $recv_rc" >&2; return 1; }
  grep -q "timed out" "$work/c3.recv.err" || { echo "  recv: $(cat "$work/c3.recv.err")" >&2; return 1; }
  grep -q "no usable path" "$work/c3.send.err" || { echo "  unclear error: $(cat "$work/c3.send.err")" >&2; return 1; }
  python3 -c "import sys; d = $end - $(cat "$work/c3.down"); print(f'  exit {sys.argv[1]} {d:.1f} s after both paths went down: ' + open(sys.argv[2]).read().strip()); assert d < 6, d" \
    "$rc" "$work/c3.send.err"
}

case_4() {
  recv c4 --once
  send c4 --bytes 100MB &
  local sender=$! token=""
  for _ in $(seq 50); do
    token="$(python3 -c 'import json, sys
for l in open(sys.argv[1]):
    l = json.loads(l)
    if l["event"] == "start": print(l["token"])' "$work/c4.send" 2>/dev/null || true)"
    [ -n "$token" ] && break
    sleep 0.1
  done
  [ -n "$token" ] || { echo "  no token in the sender's output" >&2; return 1; }
  ip netns exec "$attacker" timeout 30 "$forge" 198.18.0.2:4747 "$token" 50 >"$work/c4.forge"
  wait "$sender"
  wait "$(cat "$work/c4.recv.pid")"
  check c4 '
s, r = summaries(sent)[-1], summaries(got)[-1]
same(s, r)
forge = open(f"{work}/c4.forge").read().strip()
print("  %s; the receiver counted %d invalid packets" % (forge, r["invalid_packets"]))
words = forge.split()
answer, request = int(words[words.index("answer") + 1]), int(words[words.index("request") + 2])
assert answer <= request, forge
assert r["invalid_packets"] >= 50, r["invalid_packets"]
forged = [f for f in r["subflows"] if f["remote"].startswith("198.18.9.")]
assert all(f["bytes"] == 0 for f in forged), forged
real = [f for f in r["subflows"] if f not in forged]
assert sum(f["bytes"] for f in real) == s["bytes"] and all(f["bytes"] > 0 for f in real[:2]), real
'
}

case_5() {
  recv c5
  local pids=() i
  for i in $(seq 10); do
    send "c5-$i" --bytes 10MB --seed "$i" &
    pids+=($!)
  done
  local rc=0
  for p in "${pids[@]}"; do wait "$p" || rc=1; done
  sleep 1
  kill -TERM "$(cat "$work/c5.recv.pid")" 2>/dev/null || true
  wait "$(cat "$work/c5.recv.pid")" || true
  [ "$rc" = 0 ] || { echo "  a sender failed: $(cat "$work"/c5-*.send.err)" >&2; return 1; }
  check c5 '
sent_sha = sorted(summaries(lines(f"{work}/c5-{i}.send"))[-1]["sha256"] for i in range(1, 11))
got_sha = sorted(r["sha256"] for r in summaries(got) if r["bytes"] == 10_000_000)
assert len(set(sent_sha)) == 10, "the seeds give different data"
assert got_sha == sent_sha, f"{len(got_sha)} of 10 connections intact"
print(f"  10 connections of 10 MB, all intact")
'
}

# The client's interface itself goes down: its routes go with it, so coming back up
# restores path 0's policy route as the testbed made it.
if_down() { ip -n "$client" link set emu0 down; }
if_up() {
  ip -n "$client" link set emu0 up
  ip -n "$client" route replace default via 198.18.1.1 dev emu0 table 100
  ip -n "$client" route replace default via 198.18.1.1 dev emu0
}
case_6() { flap c6 if_down if_up; }

# mtu_transfer NAME PYTHON [SEND_ARGS]: sends 50 MB (or what SEND_ARGS ask); prints each
# subflow's MSS and RTOs at the sender and bytes at the receiver, and runs PYTHON with `sf` (the
# sender's summary subflows) and `rf` (the receiver's).
mtu_transfer() {
  recv "$1" --once
  if [ $# -gt 2 ]; then send "$1" "${@:3}"; else send "$1" --bytes 50MB; fi
  wait "$(cat "$work/$1.recv.pid")"
  check "$1" '
s, r = summaries(sent)[-1], summaries(got)[-1]
same(s, r)
sf, rf = s["subflows"], r["subflows"]
print("  MSS %s, RTOs %s at the sender; bytes per subflow at the receiver %s" % ([f["mss"] for f in sf], [f["rtos"] for f in sf], [f["bytes"] for f in rf]))
'"$2"
}

# Path 0 carries only 1420-byte packets (a VPN's MTU). 1. The client's interface says so: its
# subflow takes the route's MTU (1322-byte payloads) from the start and keeps it every second (no
# black-hole fallback; a timeout from ordinary congestion may still happen, one did in CI), and
# each subflow carries at least 30% (a subflow below the connection's MSS once stalled the
# scheduler: 5-16% went over path 1, 99-111 Mbit/s of 200 on 200 MB; now 50%, 183-191). 2. A bridge
# port on the way drops larger frames without a word: black-hole detection brings subflow 0 down
# to 1162-byte payloads after two timeouts and it carries data again; 10 s later its probes
# search up to within 8 bytes of the 1322 the path carries (and so under the redundant
# scheduler). Path 1 keeps 1400 in all.
# Then both paths, at the server's end (3, below).
case_7() {
  local rc=0
  ip -n "$client" link set emu0 mtu 1420
  mtu_transfer c7a '
assert [f["mss"] for f in sf] == [1322, 1400], sf
mss0 = [l["subflows"][0]["mss"] for l in sent if "subflows" in l and l["event"] != "summary"]
assert mss0 and set(mss0) == {1322}, mss0
assert min(f["bytes"] for f in rf) > 0.3 * sum(f["bytes"] for f in rf), rf
' || rc=$?
  ip -n "$client" link set emu0 mtu 1500
  [ "$rc" = 0 ] || return "$rc"
  ip -n "$prefix-link0" link set lr mtu 1420
  ip -n "$router" link set r0 mtu 1420
  # One datagram per frame from the client: a UDP GSO batch smaller than tbf's burst crosses the
  # veths, the bridge and the router whole, and no MTU check looks at its segments (a real
  # network's NIC or first hop would split it), so a lone probe batched with a smaller packet
  # would get through.
  ip -n "$client" link set dev emu0 gso_max_segs 1
  mtu_transfer c7b '
assert 1315 <= sf[0]["mss"] <= 1322 and sf[1]["mss"] == 1400, sf
assert sf[0]["rtos"] >= 2, sf
assert rf[0]["bytes"] > 1_000_000, rf
mss0 = [l["subflows"][0]["mss"] for l in sent if "subflows" in l and l["event"] != "summary"]
assert 1162 in mss0, mss0
' --time 14s || rc=$?
  # The same under the redundant scheduler, whose subflow 0 sees its data delivered by subflow 1
  # first and sends a zero-length probe after a timeout (its acknowledgement must not end the
  # row of timeouts the detection counts), and whose search's probes go out too.
  [ "$rc" = 0 ] && mtu_transfer c7r '
assert 1315 <= sf[0]["mss"] <= 1322 and sf[1]["mss"] == 1400, sf
assert sf[0]["rtos"] >= 2, sf
mss0 = [l["subflows"][0]["mss"] for l in sent if "subflows" in l and l["event"] != "summary"]
assert 1162 in mss0, mss0
' --time 14s --scheduler redundant || rc=$?
  ip -n "$prefix-link0" link set lr mtu 1500
  ip -n "$router" link set r0 mtu 1500
  ip -n "$client" link set dev emu0 gso_max_segs 65535
  ip -n "$client" route flush cache
  [ "$rc" = 0 ] || return "$rc"
  # 3. The server's interface at 1420: its subflows take 1322 from their first packet (the
  # receiver's summary), and the client's, whose own routes say 1500, both fall back.
  ip -n "$server" link set emu mtu 1420
  mtu_transfer c7c '
assert [f["mss"] for f in rf] == [1322, 1322], rf
assert [f["mss"] for f in sf] == [1162, 1162], sf
' || rc=$?
  ip -n "$server" link set emu mtu 1500
  ip -n "$client" route flush cache
  return "$rc"
}

cases=("$@")
[ ${#cases[@]} -gt 0 ] || cases=(1 2 3 4 5 6 7)
for c in "${cases[@]}"; do
  echo "net-e2e: case $c"
  if "case_$c"; then
    passed=$((passed + 1))
  else
    failed+=("$c")
    for f in "$work"/c"$c"*.err; do [ -s "$f" ] && sed "s|^|  $(basename "$f"): |" "$f" >&2; done
  fi
done
echo "net-e2e: $passed passed, ${#failed[@]} failed${failed:+ (cases ${failed[*]})}"
[ ${#failed[@]} = 0 ]
