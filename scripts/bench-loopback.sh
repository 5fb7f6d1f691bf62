#!/usr/bin/env bash
# Side by side on loopback, in one run:
#   1. iperf3 UDP (one stream, unlimited rate) with the soft NIC's datagram size;
#   2. `metaroce bench write --size 65536` directly over loopback;
#   3. the same through the relay, lossless and at 1% loss.
# Prints a table of goodput and CPU time per GB, and the two goal ratios:
#   soft NIC WRITE / iperf3 UDP (goal >= 1.0) and relay 1% loss / relay lossless (goal >= 0.9).
# Env: DUR (seconds per run, default 5), ROUNDS (default 3; medians are reported), PATHS (default 8), BIN (metaroce binary; default:
# build it), IP (default 127.0.0.1).
set -euo pipefail
cd "$(dirname "$0")/.."
DUR=${DUR:-5}
ROUNDS=${ROUNDS:-3}
PATHS=${PATHS:-8}
IP=${IP:-127.0.0.1}
if ! command -v iperf3 >/dev/null; then
    apt-get install -y iperf3 >/dev/null || { apt-get update >/dev/null && apt-get install -y iperf3 >/dev/null; }
fi
if [ -z "${BIN:-}" ]; then
    cargo build --release -p metaroce-cli >&2
    BIN="${CARGO_TARGET_DIR:-target}/release/metaroce"
fi
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

# Other jobs on a shared machine move the numbers a lot: run ROUNDS rounds, each
# alternating all four runs, and report medians.
for R in $(seq 1 "$ROUNDS"); do
    echo "round $R/$ROUNDS: metaroce bench write (direct loopback) ..." >&2
    "$BIN" bench write --size 65536 --paths "$PATHS" --duration "$DUR" --ip "$IP" --json \
        >"$TMP/direct-$R.json"
    DGRAM=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["datagram_bytes"])' \
        "$TMP/direct-$R.json")
    echo "round $R/$ROUNDS: iperf3 UDP, ${DGRAM}-byte datagrams ..." >&2
    PORT=$((20000 + RANDOM % 20000))
    iperf3 -s -1 -B "$IP" -p "$PORT" >/dev/null 2>&1 &
    SERVER=$!
    sleep 0.5
    iperf3 -c "$IP" -p "$PORT" -u -b 0 -l "$DGRAM" -t "$DUR" -J >"$TMP/iperf-$R.json"
    wait "$SERVER" || true
    for LOSS in 0 0.01; do
        echo "round $R/$ROUNDS: metaroce bench write through the relay, loss $LOSS ..." >&2
        "$BIN" bench write --size 65536 --paths "$PATHS" --duration "$DUR" --ip "$IP" \
            --loss "$LOSS" --json >"$TMP/relay-$LOSS-$R.json"
    done
done

python3 - "$TMP" "$DUR" "$ROUNDS" <<'PY'
import json, statistics, sys
tmp, dur, rounds = sys.argv[1], float(sys.argv[2]), int(sys.argv[3])
med = statistics.median

def iperf(r):
    e = json.load(open(f"{tmp}/iperf-{r}.json"))["end"]
    sent = e["sum"]["bits_per_second"]
    lost = e["sum"].get("lost_percent", 0.0) / 100.0
    recv = sent * (1.0 - lost)
    cpu = e["cpu_utilization_percent"]
    # Percent of one CPU over the run, sender + receiver.
    cpu_s = (cpu["host_total"] + cpu["remote_total"]) / 100.0 * dur
    gb = recv * dur / 8 / 1e9
    return sent / 1e9, recv / 1e9, lost, cpu_s / gb if gb else 0.0

ip = [iperf(r) for r in range(1, rounds + 1)]
runs = {f: [json.load(open(f"{tmp}/{f}-{r}.json")) for r in range(1, rounds + 1)]
        for f in ("direct", "relay-0", "relay-0.01")}
def m(f, k):
    return med([d[k] for d in runs[f]])
res = {"rounds": rounds, "seconds_per_run": dur,
       "datagram_bytes": runs["direct"][0]["datagram_bytes"],
       "iperf3_udp_sent_gbps": med([x[0] for x in ip]),
       "iperf3_udp_received_gbps": med([x[1] for x in ip]),
       "iperf3_udp_lost": med([x[2] for x in ip]),
       "iperf3_cpu_seconds_per_gb": med([x[3] for x in ip])}
for f in runs:
    res[f] = {"goodput_gbps": m(f, "goodput_gbps"), "cpu_seconds_per_gb": m(f, "cpu_seconds_per_gb"),
              "retransmits": m(f, "retransmits"), "verified": all(d["verified"] for d in runs[f]),
              "each_gbps": [round(d["goodput_gbps"], 2) for d in runs[f]]}
print(f"datagram size {res['datagram_bytes']} B, {dur:g} s per run, median of {rounds} rounds")
print(f"{'run':32} {'Gbit/s':>7} {'CPU s/GB':>9} {'verified':>9} {'retx':>7}  each round")
print(f"{'iperf3 UDP (sent)':32} {res['iperf3_udp_sent_gbps']:7.2f} {'-':>9} {'-':>9} {'-':>7}  "
      f"lost {res['iperf3_udp_lost']:.1%}")
print(f"{'iperf3 UDP (received)':32} {res['iperf3_udp_received_gbps']:7.2f} "
      f"{res['iperf3_cpu_seconds_per_gb']:9.2f} {'-':>9} {'-':>7}  {[round(x[1], 2) for x in ip]}")
for name, f in [("metaroce WRITE, direct", "direct"), ("metaroce WRITE, relay lossless", "relay-0"),
                ("metaroce WRITE, relay 1% loss", "relay-0.01")]:
    r = res[f]
    print(f"{name:32} {r['goodput_gbps']:7.2f} {r['cpu_seconds_per_gb']:9.2f} {str(r['verified']):>9} "
          f"{r['retransmits']:7.0f}  {r['each_gbps']}")
r1 = res["direct"]["goodput_gbps"] / max(res["iperf3_udp_received_gbps"], 1e-9)
r0 = res["direct"]["goodput_gbps"] / max(res["iperf3_udp_sent_gbps"], 1e-9)
r2 = res["relay-0.01"]["goodput_gbps"] / max(res["relay-0"]["goodput_gbps"], 1e-9)
print(f"soft NIC WRITE / iperf3 UDP received: {r1:.2f}x (goal >= 1.0); / iperf3 sent: {r0:.2f}x")
print(f"relay 1% loss / relay lossless:       {r2:.2f}  (goal >= 0.9)")
res.update(write_vs_iperf3=r1, write_vs_iperf3_sent=r0, goodput_vs_lossless_1pct=r2)
json.dump(res, open(f"{tmp}/summary.json", "w"))
PY
