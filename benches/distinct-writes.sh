#!/usr/bin/env bash
# Write throughput on PostgreSQL for writes to distinct lots (setGreenLotWeight over 100 lots of
# 100 origins), for one or more release binaries run one after the other in the same window, so
# that their ratio is meaningful on a shared machine. Also the cost of the shared rate limit:
# listLocations with a limit too high to refuse anything, against the limit off.
#
#   benches/distinct-writes.sh [DURATION_SECONDS] [CONNECTIONS] BINARY...
#   (ROASTERY_BENCH_PG: server URL, default postgres://postgres@127.0.0.1:5432/test)
set -euo pipefail
cd "$(dirname "$0")/.."
duration="$1"; connections="$2"; shift 2
pg="${ROASTERY_BENCH_PG:-postgres://postgres@127.0.0.1:5432/test}"
command -v wrk >/dev/null || { echo "needs wrk (apt-get install wrk)" >&2; exit 1; }
export RUST_LOG=warn,rustls=error

run() {
  local bin="$1" rate_limit="$2" scenario="$3"
  local db="roastery_bench_$$_$RANDOM" work server port base token id secret
  work="$(mktemp -d)"
  psql "$pg" -qc "CREATE DATABASE $db"
  local url="${pg%/*}/$db"
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  export ROASTERY_DATABASE_URL="$url" ROASTERY_LISTEN="127.0.0.1:$port" ROASTERY_RATE_LIMIT="$rate_limit"
  local account; account=$("$bin" accounts create --name bench --json)
  id=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["clientId"])' <<<"$account")
  secret=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["clientSecret"])' <<<"$account")
  (cd "$work" && exec "$bin" serve) & server=$!
  base="https://127.0.0.1:$port"
  for _ in $(seq 1 100); do curl -skf "$base/healthz" >/dev/null && break; sleep 0.1; done
  token=$(curl -sk "$base/oauth2/token" -d grant_type=client_credentials \
    -d client_id="$id" -d client_secret="$secret" | python3 -c 'import json,sys; print(json.load(sys.stdin)["access_token"])')
  rpc() { curl -sk "$base/rpc/v1/$1" -H "Authorization: Bearer $token" -H 'Content-Type: application/json' -d "$2"; }
  local location lots=""
  location=$(rpc core.location.importLocation '{"data": {"name": "Bench", "externalId": "BENCH"}}' \
    | python3 -c 'import json,sys; print(json.load(sys.stdin)["result"]["location"]["id"])')
  for i in $(seq 1 100); do
    lot=$(rpc inventory.green.importGreenLot "{\"data\": {\"name\": \"Lot $i\", \"externalId\": \"bench-$i\",
      \"weight\": {\"amount\": 690.5, \"unit\": \"KG\"}, \"locationId\": \"$location\"}}" \
      | python3 -c 'import json,sys; print(json.load(sys.stdin)["result"]["greenLot"]["id"])')
    lots="$lots${lots:+,}$lot"
  done
  printf '\n== %s | %s | rate limit %s\n' "$(basename "$bin")" "$scenario" "$rate_limit"
  if [ "$scenario" = writes ]; then
    TOKEN="$token" LOTS="$lots" wrk -t2 -c"$connections" -d"${duration}s" --latency -s benches/distinct.lua "$base" \
      | grep -E 'Requests/sec|Non-2xx|p50|Socket errors' || true
  else
    TOKEN="$token" OPERATION=core.location.listLocations BODY='{"params": {"pagination": {"limit": 10}}}' \
      wrk -t2 -c"$connections" -d"${duration}s" --latency -s benches/rpc.lua "$base" \
      | grep -E 'Requests/sec|Non-2xx|p50|Socket errors' || true
  fi
  kill "$server"; wait "$server" 2>/dev/null || true
  psql "$pg" -qc "DROP DATABASE IF EXISTS $db WITH (FORCE)"
  rm -rf "$work"
}

for bin in "$@"; do run "$bin" off writes; done
last="${*: -1}"
[ -n "${SKIP_READS:-}" ] || run "$last" off reads
[ -n "${SKIP_READS:-}" ] || run "$last" "1000000/s,burst=1000000" reads
