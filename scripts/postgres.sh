#!/usr/bin/env bash
# A throwaway PostgreSQL 15 cluster for tests and development: data directory and unix socket in a
# fresh temporary directory, no TCP (listen_addresses=''), fsync off.
#   eval "$(scripts/postgres.sh start)"     starts one and exports SCANHUB_TEST_DATABASE_URL
#   scripts/postgres.sh stop [DIR]          stops it (DIR defaults to $SCANHUB_TEST_POSTGRES_DIR) and removes it
#   scripts/postgres.sh pause|resume DIR    stops the server keeping its data / starts it again
# As root, the server runs as the OS user `postgres` (PostgreSQL refuses to run as root).
set -euo pipefail

bin_dir() {
  for dir in "${PG_BIN:-}" /usr/lib/postgresql/15/bin /usr/lib/postgresql/*/bin; do
    if [ -n "$dir" ] && [ -x "$dir/pg_ctl" ]; then echo "$dir"; return 0; fi
  done
  echo "postgres.sh: no PostgreSQL server found (apt-get install postgresql, or set PG_BIN)" >&2
  return 1
}

as_owner() {
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

start() {
  local bin dir
  bin="$(bin_dir)"
  dir="$(mktemp -d "${TMPDIR:-/tmp}/scanhub-pg.XXXXXX")"
  chmod 755 "$dir"
  mkdir "$dir/data" "$dir/run"
  if [ "$(id -u)" = 0 ]; then chown postgres: "$dir" "$dir/data" "$dir/run"; fi
  as_owner "$bin/initdb" -D "$dir/data" -U postgres --auth=trust --encoding=UTF8 --no-locale >"$dir/initdb.log" 2>&1 || {
    cat "$dir/initdb.log" >&2; return 1; }
  cat >>"$dir/data/postgresql.conf" <<CONF
listen_addresses = ''
unix_socket_directories = '$dir/run'
fsync = off
full_page_writes = off
max_connections = 200
CONF
  as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 start >/dev/null || {
    cat "$dir/server.log" >&2; return 1; }
  # pg_ctl -w waits for the socket; make sure the server answers queries too.
  for _ in $(seq 1 100); do
    if "$bin/pg_isready" -q -h "$dir/run" -U postgres; then break; fi
    sleep 0.1
  done
  echo "export SCANHUB_TEST_DATABASE_URL='postgresql://postgres@/postgres?host=$dir/run'"
  echo "export SCANHUB_TEST_POSTGRES_DIR='$dir'"
}

# pause/resume: stop the server keeping its data, and start it again (tests of an outage).
pause() {
  local dir="$1"
  as_owner "$(bin_dir)/pg_ctl" -D "$dir/data" -m immediate -w stop >/dev/null
}

resume() {
  local dir="$1"
  as_owner "$(bin_dir)/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 start >/dev/null
}

stop() {
  local dir="${1:-${SCANHUB_TEST_POSTGRES_DIR:-}}"
  if [ -z "$dir" ] || [ ! -d "$dir/data" ]; then echo "postgres.sh: no cluster directory given" >&2; return 1; fi
  as_owner "$(bin_dir)/pg_ctl" -D "$dir/data" -m immediate -w stop >/dev/null 2>&1 || true
  rm -rf "$dir"
}

case "${1:-}" in
  start) start ;;
  stop) stop "${2:-}" ;;
  pause) pause "${2:?usage: $0 pause DIR}" ;;
  resume) resume "${2:?usage: $0 resume DIR}" ;;
  *) echo "usage: $0 start | stop [DIR] | pause DIR | resume DIR" >&2; exit 2 ;;
esac
