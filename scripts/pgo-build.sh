#!/usr/bin/env bash
# Builds braid with profile-guided optimisation (PGO): an instrumented
# build runs the simulator's bench series, the shipped scenarios and a
# loopback transfer, and the release build is then laid out and inlined by
# what those runs did (rustc's -Cprofile-generate / -Cprofile-use).
#
# Why: the simulator's per-packet path is branchy code spread over many
# functions; with the profile the compiler keeps the hot paths straight
# and inlined and moves rare branches aside. Measured: 10.5% fewer
# instructions per delivered packet on the 5 s two-path run, about 28%
# less CPU time than the plain build before .cargo/config.toml's layout
# passes, 7-15% less than with them (README, "Speed and memory"; docs/speed.md). Outputs are unchanged: the script checks that the
# optimised build's summary of the default scenario is byte-identical to
# the instrumented build's (which is compiled without the profile).
#
# Needs llvm-profdata of rustc's own LLVM: `rustup component add llvm-tools`.
# The result is target/pgo/use/release/braid; the plain `cargo build
# --release` is untouched. Takes about twice a release build.
set -euo pipefail
cd "$(dirname "$0")/.."

usage() {
    echo "usage: scripts/pgo-build.sh   (no arguments; see the comment at its top)" >&2
    exit 2
}
[ $# -eq 0 ] || usage

host=$(rustc -vV | sed -n 's/^host: //p')
profdata="$(rustc --print sysroot)/lib/rustlib/$host/bin/llvm-profdata"
if [ ! -x "$profdata" ]; then
    echo "pgo-build: no llvm-profdata at $profdata; install it with: rustup component add llvm-tools" >&2
    exit 1
fi

work="$PWD/target/pgo"
case "$work" in
    *[[:space:]]*)
        echo "pgo-build: the checkout's path has a space, which RUSTFLAGS cannot carry: $work" >&2
        exit 1
        ;;
esac
if [ -n "${CARGO_ENCODED_RUSTFLAGS:-}" ]; then
    echo "pgo-build: CARGO_ENCODED_RUSTFLAGS is set and would override the profile flags; unset it" >&2
    exit 1
fi
rm -rf "$work/profiles" "$work/braid.profdata"
mkdir -p "$work/profiles"

echo "pgo-build: 1/4 instrumented build" >&2
RUSTFLAGS="${RUSTFLAGS:-} -Cprofile-generate=$work/profiles" \
    cargo build --release --target-dir "$work/gen" -p braid
gen="$work/gen/release/braid"

echo "pgo-build: 2/4 training runs" >&2
"$gen" run -q --json > "$work/default.instrumented.json"
for f in scenarios/*.toml scenarios/*/*.toml; do
    "$gen" run "$f" -q --json > /dev/null
done
"$gen" bench --two-path --repeat 1 > /dev/null
for ack in 1 2; do
    "$gen" bench --flows 10 --ack-every "$ack" --repeat 1 --duration 20s > /dev/null
    "$gen" bench --flows 1000 --ack-every "$ack" --repeat 1 --duration 0.2s > /dev/null
done
# The real-network transport, so its code is not laid out as never run:
# a receiver on a port the OS picks, read back from its first line.
"$gen" recv --listen 127.0.0.1:0 --once --json > "$work/recv.jsonl" &
recv=$!
trap 'kill "$recv" 2> /dev/null || true' EXIT
addr=""
for _ in $(seq 100); do
    addr=$(sed -n 's/.*"listening".*"\(127\.0\.0\.1:[0-9]*\)".*/\1/p' "$work/recv.jsonl")
    [ -n "$addr" ] && break
    kill -0 "$recv" 2> /dev/null || break
    sleep 0.1
done
if [ -z "$addr" ]; then
    echo "pgo-build: braid recv did not start listening on 127.0.0.1" >&2
    exit 1
fi
"$gen" send --to "$addr" --bytes 50MB --timeout 60s > /dev/null
wait "$recv"

echo "pgo-build: 3/4 merging profiles" >&2
"$profdata" merge -o "$work/braid.profdata" "$work/profiles"

echo "pgo-build: 4/4 optimised build" >&2
RUSTFLAGS="${RUSTFLAGS:-} -Cprofile-use=$work/braid.profdata" \
    cargo build --release --target-dir "$work/use" -p braid
built="$work/use/release/braid"

"$built" run -q --json > "$work/default.optimised.json"
if ! cmp -s "$work/default.instrumented.json" "$work/default.optimised.json"; then
    echo "pgo-build: the optimised build's summary of the default scenario differs from the instrumented build's" >&2
    exit 1
fi
echo "$built"
