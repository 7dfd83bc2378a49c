#!/usr/bin/env bash
# Seed 004's hybrid-access testbed in network namespaces (run as root):
# a client with one interface per path, the paths' links, and a server.
# Traffic stays inside the namespaces this script creates.
#
#   scripts/testbed.sh up   [--shaper emulator|tbf] [--scenario FILE | --rates R1,R2,...] [--prefix NAME]
#                           [--emulate-arg ARG]...
#   scripts/testbed.sh run  [same options] -- COMMAND [ARGS...]   (up, COMMAND, down; always cleans up)
#   scripts/testbed.sh down [--prefix NAME]
#   scripts/testbed.sh status [--prefix NAME]
#
# Shapers:
#   emulator (default)  `braid emulate` joins the client and the server through TUN devices and
#                       applies the scenario's links (rate, queue, delay, loss, outages) per
#                       direction, as the simulator does (docs/emulator.md). Each --emulate-arg
#                       goes to `braid emulate` (e.g. --emulate-arg --seed=3).
#   tbf                 veth pairs, a router and one bridge namespace per path whose ports carry a
#                       `tbf` qdisc at the path's rate and queue (both directions). tbf can neither
#                       delay nor drop at random: a scenario asking for delay or loss is refused
#                       unless --allow-tbf-approximation is given (then only rates apply).
#
# --rates 100Mbit,50Mbit stands for a scenario of one path per rate, no delay, no loss, 100-packet
# queues (the scenario's rate syntax); without either option, scenarios/hybrid-access.toml.
#
# Both shapers give the same names and addresses (docs/emulator.md):
#   namespaces  PREFIX-client, PREFIX-server (tbf adds PREFIX-router and PREFIX-link0, ...)
#   client      emu0, emu1, ... with 198.18.1.2, 198.18.2.2, ...; policy routing per address
#   server      emu with 198.18.0.2
# and the kernel's MPTCP ready to use: limits of 8 subflows, one `subflow` endpoint per extra
# client address, so `mptcpize run iperf3 -c 198.18.0.2` in the client opens one subflow per path.
# `run` exports BRAID_CLIENT_NS, BRAID_SERVER_NS, BRAID_SERVER_ADDR and BRAID_CLIENT_ADDRS to COMMAND.
#
# The braid binary is $BRAID, or target/release/braid of this checkout.
set -euo pipefail

here="$(cd "$(dirname "$0")/.." && pwd)"
braid="${BRAID:-$here/target/release/braid}"
shaper=emulator
scenario="$here/scenarios/hybrid-access.toml"
prefix=braid
approximate=0
rates=""
emulate_args=()
command=()

die() { echo "testbed: $*" >&2; exit 1; }

usage() { awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit "${1:-0}"; }

cmd="${1:-}"
[ -n "$cmd" ] || usage 2
shift
while [ $# -gt 0 ]; do
  case "$1" in
    --shaper) shaper="${2:?--shaper needs emulator or tbf}"; shift 2 ;;
    --scenario) scenario="${2:?--scenario needs a file}"; shift 2 ;;
    --rates) rates="${2:?--rates needs R1,R2,...}"; shift 2 ;;
    --prefix) prefix="${2:?--prefix needs a name}"; shift 2 ;;
    --allow-tbf-approximation) approximate=1; shift ;;
    --emulate-arg) emulate_args+=("${2:?--emulate-arg needs a value}"); shift 2 ;;
    -h|--help) usage 0 ;;
    --) shift; command=("$@"); break ;;
    *) die "unknown option $1 (see --help)" ;;
  esac
done
case "$shaper" in emulator|tbf) ;; *) die "--shaper must be emulator or tbf, not $shaper" ;; esac
[[ "$prefix" =~ ^[a-z][a-z0-9-]{0,11}$ ]] || die "--prefix must be 1-12 lowercase letters, digits or dashes"

client="$prefix-client"
server="$prefix-server"
router="$prefix-router"
rundir="/run/braid-testbed/$prefix"

need_root() { [ "$(id -u)" = 0 ] || die "must run as root (network namespaces)"; }
need_braid() {
  [ -x "$braid" ] || die "no braid binary at $braid: run 'cargo build --release' or set BRAID"
}

# Path lines from the scenario: name rate_bps queue_bytes one_way_delay_ms loss.
paths() { "$braid" emulate "$scenario" --describe; }

mptcp_setup() {
  local n=$1 i
  for ns in "$client" "$server"; do
    ip netns exec "$ns" sysctl -q -w net.mptcp.enabled=1 net.ipv4.tcp_no_metrics_save=1
    ip -n "$ns" mptcp limits set subflows 8 add_addr_accepted 8
  done
  ip -n "$client" mptcp endpoint flush
  for ((i = 1; i < n; i++)); do
    ip -n "$client" mptcp endpoint add "198.18.$((i + 1)).2" dev "emu$i" subflow
  done
}

new_ns() { ip netns del "$1" 2>/dev/null || true; ip netns add "$1"; ip -n "$1" link set lo up; }

up_emulator() {
  mkdir -p "$rundir"
  new_ns "$client"
  new_ns "$server"
  "$braid" emulate "$scenario" --client-ns "$client" --server-ns "$server" "${emulate_args[@]}" \
    >"$rundir/emulate.log" 2>&1 &
  echo $! >"$rundir/emulate.pid"
  for _ in $(seq 100); do
    grep -q '^ready$' "$rundir/emulate.log" && return 0
    kill -0 "$(cat "$rundir/emulate.pid")" 2>/dev/null || break
    sleep 0.1
  done
  cat "$rundir/emulate.log" >&2
  die "braid emulate did not become ready"
}

