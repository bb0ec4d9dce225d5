#!/usr/bin/env bash
# The example warehouse's acked rate with 32 publisher connections from wrk (a second process,
# far lighter on the CPUs than 32 JDK HttpClients in the receiver's JVM), then the in-process
# rate of the same receiver call from JMH, right after it on the same disk.
#
# Needs wrk (Debian package "wrk") and the built jars (mvn -o -q -DskipTests package).
# Usage: inbox-bench/wrk/http-warehouse.sh [THREADS [DIR]]
#   THREADS: serve --threads (default 8, serve's own default); DIR gets the SQLite file (default: a new temp dir)
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
threads=${1:-8}
dir=${2:-$(mktemp -d)}
log="$dir/serve.log"

java -jar "$root/inbox-examples/target/inbox-examples.jar" serve --db "$dir/warehouse.db" --port 0 --threads "$threads" \
    > "$log" 2>&1 &
serve=$!
trap 'kill $serve 2>/dev/null || true' EXIT

url=""
for _ in $(seq 1 150); do
    url=$(grep -o 'http://127\.0\.0\.1:[0-9]*' "$log" | head -1 || true)
    [ -n "$url" ] && break
    sleep 0.2
done
[ -n "$url" ] || { echo "serve did not start:" >&2; cat "$log" >&2; exit 1; }

ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; } # user + system CPU, in clock ticks
hz=$(getconf CLK_TCK)

echo "load $(cut -d' ' -f1 /proc/loadavg); serve --threads $threads; warm-up, 60 s (the receiver's JIT settles)"
wrk -t2 -c32 -d60s -s "$here/receipts.lua" "$url" | grep '^\[wrk\]'
for round in 1 2 3; do
    before=$(ticks $serve)
    line=$(wrk -t2 -c32 -d30s -s "$here/receipts.lua" "$url" | grep '^\[wrk\]')
    after=$(ticks $serve)
    acked=$(echo "$line" | awk '{ print $3 }')
    echo "$line; receiver $(( (after - before) * 1000000 / hz / acked )) us CPU per acked message"
done
kill $serve
wait $serve || true

echo "load $(cut -d' ' -f1 /proc/loadavg); in-process, JMH"
java -jar "$root/inbox-bench/target/benchmarks.jar" 'HttpWarehouseBenchmark.inProcess' \
    -p location=DISK -f 1 -wi 15 -w 4s -i 5 -r 4s | grep -E '^(Iteration|HttpWarehouseBenchmark|Benchmark )'
