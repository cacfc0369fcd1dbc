#!/usr/bin/env bash
# Import time of an Artisan roast log of 20 minutes at one sample a second (1,200 samples of
# ET and BT, the shape of Artisan's own `.alog`), one request at a time over TLS on loopback.
#
#   benches/roast_log.sh [IMPORTS]                         (default 20 imports, release build)
#   ROASTERY_BENCH_PROFILE=debug benches/roast_log.sh      (the debug build: no release build needed)
#   ROASTERY_DATABASE_URL=postgres://... benches/roast_log.sh
#
# Prints the body size and the time of each import (a new roastUUID each time) and of a retry of
# an imported log (answered from the stored roast). Results are recorded in docs/performance.md.
set -euo pipefail
cd "$(dirname "$0")/.."
imports="${1:-20}"
profile="${ROASTERY_BENCH_PROFILE:-release}"
if [ "$profile" = release ]; then
  cargo build --release --locked -q -p roastery-server
else
  cargo build --locked -q -p roastery-server
fi
bin="$PWD/target/$profile/roastery"
work="$(mktemp -d)"
trap 'kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; rm -rf "$work"' EXIT
export ROASTERY_DATABASE_URL="${ROASTERY_DATABASE_URL:-sqlite://$work/bench.db}"
export ROASTERY_RATE_LIMIT=off RUST_LOG=warn,rustls=error
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
export ROASTERY_LISTEN="127.0.0.1:$port"
account=$("$bin" accounts create --name bench-roast-log --scopes "inventory.roast inventory.green core.location" --json)
id=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["clientId"])' <<<"$account")
secret=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["clientSecret"])' <<<"$account")
(cd "$work" && exec "$bin" serve) & server=$!
base="https://127.0.0.1:$port"
for _ in $(seq 1 100); do curl -skf "$base/healthz" >/dev/null && break; sleep 0.1; done
token=$(curl -sk "$base/oauth2/token" -d grant_type=client_credentials \
  -d client_id="$id" -d client_secret="$secret" | python3 -c 'import json,sys; print(json.load(sys.stdin)["access_token"])')
rpc() { curl -sk "$base/rpc/v1/$1" -H "Authorization: Bearer $token" -H 'Content-Type: application/json' -d "$2"; }

location=$(rpc core.location.importLocation '{"data": {"name": "Bench roastery", "externalId": "BENCH"}}' \
  | python3 -c 'import json,sys; print(json.load(sys.stdin)["result"]["location"]["id"])')
green=$(rpc inventory.green.importGreenLot "{\"data\": {\"name\": \"Kenya AA\", \"externalId\": \"bench-green\",
  \"weight\": {\"amount\": 100000, \"unit\": \"KG\"}, \"locationId\": \"$location\"}}" \
  | python3 -c 'import json,sys; print(json.load(sys.stdin)["result"]["greenLot"]["id"])')

# One request body per import: the `repr` of an Artisan profile dict, as Artisan writes `.alog`.
python3 - "$work" "$imports" "$location" "$green" <<'PY'
import json, sys, uuid
work, imports, location, green = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
n = 1200
for k in range(imports + 1):
    profile = {
        'recording_version': '3.1.0', 'version': '3.1.0', 'revision': 'a1b2c3', 'build': '0',
        'mode': 'C', 'viewerMode': False, 'title': 'Kenya AA Kiambu', 'beans': 'Kenya AA Kiambu',
        'timeindex': [30, 480, 900, 960, 0, 0, 1140, 1195],
        'weight': [6000.0, 5100.0, 'g'], 'volume': (0.0, 0.0, 'l'),
        'roastertype': 'Giesen W6A', 'operator': 'Ana Ruiz', 'roastingnotes': 'bench',
        'roastepoch': 1763900000 + k, 'roastUUID': uuid.uuid4().hex,
        'timex': [float(i) for i in range(n)],
        'temp1': [round(240.0 - (i % 100) * 0.25, 2) for i in range(n)],
        'temp2': [round(150.0 + (i % 200) * 0.5, 2) for i in range(n)],
        'extratimex': [[float(i) for i in range(n)]],
        'extratemp1': [[round(50.0 + i % 30, 1) for i in range(n)]],
        'extratemp2': [[round(70.0 + i % 30, 1) for i in range(n)]],
        'whole_color': 65, 'ground_color': 72, 'color_system': 'Agtron',
        'computed': {'CHARGE_BT': 151.0, 'DROP_BT': 205.0, 'totaltime': 1110.0},
    }
    body = {'data': {'format': 'ARTISAN', 'content': repr(profile), 'locationId': location,
                     'greenLots': [{'id': green}]}}
    with open(f'{work}/body-{k}.json', 'w') as f:
        json.dump(body, f)
PY
printf 'request body: %s bytes (limit 1,048,576)\n' "$(wc -c <"$work/body-0.json")"

time_of() {
  curl -sk -o "$work/answer.json" -w '%{http_code} %{time_total}\n' "$base/rpc/v1/inventory.roast.importRoastLog" \
    -H "Authorization: Bearer $token" -H 'Content-Type: application/json' --data-binary "@$1"
}
for k in $(seq 1 "$imports"); do
  time_of "$work/body-$k.json"
done | sort -k2 -n | awk '{ t[NR] = $2; if ($1 != 200) bad++ }
  END { printf "imports: %d, non-200: %d, min %.1f ms, median %.1f ms, max %.1f ms\n",
        NR, bad, t[1] * 1000, t[int((NR + 1) / 2)] * 1000, t[NR] * 1000 }'
printf 'retry of an imported log: '
time_of "$work/body-1.json" | awk '{ printf "%s in %.1f ms\n", $1, $2 * 1000 }'
