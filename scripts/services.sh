#!/usr/bin/env bash
# Make sure the services the test suite needs are installed and answering:
# PostgreSQL (with the role and database the tests use), Redis, Chromium and GNU gettext.
#
# Idempotent: installs only what is missing (apt-get, as root), starts only what does
# not answer, creates only what does not exist. Without root it changes nothing it
# cannot, and says exactly what to install or start.
#
#   bash scripts/services.sh
#
# Environment (optional): PG_USER (postgres), PG_DB (lowenherz), PG_PORT (5432),
# PG_CLUSTER (main), REDIS_PORT (6379).
set -euo pipefail

HOST=127.0.0.1
PG_USER=${PG_USER:-postgres}
PG_DB=${PG_DB:-lowenherz}
PG_PORT=${PG_PORT:-5432}
PG_CLUSTER=${PG_CLUSTER:-main}
REDIS_PORT=${REDIS_PORT:-6379}
CHROMIUM=${CHROMIUM:-/usr/bin/chromium}
WAIT_SECONDS=30

say() { printf 'services: %s\n' "$*"; }
die() { printf 'services: ERROR: %s\n' "$*" >&2; exit 1; }
is_root() { [ "$(id -u)" -eq 0 ]; }

# --- installing -----------------------------------------------------------------------

missing_packages() {
    local missing=()
    compgen -G '/usr/lib/postgresql/*/bin/postgres' >/dev/null \
        && command -v pg_isready >/dev/null || missing+=(postgresql)
    command -v redis-server >/dev/null && command -v redis-cli >/dev/null \
        || missing+=(redis-server)
    [ -x "$CHROMIUM" ] || missing+=(chromium)
    # GNU gettext: the catalogues' test extracts the messages again (makemessages).
    command -v xgettext >/dev/null && command -v msgmerge >/dev/null || missing+=(gettext)
    echo "${missing[@]}"
}

install_missing() {
    local missing
    missing=$(missing_packages)
    [ -z "$missing" ] && return 0
    if ! is_root || ! command -v apt-get >/dev/null; then
        die "missing: $missing. Install them as root, e.g.:
    sudo apt-get install -y $missing
(Chromium must be at $CHROMIUM.) Then run this again."
    fi
    say "installing $missing (apt-get, a few minutes) ..."
    export DEBIAN_FRONTEND=noninteractive
    local log
    log=$(mktemp)
    # shellcheck disable=SC2086 # one word per package
    if ! { apt-get update -qq && apt-get install -y -qq --no-install-recommends $missing; } \
            >"$log" 2>&1; then
        cat "$log" >&2
        die "apt-get install $missing failed (output above)"
    fi
    rm -f "$log"
    missing=$(missing_packages)
    [ -z "$missing" ] || die "still missing after apt-get install: $missing"
}

# --- PostgreSQL -----------------------------------------------------------------------

pg_answers() { pg_isready -q -h "$HOST" -p "$PG_PORT"; }

pg_version() { ls /usr/lib/postgresql | sort -n | tail -n 1; }

start_postgresql() {
    pg_answers && return 0
    is_root || die "PostgreSQL does not answer on $HOST:$PG_PORT. Start it as root, e.g.:
    sudo pg_ctlcluster $(pg_version) $PG_CLUSTER start"
    local version
    version=$(pg_version)
    if [ ! -d "/etc/postgresql/$version/$PG_CLUSTER" ]; then
        say "creating the PostgreSQL $version cluster $PG_CLUSTER (port $PG_PORT) ..."
        pg_createcluster -p "$PG_PORT" "$version" "$PG_CLUSTER" >/dev/null \
            || die "pg_createcluster failed"
    fi
    say "starting PostgreSQL $version $PG_CLUSTER ..."
    pg_ctlcluster --skip-systemctl-redirect "$version" "$PG_CLUSTER" start \
        || die "pg_ctlcluster $version $PG_CLUSTER start failed (see /var/log/postgresql/)"
    wait_for "PostgreSQL" pg_answers
}

psql_tcp() { psql -h "$HOST" -p "$PG_PORT" -U "$PG_USER" -d postgres -tAq -v ON_ERROR_STOP=1 "$@"; }

# Local superuser access through the Unix socket (peer authentication), as root.
psql_admin() {
    runuser -u postgres -- psql -p "$PG_PORT" -d postgres -tAq -v ON_ERROR_STOP=1 "$@"
}

trust_localhost() {
    # The tests connect without a password; Debian's default asks for one over TCP.
    psql_tcp -c 'SELECT 1' >/dev/null 2>&1 && return 0
    if is_root && psql_admin -c "SELECT 1 FROM pg_roles WHERE rolname = '$PG_USER'" \
            | grep -q 1; then
        local hba
        hba=$(psql_admin -c 'SHOW hba_file')
        say "allowing password-less connections from $HOST in $hba ..."
        sed -i "1i host all all $HOST/32 trust  # added by scripts/services.sh" "$hba"
        psql_admin -c 'SELECT pg_reload_conf()' >/dev/null
        sleep 1
    fi
}

ensure_role_and_database() {
    if is_root && ! psql_tcp -c 'SELECT 1' >/dev/null 2>&1; then
        say "creating the PostgreSQL role $PG_USER (CREATEDB) ..."
        psql_admin -c "CREATE ROLE \"$PG_USER\" LOGIN CREATEDB" >/dev/null \
            || die "could not create the role $PG_USER"
        trust_localhost
    fi
    psql_tcp -c 'SELECT 1' >/dev/null 2>&1 || die "cannot connect to PostgreSQL as $PG_USER \
on $HOST without a password. Allow it in pg_hba.conf (host all all $HOST/32 trust), \
or set DATABASE_URL to a database you can use."
    [ "$(psql_tcp -c "SELECT rolcreatedb OR rolsuper FROM pg_roles \
WHERE rolname = current_user")" = t ] \
        || die "the PostgreSQL role $PG_USER needs CREATEDB (the tests create test_$PG_DB)"
    if [ -z "$(psql_tcp -c "SELECT 1 FROM pg_database WHERE datname = '$PG_DB'")" ]; then
        say "creating the PostgreSQL database $PG_DB ..."
        psql_tcp -c "CREATE DATABASE \"$PG_DB\"" >/dev/null || die "could not create $PG_DB"
    fi
}

# --- Redis and Chromium ---------------------------------------------------------------

redis_answers() { [ "$(redis-cli -h "$HOST" -p "$REDIS_PORT" ping 2>/dev/null)" = PONG ]; }

start_redis() {
    redis_answers && return 0
    say "starting Redis on $HOST:$REDIS_PORT ..."
    redis-server --daemonize yes --bind "$HOST" --port "$REDIS_PORT" --save "" \
        --appendonly no >/dev/null || die "redis-server did not start"
    wait_for "Redis" redis_answers
}

check_chromium() {
    "$CHROMIUM" --headless --no-sandbox --version >/dev/null 2>&1 \
        || die "$CHROMIUM is installed but does not run ($CHROMIUM --version fails)"
}

wait_for() {
    local name=$1 check=$2
    for _ in $(seq "$WAIT_SECONDS"); do
        "$check" && return 0
        sleep 1
    done
    die "$name still does not answer after ${WAIT_SECONDS}s"
}

main() {
    install_missing
    start_postgresql
    trust_localhost
    ensure_role_and_database
    start_redis
    check_chromium
    say "PostgreSQL ($PG_USER@$HOST:$PG_PORT/$PG_DB), Redis ($HOST:$REDIS_PORT) and Chromium" \
        "are ready"
}

main "$@"
