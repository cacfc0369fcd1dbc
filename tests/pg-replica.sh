#!/usr/bin/env bash
# A throw-away PostgreSQL primary and a hot standby streaming from it (pg_basebackup -R): two
# clusters of their own in a temporary directory, on free loopback ports, each with its own
# pg_hba.conf. The developer's own cluster and its configuration are never touched. Both are
# stopped and removed when this script exits, however it exits.
#
#   tests/pg-replica.sh COMMAND [ARGS...]
#       runs COMMAND with ROASTERY_TEST_DATABASE_URL naming the primary and
#       ROASTERY_TEST_REPLICA_URL the standby (database `test` on each), then removes both and
#       exits with COMMAND's status. E.g.
#       tests/pg-replica.sh cargo test -p roastery-server --test instances -- listings_read_the_replica
#   tests/pg-replica.sh
#       prints both URLs and keeps the clusters until interrupted (Ctrl-C).
set -euo pipefail
bin="$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n 1)"
if [ "$(id -u)" = 0 ]; then
  # initdb refuses to run as root: the clusters belong to the postgres user.
  as_owner() { su postgres -s /bin/sh -c "$*"; }
else
  as_owner() { sh -c "$*"; }
fi

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

work="$(mktemp -d "${TMPDIR:-/tmp}/roastery-replica.XXXXXX")"
primary="$work/primary"
standby="$work/standby"
cleanup() {
  as_owner "'$bin/pg_ctl' -D '$standby' -m immediate stop" >/dev/null 2>&1 || true
  as_owner "'$bin/pg_ctl' -D '$primary' -m immediate stop" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
[ "$(id -u)" = 0 ] && chown postgres "$work"

primary_port="$(free_port)"
as_owner "'$bin/initdb' -D '$primary' -U postgres --auth=trust --locale=C -E UTF8 --no-sync" >/dev/null
as_owner "cat >> '$primary/postgresql.conf'" <<CONF
port = $primary_port
listen_addresses = '127.0.0.1'
unix_socket_directories = '$work'
wal_level = replica
max_wal_senders = 4
hot_standby = on
# Throw-away data: no need to survive a power cut.
fsync = off
CONF
# Loopback only, this cluster only: the standby connects for replication.
as_owner "cat > '$primary/pg_hba.conf'" <<'CONF'
local all all trust
host all all 127.0.0.1/32 trust
host replication all 127.0.0.1/32 trust
CONF
as_owner "'$bin/pg_ctl' -D '$primary' -l '$work/primary.log' -w start" >/dev/null
"$bin/psql" -h 127.0.0.1 -p "$primary_port" -U postgres -qc 'CREATE DATABASE test' postgres

standby_port="$(free_port)"
as_owner "'$bin/pg_basebackup' -h 127.0.0.1 -p $primary_port -U postgres -D '$standby' -R -X stream -c fast"
# The copy carries the primary's settings; the last `port` line wins.
as_owner "echo 'port = $standby_port' >> '$standby/postgresql.conf'"
as_owner "'$bin/pg_ctl' -D '$standby' -l '$work/standby.log' -w start" >/dev/null
for _ in $(seq 1 30); do pg_isready -q -h 127.0.0.1 -p "$standby_port" && break; sleep 1; done
pg_isready -q -h 127.0.0.1 -p "$standby_port"

export ROASTERY_TEST_DATABASE_URL="postgres://postgres@127.0.0.1:$primary_port/test"
export ROASTERY_TEST_REPLICA_URL="postgres://postgres@127.0.0.1:$standby_port/test"
if [ "$#" -gt 0 ]; then
  "$@"
else
  echo "ROASTERY_TEST_DATABASE_URL=$ROASTERY_TEST_DATABASE_URL"
  echo "ROASTERY_TEST_REPLICA_URL=$ROASTERY_TEST_REPLICA_URL"
  echo "Ctrl-C stops and removes both clusters." >&2
  while true; do sleep 3600; done
fi