up_tbf() {
  local name rate queue delay loss i=0 burst
  new_ns "$client"
  new_ns "$server"
  new_ns "$router"
  ip netns exec "$router" sysctl -q -w net.ipv4.ip_forward=1
  ip netns exec "$client" sysctl -q -w net.ipv4.conf.all.rp_filter=0 net.ipv4.conf.default.rp_filter=0
  ip -n "$router" link add name rs type veth peer name emu netns "$server"
  ip -n "$router" addr add 198.18.0.1/24 dev rs
  ip -n "$router" link set rs up
  ip -n "$server" addr add 198.18.0.2/24 dev emu
  ip -n "$server" link set emu up
  ip -n "$server" route add 198.18.0.0/16 via 198.18.0.1
  while read -r name rate queue delay loss; do
    if [ "$delay" != 0.000 ] || [ "$loss" != 0.000000 ]; then
      [ "$approximate" = 1 ] || die "path $name asks for ${delay} ms delay and loss $loss: tbf can do neither (use --shaper emulator, or --allow-tbf-approximation for rates only)"
      echo "testbed: path $name: tbf ignores ${delay} ms delay and loss $loss" >&2
    fi
    local link="$prefix-link$i" addr="198.18.$((i + 1)).2" gw="198.18.$((i + 1)).1"
    new_ns "$link"
    ip -n "$link" link add name br0 type bridge
    ip -n "$link" link add name lc type veth peer name "emu$i" netns "$client"
    ip -n "$link" link add name lr type veth peer name "r$i" netns "$router"
    for dev in lc lr; do
      ip -n "$link" link set "$dev" master br0 up
    done
    ip -n "$link" link set br0 up
    # 1 ms of data per burst (at least two full frames), the path's queue as the limit.
    burst=$((rate / 8000 > 3028 ? rate / 8000 : 3028))
    ip netns exec "$link" tc qdisc add dev lr root tbf rate "${rate}bit" burst "$burst" limit "$queue"
    ip netns exec "$link" tc qdisc add dev lc root tbf rate "${rate}bit" burst "$burst" limit $((queue * 10))
    ip -n "$router" addr add "$gw/24" dev "r$i"
    ip -n "$router" link set "r$i" up
    ip -n "$client" addr add "$addr/24" dev "emu$i"
    ip -n "$client" link set "emu$i" up
    ip -n "$client" route add default via "$gw" dev "emu$i" table $((100 + i))
    ip -n "$client" rule add from "$addr" table $((100 + i)) priority $((100 + i))
    [ "$i" = 0 ] && ip -n "$client" route add default via "$gw" dev emu0
    i=$((i + 1))
  done < <(paths)
}

count_paths() { paths | wc -l; }

down() {
  if [ -f "$rundir/emulate.pid" ]; then
    local pid
    pid="$(cat "$rundir/emulate.pid")"
    if kill -0 "$pid" 2>/dev/null; then
      kill -TERM "$pid"
      for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
      kill -KILL "$pid" 2>/dev/null || true
      # The emulator's per-link counters, printed when it stopped.
      sed -n '/^link /,$p' "$rundir/emulate.log" >&2 || true
    fi
    rm -f "$rundir/emulate.pid"
  fi
  for ns in $(ip netns list | awk '{print $1}' | grep -E "^$prefix-(client|server|router|link[0-9]+)$" || true); do
    ip netns del "$ns"
  done
}

# A scenario file for --rates.
rates_scenario() {
  local i=0 r
  printf 'name = "rates"\n[topology]\nkind = "hybrid-access"\n'
  for r in ${rates//,/ }; do
    i=$((i + 1))
    printf '[[topology.link]]\nname = "L%d"\nrate = "%s"\nqueue = "100p"\n' "$i" "$r"
  done
  printf '[[flow]]\n'
}

up() {
  need_root
  need_braid
  if [ -n "$rates" ]; then
    mkdir -p "$rundir"
    scenario="$rundir/rates.toml"
    rates_scenario >"$scenario"
  fi
  [ -f "$scenario" ] || die "no scenario file $scenario"
  down
  local n
  n="$(count_paths)" || die "cannot read $scenario"
  "up_$shaper"
  mptcp_setup "$n"
  echo "testbed $prefix up: $shaper, $n paths from $scenario"
  echo "  client namespace $client: $(for ((i = 0; i < n; i++)); do printf 'emu%d 198.18.%d.2  ' "$i" $((i + 1)); done)"
  echo "  server namespace $server: emu 198.18.0.2"
}

case "$cmd" in
  up) up ;;
  down) need_root; down ;;
  status)
    ip netns list | grep -E "^$prefix-" || echo "testbed $prefix: down"
    [ -f "$rundir/emulate.log" ] && head -n 20 "$rundir/emulate.log" ;;
  run)
    [ ${#command[@]} -gt 0 ] || die "run needs -- COMMAND"
    trap down EXIT
    up >&2
    export BRAID_CLIENT_NS="$client" BRAID_SERVER_NS="$server" BRAID_SERVER_ADDR=198.18.0.2
    BRAID_CLIENT_ADDRS="$(for ((i = 0; i < $(count_paths); i++)); do printf '198.18.%d.2,' $((i + 1)); done)"
    export BRAID_CLIENT_ADDRS="${BRAID_CLIENT_ADDRS%,}"
    "${command[@]}" ;;
  *) usage 2 ;;
esac
