#!/usr/bin/env bash
# Load test of the release binary on loopback: reads and writes over keep-alive TLS with wrk.
#
#   benches/load.sh [DURATION_SECONDS] [CONNECTIONS]        (defaults: 10 s, 32 connections)
#   ROASTERY_DATABASE_URL=postgres://... benches/load.sh    (PostgreSQL instead of a temp SQLite file)
#
# Prints requests/s and latency percentiles per scenario; results are recorded in docs/performance.md.
# Rate limits are switched off for the run: they would measure the limiter, not the service.
set -euo pipefail
cd "$(dirname "$0")/.."
duration="${1:-10}"
connections="${2:-32}"
command -v wrk >/dev/null || { echo "needs wrk (apt-get install wrk)" >&2; exit 1; }
cargo build --release --locked -q -p roastery-server
bin="$PWD/target/release/roastery"
work="$(mktemp -d)"
trap 'kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; rm -rf "$work"' EXIT
export ROASTERY_DATABASE_URL="${ROASTERY_DATABASE_URL:-sqlite://$work/bench.db}"
export ROASTERY_RATE_LIMIT=off RUST_LOG=warn,rustls=error
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
export ROASTERY_LISTEN="127.0.0.1:$port"
account=$("$bin" accounts create --name bench --json)
id=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["clientId"])' <<<"$account")
secret=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["clientSecret"])' <<<"$account")
(cd "$work" && exec "$bin" serve) & server=$!
base="https://127.0.0.1:$port"
for _ in $(seq 1 100); do curl -skf "$base/healthz" >/dev/null && break; sleep 0.1; done
export TOKEN=$(curl -sk "$base/oauth2/token" -d grant_type=client_credentials \
  -d client_id="$id" -d client_secret="$secret" | python3 -c 'import json,sys; print(json.load(sys.stdin)["access_token"])')
rpc() { curl -sk "$base/rpc/v1/$1" -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' -d "$2"; }

# A realistic page: 100 green lots in one location.
location=$(rpc core.location.importLocation '{"data": {"name": "Bench warehouse", "externalId": "BENCH"}}' \
  | python3 -c 'import json,sys; print(json.load(sys.stdin)["result"]["location"]["id"])')
for i in $(seq 1 100); do
  rpc inventory.green.importGreenLot "{\"data\": {\"name\": \"Lot $i\", \"externalId\": \"bench-$i\",
    \"weight\": {\"amount\": 690.5, \"unit\": \"KG\"}, \"price\": {\"amount\": 7.25, \"currency\": \"EUR\"},
    \"locationId\": \"$location\"}}" >/dev/null
done

scenario() {
  local name="$1" op="$2" body="$3"
  printf '\n== %s (%s)\n' "$name" "$op"
  OPERATION="$op" BODY="$body" wrk -t2 -c"$connections" -d"${duration}s" --latency -s benches/rpc.lua "$base" \
    | grep -E 'Requests/sec|Non-2xx|p50|Socket errors' || true
}
scenario "read: a page of 100 green lots" inventory.green.listGreenLots '{"params": {"pagination": {"limit": 100}}}'
scenario "read: a page of 10 locations" core.location.listLocations '{"params": {"pagination": {"limit": 10}}}'
scenario "write: set a lot weight (one transaction)" inventory.green.setGreenLotWeight \
  "$(rpc inventory.green.listGreenLots '{"params": {"pagination": {"limit": 1}}}' \
     | python3 -c 'import json,sys; l=json.load(sys.stdin)["result"]["greenLots"][0]; print(json.dumps({"data": {"greenLotId": l["id"], "weight": {"amount": 500, "unit": "KG"}}}))')"
printf '\nserver RSS after the run: %s kB\n' "$(ps -o rss= -p "$server" | tr -d ' ')"
