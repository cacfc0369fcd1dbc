#!/usr/bin/env bash
# Change feed and webhooks: how long an event takes from the write's answer to a healthy
# receiver, and how many events per second one client pages through listEvents.
#
#   benches/events.sh [WRITES] [FEED_EVENTS]         (default 50 writes, 2,000 feed events; release build)
#   ROASTERY_BENCH_PROFILE=debug benches/events.sh   (the debug build: no release build needed)
#   ROASTERY_DATABASE_URL=postgres://... benches/events.sh
#
# One server, a webhook to a local HTTPS receiver (a self-signed certificate trusted through
# ROASTERY_WEBHOOK_CA_FILE, private addresses allowed), writes one at a time. Prints the
# delivery latency percentiles and the feed throughput. Results are recorded in docs/performance.md.
set -euo pipefail
cd "$(dirname "$0")/.."
writes="${1:-50}"
feed_events="${2:-2000}"
profile="${ROASTERY_BENCH_PROFILE:-release}"
if [ "$profile" = release ]; then
  cargo build --release --locked -q -p roastery-server
else
  cargo build --locked -q -p roastery-server
fi
bin="$PWD/target/$profile/roastery"
work="$(mktemp -d)"
trap 'kill "$server" "$receiver" 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$work"' EXIT
# A throwaway CA (trusted through ROASTERY_WEBHOOK_CA_FILE) and the receiver's certificate.
openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=bench-ca \
  -keyout "$work/ca-key.pem" -out "$work/ca.pem" 2>/dev/null
openssl req -newkey rsa:2048 -nodes -subj /CN=localhost -keyout "$work/key.pem" -out "$work/req.pem" 2>/dev/null
printf 'subjectAltName=DNS:localhost\nbasicConstraints=CA:FALSE\n' > "$work/ext.cnf"
openssl x509 -req -in "$work/req.pem" -CA "$work/ca.pem" -CAkey "$work/ca-key.pem" -CAcreateserial \
  -days 1 -extfile "$work/ext.cnf" -out "$work/cert.pem" 2>/dev/null
export ROASTERY_DATABASE_URL="${ROASTERY_DATABASE_URL:-sqlite://$work/bench.db}"
export ROASTERY_RATE_LIMIT=off RUST_LOG=warn,rustls=error
export ROASTERY_WEBHOOK_ALLOW_PRIVATE=on ROASTERY_WEBHOOK_CA_FILE="$work/ca.pem"
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
port=$(free_port); hook_port=$(free_port)
export ROASTERY_LISTEN="127.0.0.1:$port"
account=$("$bin" accounts create --name bench-events --scopes "core.location core.event" --json)
(cd "$work" && exec "$bin" serve) & server=$!

# The receiver: answers 204 and appends "<receipt unix time> <subject id>" per event.
python3 - "$work" "$hook_port" <<'PY' & receiver=$!
import http.server, json, ssl, sys, time
work, port = sys.argv[1], int(sys.argv[2])
log = open(f"{work}/received.log", "a", buffering=1)
class Hook(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers["Content-Length"]))
        log.write(f"{time.time()} {json.loads(body)['subject']['id']}\n")
        self.send_response(204); self.end_headers()
    def log_message(self, *args): pass
server = http.server.ThreadingHTTPServer(("127.0.0.1", port), Hook)
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
ctx.load_cert_chain(f"{work}/cert.pem", f"{work}/key.pem")
server.socket = ctx.wrap_socket(server.socket, server_side=True)
server.serve_forever()
PY

python3 - "$work" "$port" "$hook_port" "$writes" "$feed_events" "$account" <<'PY'
import json, ssl, sys, time, urllib.request
work, port, hook_port, writes, feed_events, account = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]), json.loads(sys.argv[6])
base = f"https://127.0.0.1:{port}"
ctx = ssl._create_unverified_context()  # the server's own self-signed certificate
def post(path, data, headers):
    req = urllib.request.Request(base + path, data=data, headers=headers)
    with urllib.request.urlopen(req, context=ctx) as r:
        return json.loads(r.read())
for _ in range(100):
    try:
        urllib.request.urlopen(base + "/healthz", context=ctx); break
    except Exception:
        time.sleep(0.1)
token = post("/oauth2/token", f"grant_type=client_credentials&client_id={account['clientId']}&client_secret={account['clientSecret']}".encode(),
             {"Content-Type": "application/x-www-form-urlencoded"})["access_token"]
def rpc(op, body):
    return post(f"/rpc/v1/{op}", json.dumps(body).encode(), {"Authorization": f"Bearer {token}", "Content-Type": "application/json"})
rpc("core.event.createWebhook", {"data": {"url": f"https://localhost:{hook_port}/hook"}})

def received():
    try:
        return {l.split()[1]: float(l.split()[0]) for l in open(f"{work}/received.log")}
    except FileNotFoundError:
        return {}
latencies = []
for i in range(writes):
    lid = rpc("core.location.importLocation", {"data": {"name": f"L{i}"}})["result"]["location"]["id"]
    answered = time.time()
    deadline = answered + 30
    while lid not in (got := received()):
        if time.time() > deadline: sys.exit(f"event of {lid} not delivered within 30 s")
        time.sleep(0.002)
    latencies.append((got[lid] - answered) * 1000)
    time.sleep(0.05)
latencies.sort()
pct = lambda p: latencies[min(len(latencies) - 1, int(p * len(latencies)))]
print(f"delivery latency after the write's answer, {writes} writes one at a time: "
      f"p50 {pct(0.5):.0f} ms, p90 {pct(0.9):.0f} ms, max {latencies[-1]:.0f} ms")

for i in range(feed_events - writes):
    rpc("core.location.importLocation", {"data": {"name": f"F{i}"}})
start = time.time(); after = None; seen = 0; pages = 0
while True:
    page = rpc("core.event.listEvents", {"params": {"pagination": {"limit": 100, "after": after}}})
    events = page["result"]["events"]; after = page["meta"]["pagination"]["endCursor"]; pages += 1
    seen += len(events)
    if not events: break
elapsed = time.time() - start
print(f"feed: {seen} events in {pages} pages of 100 by one client in {elapsed:.2f} s = {seen / elapsed:.0f} events/s")
PY
