#!/usr/bin/env bash
# A hot standby of the PostgreSQL server at 127.0.0.1:5432, on 127.0.0.1:${REPLICA_PORT:-5433},
# made with pg_basebackup -R and kept streaming. Idempotent: a standby that already runs is left
# alone. Prints the standby's URL (for ROASTERY_TEST_REPLICA_URL) on its last line.
set -euo pipefail
port="${REPLICA_PORT:-5433}"
primary_host=127.0.0.1
primary_port=5432
dir="${REPLICA_DIR:-/var/lib/postgresql/roastery-replica-$port}"
bin="$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n 1)"
as_postgres() { if [ "$(id -u)" = 0 ]; then su postgres -s /bin/sh -c "$*"; else sh -c "$*"; fi; }

if pg_isready -q -h 127.0.0.1 -p "$port"; then
  echo "postgres://postgres@127.0.0.1:$port/test"
  exit 0
fi

# Streaming replication needs a `replication` line in the primary's pg_hba.conf.
hba="$(psql -h "$primary_host" -p "$primary_port" -U postgres -qtAc 'SHOW hba_file')"
if ! grep -Eq '^[[:space:]]*host[[:space:]]+replication[[:space:]]+all[[:space:]]+127\.0\.0\.1/32' "$hba"; then
  echo "host replication all 127.0.0.1/32 trust" >>"$hba"
  psql -h "$primary_host" -p "$primary_port" -U postgres -qtAc 'SELECT pg_reload_conf()' >/dev/null
fi

# A copy that never started (or a stale one) is made again from scratch.
as_postgres "'$bin/pg_ctl' -D '$dir' -m fast stop" >/dev/null 2>&1 || true
rm -rf "$dir"
as_postgres "'$bin/pg_basebackup' -h $primary_host -p $primary_port -U postgres -D '$dir' -R -X stream -c fast"
# Debian keeps configuration files outside the data directory: the copy gets its own.
as_postgres "cat > '$dir/postgresql.conf'" <<CONF
port = $port
listen_addresses = '127.0.0.1'
unix_socket_directories = '/tmp'
hot_standby = on
max_connections = 100
shared_buffers = 32MB
CONF
as_postgres "cat > '$dir/pg_hba.conf'" <<'CONF'
local all all trust
host all all 127.0.0.1/32 trust
CONF
as_postgres "'$bin/pg_ctl' -D '$dir' -l '$dir/server.log' -w start" >/dev/null
for _ in $(seq 1 30); do pg_isready -q -h 127.0.0.1 -p "$port" && break; sleep 1; done
pg_isready -q -h 127.0.0.1 -p "$port"
echo "postgres://postgres@127.0.0.1:$port/test"
