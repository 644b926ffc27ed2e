#!/usr/bin/env bash
# contrib/prometheus as Prometheus takes it: both rule files pass `promtool check rules`, the unit
# tests pass `promtool test rules`, and every series the rules and the tests name is one gpumap
# exports: each metric name appears in a real `gpumap metrics` exposition and each label the tests
# give a series is one of that family's labels (plus Prometheus's job and instance).  The exposition
# comes from a simulated host with a real sleeping process carrying Slurm rank variables (on the GPU
# its CUDA_VISIBLE_DEVICES names, so that every label of a well-placed process has a value).
# usage: tests/metrics/rules_test.sh GPUMAP_BINARY
set -uo pipefail
. "$(dirname "$0")/harness.sh" "${1:-}" promtool python3
export GPUMAP_CACHE_DIR=$dir/cache GPUMAP_LOCK_DIR=$dir/locks GPUMAP_IN_CONTAINER=0
src=$(cd "$(dirname "$0")/../.." && pwd)/contrib/prometheus
out=$(promtool check rules "$src/gpumap-rules.yml" "$src/gpumap-alerts.yml" 2>&1) && pass "promtool check rules: both files" ||
  fail "promtool check rules" "$out"
out=$(cd "$src/tests" && promtool test rules gpumap-rules-test.yml 2>&1) && pass "promtool test rules: the unit tests" ||
  fail "promtool test rules" "$out"

env -i SLURM_JOB_ID=77 SLURM_PROCID=1 LOCAL_RANK=1 CUDA_VISIBLE_DEVICES=1 sleep 300 & pids+=($!)
hostjson=$(dirname "$gpumap")/hosts/h200x2.json
python3 - "$hostjson" "${pids[-1]}" >"$dir/host.json" <<'PY'
import json, sys
h = json.load(open(sys.argv[1]))
h["gpus"][1]["processes"] = [{"pid": int(sys.argv[2]), "used_memory_mib": 100}]  # its CUDA_VISIBLE_DEVICES=1: cuda:0
print(json.dumps(h))
PY
wait_for 10 grep -q SLURM_JOB_ID "/proc/${pids[-1]}/environ"
"$gpumap" metrics --simulate "$dir/host.json" >"$dir/m.prom" 2>"$dir/m.err" || fail "gpumap metrics" "$(cat "$dir/m.err")"
out=$(python3 - "$dir/m.prom" "$src/gpumap-rules.yml" "$src/gpumap-alerts.yml" "$src/tests/gpumap-rules-test.yml" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
families, labels = set(), {}
for line in text.splitlines():
    m = re.match(r"# TYPE (\S+) ", line)
    if m: families.add(m.group(1)); continue
    m = re.match(r"([a-z_:]+)\{(.*)\} ", line)
    if m: labels.setdefault(m.group(1), set()).update(re.findall(r'([a-z_]+)="', m.group(2)))
bad = []
for path in sys.argv[2:]:
    src = open(path).read()
    for name in sorted(set(re.findall(r"\bgpumap_[a-z_]+\b", src))):
        if name not in families: bad.append(f"{path}: {name} is not a metric gpumap exports")
    for name, body in re.findall(r"series: '(gpumap_[a-z_]+)\{([^}]*)\}'", src):
        given = set(re.findall(r'([a-z_]+)="', body)) - {"job", "instance"}
        extra = given - labels.get(name, set())
        if extra: bad.append(f"{path}: {name} has no label {sorted(extra)} (it has {sorted(labels.get(name, set()))})")
print("\n".join(bad) or f"{len(families)} families checked")
sys.exit(1 if bad else 0)
PY
) && pass "every metric and label the rules and tests name is gpumap's ($out)" || fail "names in contrib/prometheus" "$out"
exit $failed
