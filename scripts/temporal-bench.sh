#!/usr/bin/env bash
# temporal-bench.sh: the figures of docs/distributed.md. Starts a Temporal dev server (the
# temporal CLI must be installed: go install github.com/temporalio/cli/cmd/temporal@v1.5.1)
# and two awf workers in a scratch project, then measures:
#   - 100 runs of a 2-step workflow submitted at once (--detach), runs/s, against the same 100
#     runs made locally with the same parallelism;
#   - one run of 50 shell steps: time per step (activity) on the engine and locally, and the
#     size of its history;
#   - one run of 20 steps printing 100 KB each: its history size (payloads kept outside);
#   - one run of 600 shell steps with temporal_continue_after: 500: time per step, the number
#     of executions it continued through and the size of each one's history.
# Usage: scripts/temporal-bench.sh [BIN_DIR]   (default: builds bin/awf and bin/awf-temporal)
set -euo pipefail
cd "$(dirname "$0")/.."
temporal=$(command -v temporal || echo "$HOME/go/bin/temporal")
[ -x "$temporal" ] || { echo "temporal CLI not found" >&2; exit 1; }
bin=${1:-}
if [ -z "$bin" ]; then make -s build >/dev/null; bin=$PWD/bin; fi
work=$(mktemp -d)
port=$((20000 + RANDOM % 20000))
# awf hands `awf worker` to awf-temporal, its child: stop the children of each job too.
cleanup() {
  for pid in $(jobs -p); do pkill -P "$pid" 2>/dev/null || true; kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
cd "$work"
"$temporal" server start-dev --headless --ip 127.0.0.1 --port $port --http-port $((port + 1)) \
  --metrics-port $((port + 2)) --db-filename '' --log-level error >server.log 2>&1 &
until grep -q "Server:" server.log; do sleep 0.1; done
export AWF_TEMPORAL=127.0.0.1:$port
"$bin/awf" worker >w1.log 2>&1 &
"$bin/awf" worker >w2.log 2>&1 &
until grep -q polling w1.log && grep -q polling w2.log; do sleep 0.1; done

printf 'name: small\nsteps:\n  - name: one\n    type: shell\n    command: echo one\n  - name: two\n    type: shell\n    command: echo {{states.one.output}} two\n' >small.yaml
now() { date +%s.%N; }
rate() { echo "scale=1; $1 / ($3 - $2)" | bc; }

t0=$(now)
seq 100 | xargs -P 10 -I{} "$bin/awf" run --engine temporal small.yaml --detach >ids.txt
while read -r id; do "$bin/awf" status --engine temporal "$id" --wait -o json | grep -q '"status": "completed"'; done <ids.txt
t1=$(now)
seq 100 | xargs -P 10 -I{} "$bin/awf" run small.yaml -q >/dev/null
t2=$(now)
echo "100 runs, 2 workers:  $(rate 100 "$t0" "$t1") runs/s (temporal)   $(rate 100 "$t1" "$t2") runs/s (local, 10 at a time)"

{ echo "name: long"; echo "steps:"; for i in $(seq 50); do printf '  - name: s%d\n    type: shell\n    command: echo %d\n' "$i" "$i"; done; } >long.yaml
t0=$(now); id=$("$bin/awf" run --engine temporal long.yaml --detach); "$bin/awf" status --engine temporal "$id" --wait >/dev/null; t1=$(now)
"$bin/awf" run long.yaml -q >/dev/null; t2=$(now)
"$temporal" workflow show -w "$id" --address "$AWF_TEMPORAL" --output json >h1.json
echo "50-step run:          $(echo "scale=1; 1000 * ($t1 - $t0) / 50" | bc) ms/step (temporal)   $(echo "scale=1; 1000 * ($t2 - $t1) / 50" | bc) ms/step (local); history $(grep -c '"eventId"' h1.json) events, $(wc -c <h1.json) bytes of JSON"

{ echo "name: big"; echo "steps:"; for i in $(seq 20); do printf '  - name: b%d\n    type: shell\n    command: head -c 102400 /dev/zero | tr "\\\\0" x\n' "$i"; done; } >big.yaml
id=$("$bin/awf" run --engine temporal big.yaml --detach); "$bin/awf" status --engine temporal "$id" --wait >/dev/null
"$temporal" workflow show -w "$id" --address "$AWF_TEMPORAL" --output json >h2.json
echo "20 steps x 100 KB:    history $(grep -c '"eventId"' h2.json) events, $(wc -c <h2.json) bytes of JSON; payload store $(du -sk .awf/payloads | cut -f1) KB"

{ echo "name: cont"; echo "steps:"; for i in $(seq 600); do printf '  - name: c%d\n    type: shell\n    command: echo %d\n' "$i" "$i"; done; } >cont.yaml
t0=$(now); id=$(AWF_TEMPORAL_CONTINUE_AFTER=500 "$bin/awf" run --engine temporal cont.yaml --detach)
"$bin/awf" status --engine temporal "$id" --wait >/dev/null; t1=$(now)
"$temporal" workflow list --address "$AWF_TEMPORAL" --query "WorkflowId='$id'" --output json >runs.json
sizes=""
# each execution names its run id more than once in the list (its own, the chain's): once each
runs=$(grep -o '"runId": *"[^"]*"' runs.json | cut -d'"' -f4 | awk '!seen[$0]++')
for run in $runs; do
  "$temporal" workflow show -w "$id" -r "$run" --address "$AWF_TEMPORAL" --output json >h3.json
  sizes="$sizes $(grep -c '"eventId"' h3.json)/$(( $(wc -c <h3.json) / 1024 ))K"
done
echo "600 steps, continue after 500 events: $(echo "scale=1; 1000 * ($t1 - $t0) / 600" | bc) ms/step; $(echo "$runs" | wc -l) executions, events/JSON size of each:$sizes"
