#!/usr/bin/env bash
# What each transaction costs the PostgreSQL server alone, driven by pgbench (a C client, extended
# protocol with prepared statements, the first round trip pipelined as the Java clients send it):
# the CPU time of the server process behind pgbench's session and the WAL written, per transaction.
# The tables grow together: each round runs every script in turn on tables truncated at the start.
#
# Needs pgbench (PostgreSQL's client package) and a role that may create databases; PGHOST, PGPORT
# and PGUSER as for psql (default 127.0.0.1, 5432, postgres). The database is its own, dropped after.
# Usage: inbox-bench/pgbench/server-cost.sh [on|off [TRANSACTIONS [ROUNDS [SCRIPT...]]]]
# With PERF_DIR set, each run also records where the server process spent its CPU
# (perf record -e cpu-clock -g, Debian's linux-perf) into PERF_DIR/ROUND-SCRIPT.data; compare with
# perf report -i FILE --no-children --sort sym.
# With CLIENTS=N (N > 1), N sessions run each script at once, TRANSACTIONS each, and the rate of
# all of them is reported instead of one session's CPU time: whether the server falls behind when
# concurrent transactions meet on the same index pages and the same stock row.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
export PGHOST=${PGHOST:-127.0.0.1} PGPORT=${PGPORT:-5432} PGUSER=${PGUSER:-postgres}
sync=${1:-off}
transactions=${2:-20000}
rounds=${3:-3}
shift $(( $# < 3 ? $# : 3 ))
scripts=("$@")
[ ${#scripts[@]} -gt 0 ] || scripts=(handwritten inbox inbox-timeout-in-claim inbox-no-purge-index)
case "$sync" in on|off) ;; *) echo "synchronous_commit must be on or off, not '$sync'" >&2; exit 2 ;; esac
clients=${CLIENTS:-1}
case "$clients" in ''|*[!0-9]*|0) echo "CLIENTS must be a number of sessions, 1 or more, not '$clients'" >&2; exit 2 ;; esac
if [ -n "${PERF_DIR:-}" ] && [ "$clients" -gt 1 ]; then
    echo "PERF_DIR records one session's process; it cannot be used with CLIENTS=$clients" >&2; exit 2
fi
if [ -n "${PERF_DIR:-}" ] && ! command -v perf > /dev/null; then
    echo "PERF_DIR is set, but perf is not installed (Debian's linux-perf)" >&2; exit 2
fi

db="inbox_pgbench_$$"
psql -qX -d postgres -c "CREATE DATABASE $db" -c "ALTER DATABASE $db SET synchronous_commit = $sync"
trap 'psql -qX -d postgres -c "DROP DATABASE IF EXISTS $db WITH (FORCE)"' EXIT
psql -qX -d "$db" -f "$root/inbox-postgres/src/main/resources/dev/idempotent/inbox/postgres/flyway/V0_1__inbox_schema.sql"
psql -qX -d "$db" <<'SQL'
CREATE TABLE processed_message (id VARCHAR(255) PRIMARY KEY, processed_at TIMESTAMPTZ NOT NULL DEFAULT now());
CREATE TABLE inbox_message_no_purge_index (LIKE inbox_message INCLUDING DEFAULTS, PRIMARY KEY (inbox, id));
CREATE TABLE stock (id INTEGER PRIMARY KEY, total BIGINT NOT NULL);
INSERT INTO stock VALUES (1, 0);
CHECKPOINT;
SQL

# inbox-no-purge-index: the inbox's transaction on the table without the index purging needs;
# inbox-no-timeout: the inbox's transaction without its lock timeout (not run unless named).
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"; psql -qX -d postgres -c "DROP DATABASE IF EXISTS $db WITH (FORCE)"' EXIT
sed 's/INTO inbox_message /INTO inbox_message_no_purge_index /' "$here/inbox.sql" > "$scratch/inbox-no-purge-index.sql"
grep -v 'SET LOCAL lock_timeout' "$here/inbox.sql" > "$scratch/inbox-no-timeout.sql"
script_file() { if [ -f "$here/$1.sql" ]; then echo "$here/$1.sql"; else echo "$scratch/$1.sql"; fi; }

lsn() { psql -qXAt -d "$db" -c "SELECT pg_current_wal_lsn()"; }
wal_since() { psql -qXAt -d "$db" -c "SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '$1')"; }
echo "synchronous_commit=$sync, $transactions transactions a run and session, $clients session(s), $rounds rounds"
for round in $(seq 1 "$rounds"); do
    for script in "${scripts[@]}"; do
        start=$(lsn)
        if [ "$clients" -gt 1 ]; then
            pgbench -n -M prepared -c "$clients" -j 2 -t "$transactions" -f "$(script_file "$script")" "$db" \
                > "$scratch/pgbench.out" 2>&1 || { cat "$scratch/pgbench.out" >&2; exit 1; }
            wal=$(wal_since "$start")
            awk -v r="$round" -v s="$script" -v wal="$wal" -v n="$(( transactions * clients ))" \
                '/^tps/ { tps = $3 } /latency average/ { l = $4 }
                 END { printf "round %d %-24s %8.0f tx/s   WAL %5.0f B/tx   latency %s ms\n", r, s, tps, wal / n, l }' \
                "$scratch/pgbench.out"
            continue
        fi
        pgbench -n -M prepared -c 1 -t "$transactions" -f "$(script_file "$script")" "$db" > "$scratch/pgbench.out" 2>&1 &
        bench=$!
        pid=""
        for _ in $(seq 1 100); do
            pid=$(psql -qXAt -d "$db" -c "SELECT pid FROM pg_stat_activity WHERE datname = '$db'
                AND application_name = 'pgbench' LIMIT 1")
            [ -n "$pid" ] && break
            kill -0 "$bench" 2>/dev/null || break
            sleep 0.05
        done
        if [ -z "$pid" ]; then
            if ! kill -0 "$bench" 2>/dev/null && wait "$bench"; then
                echo "pgbench ran its $transactions transactions before its session could be read; give it more" >&2
                exit 2
            fi
            echo "pgbench did not connect:" >&2; cat "$scratch/pgbench.out" >&2; exit 1
        fi
        recorder=""
        if [ -n "${PERF_DIR:-}" ]; then
            mkdir -p "$PERF_DIR"
            perf record -q -e cpu-clock -g -p "$pid" -o "$PERF_DIR/$round-$script.data" 2> "$scratch/perf.err" &
            recorder=$!
        fi
        # The session's process is new, so its CPU time is the session's own, its start included (a
        # few milliseconds). It is gone once pgbench ends: keep the last reading, at most 20 ms before.
        last=0
        while kill -0 "$bench" 2>/dev/null; do
            reading=$(cut -d' ' -f1 "/proc/$pid/schedstat" 2>/dev/null || true)
            [ -n "$reading" ] && last=$reading
            sleep 0.02
        done
        wait "$bench" || { cat "$scratch/pgbench.out" >&2; exit 1; }
        # perf stops by itself when the process it records ends; its exit status then says nothing,
        # so a profile is judged by the file it left.
        if [ -n "$recorder" ]; then
            wait "$recorder" || true
            [ -s "$PERF_DIR/$round-$script.data" ] || { echo "perf recorded nothing for $script:" >&2; cat "$scratch/perf.err" >&2; exit 1; }
        fi
        wal=$(wal_since "$start")
        latency=$(awk '/latency average/ { print $4 }' "$scratch/pgbench.out")
        awk -v r="$round" -v s="$script" -v cpu="$last" -v wal="$wal" -v n="$transactions" -v l="$latency" \
            'BEGIN { printf "round %d %-24s server CPU %6.1f us/tx   WAL %5.0f B/tx   latency %s ms\n", r, s, cpu / 1000 / n, wal / n, l }'
    done
done
