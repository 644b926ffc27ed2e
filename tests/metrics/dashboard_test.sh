#!/usr/bin/env bash
# contrib/grafana/gpumap-dashboard.json against a real Prometheus (Debian's) scraping two real
# `gpumap serve`s, each answering for a simulated host whose GPU processes are real `sleep`s with
# chosen environments: node A has the traps the dashboard shows (a rank on the wrong GPU, a process
# outside its visible set, an allocated GPU with no kernel), node B has none.
#   - the JSON has what Grafana needs to import it (uid, title, schemaVersion, panels with unique
#     ids and a gridPos inside the 24 columns, a data-source template variable every panel and
#     query uses, only template variables the dashboard defines);
#   - each template variable's label_values() query, asked as Grafana asks it (/api/v1/label/L/values
#     with match[]), returns the fleet's real values (the two nodes, the three Slurm jobs);
#   - each panel's query, with the variables substituted as Grafana does (All = the allValue `.*`, and
#     the real values the variables returned), is valid PromQL (Prometheus's /api/v1/query answers
#     success), names only series gpumap exports (families of the real expositions, or
#     contrib/prometheus's recording rules) with labels those series have, and returns data with
#     All selected; a time-series panel returns data through /api/v1/query_range too;
#   - a panel documented "Only when a trap exists" is empty on node B, which has no trap.
# Grafana itself is not tested: it is not a Debian package (not in Debian 12's archive), and this
# machine reaches nothing but Debian's mirrors; the checks are what Grafana reads from the file.
# Everything listens on loopback ports; serve, Prometheus and the sleeps are started and stopped by
# PID (also on failure), the temporary folder is removed by the trap, every wait is bounded.
#
# usage: tests/metrics/dashboard_test.sh GPUMAP_BINARY
# Prints PASS/FAIL lines; exit 0 when all passed, 1 on a failure, 2 when a tool is missing.
set -uo pipefail
. "$(dirname "$0")/harness.sh" "${1:-}" prometheus curl python3
src=$(cd "$(dirname "$0")/../.." && pwd)
export GPUMAP_CACHE_DIR=$dir/cache GPUMAP_LOCK_DIR=$dir/locks GPUMAP_IN_CONTAINER=0

# Node A: GPU 0 (busy) holds a process outside its CUDA_VISIBLE_DEVICES and Slurm job 4242's rank 1,
# which sees both GPUs and works on cuda:0, not its cuda:1; GPU 1 (no kernel) holds job 5151.
env -i CUDA_VISIBLE_DEVICES=1 sleep 300 & outside=$!; pids+=($outside)
env -i SLURM_JOB_ID=4242 SLURM_PROCID=1 LOCAL_RANK=1 sleep 300 & wrong=$!; pids+=($wrong)
env -i SLURM_JOB_ID=5151 SLURM_PROCID=0 CUDA_VISIBLE_DEVICES=1 sleep 300 & idle=$!; pids+=($idle)
# Node B: job 6001's rank 0 on its own GPU, both GPUs busy.
env -i SLURM_JOB_ID=6001 SLURM_PROCID=0 LOCAL_RANK=0 CUDA_VISIBLE_DEVICES=0 sleep 300 & good=$!; pids+=($good)
for p in $outside $wrong $idle $good; do
  wait_for 5 grep -q sleep "/proc/$p/cmdline" || fail "sleep $p did not start"
done

host() {  # host UUID_PREFIX UTIL0 UTIL1 PROCS0 PROCS1: a simulated two-GPU host
  cat <<JSON
{"driver_version": "580.159.04", "cuda_driver_version": 13000, "gpus": [
 {"name": "NVIDIA H200", "uuid": "${1}0", "pci_bus_id": "00000000:18:00.0", "minor_number": 0,
  "memory_total_mib": 143771, "memory_used_mib": 2048, "utilization_gpu": $2, "multiprocessor_count": 132,
  "processes": [$4]},
 {"name": "NVIDIA H200", "uuid": "${1}1", "pci_bus_id": "00000000:2A:00.0", "minor_number": 1,
  "memory_total_mib": 143771, "memory_used_mib": 1024, "utilization_gpu": $3, "multiprocessor_count": 132,
  "processes": [$5]}]}
JSON
}
host GPU-0a0a0a0a-7a52-4d6b-9e41-1b2c3d4e5f6 40 0 \
  "{\"pid\": $outside, \"used_memory_mib\": 512}, {\"pid\": $wrong, \"used_memory_mib\": 1024}" \
  "{\"pid\": $idle, \"used_memory_mib\": 1024}" >"$dir/a.json"
host GPU-0b0b0b0b-7a52-4d6b-9e41-1b2c3d4e5f6 30 30 "{\"pid\": $good, \"used_memory_mib\": 2048}" "" >"$dir/b.json"

targets=()
for n in a b; do
  "$gpumap" serve --simulate "$dir/$n.json" --listen 127.0.0.1:0 >"$dir/$n.out" 2>"$dir/$n.err" &
  pids+=($!)
  wait_for 10 grep -q 'listening on' "$dir/$n.out" || fail "serve $n did not start" "$(cat "$dir/$n.err")"
  url=$(sed -n 's/.*listening on \(http:[^ ]*\)$/\1/p' "$dir/$n.out")
  curl -sf "$url" >"$dir/$n.prom" || fail "GET $url"
  url=${url%/metrics}
  targets+=("${url#http://}")
done
[ $failed = 0 ] || exit 1

pport=$(free_port)
mkdir "$dir/prom"
cat >"$dir/prom/prometheus.yml" <<YML
global: {scrape_interval: 1s, evaluation_interval: 1s}
rule_files: ["$src/contrib/prometheus/gpumap-rules.yml"]
scrape_configs:
  - job_name: gpumap
    static_configs: [{targets: ["${targets[0]}", "${targets[1]}"]}]
YML
prometheus --config.file="$dir/prom/prometheus.yml" --storage.tsdb.path="$dir/prom/data" \
  --web.listen-address="127.0.0.1:$pport" >"$dir/prom/log" 2>&1 &
pids+=($!)
# Ready when both nodes' processes and node A's findings are stored (and a rule has been evaluated).
ready() {
  curl -sf --get "http://127.0.0.1:$pport/api/v1/query" \
    --data-urlencode 'query=count(count by (instance) (gpumap_process_info)) == 2 and on() count(gpumap_finding{id="rank-on-wrong-gpu"}) and on() count(gpumap:gpus:count) == 2' |
    grep -q '"result":\[{'
}
if wait_for 60 ready; then pass "Prometheus scraped both serves"
else fail "Prometheus never had both nodes' series" "$(tail -5 "$dir/prom/log")"; exit 1; fi
sleep 3  # a few samples per series, for the range queries

python3 - "http://127.0.0.1:$pport" "$src/contrib/grafana/gpumap-dashboard.json" "$src/contrib/prometheus/gpumap-rules.yml" \
  "$src/docs/metrics.md" "${targets[1]}" "$dir/a.prom" "$dir/b.prom" <<'PY'
import json, re, sys, time, urllib.parse, urllib.request
base, dash_path, rules_path, metrics_md, node_b, *expositions = sys.argv[1:]
failed = False
def ok(cond, what, detail=""):
    global failed
    print(("PASS " if cond else "FAIL ") + what)
    if not cond:
        failed = True
        for line in str(detail).splitlines(): print("      " + line)
def api(path, **params):
    url = base + path + "?" + urllib.parse.urlencode(params, doseq=True)
    try:
        with urllib.request.urlopen(url, timeout=20) as r: return json.load(r)
    except urllib.error.HTTPError as e: return json.load(e)   # 400 with Prometheus's error

# --- what gpumap exports: families and their labels (the real expositions, the documented labels) ---
families, labels = set(), {}
for path in expositions:
    for line in open(path):
        m = re.match(r"# TYPE (\S+) ", line)
        if m: families.add(m.group(1)); labels.setdefault(m.group(1), set())
        m = re.match(r"([a-z_:]+)\{(.*)\} ", line)
        if m: labels.setdefault(m.group(1), set()).update(re.findall(r'([a-z_]+)="', m.group(2)))
for line in open(metrics_md):   # labels a series has only in some places (pod, namespace, container)
    m = re.match(r"\| `(gpumap_[a-z_]+)` \| (.*?) \| [^|]* \|$", line)
    if m and m.group(1) in labels: labels[m.group(1)].update(re.findall(r"`([a-z_]+)`", m.group(2)))
recorded = set(re.findall(r"record: (\S+)", open(rules_path).read()))
all_labels = set().union(*labels.values()) | {"instance", "job", "__name__", "id", "severity"}
for r in recorded: labels[r] = all_labels
KEYWORDS = {"and", "or", "unless", "bool", "offset", "by", "without", "on", "ignoring", "group_left", "group_right"}

def check_names(expr):
    """The metric names and labels an expression uses that gpumap does not export."""
    bad = []
    s = re.sub(r'"(?:[^"\\]|\\.)*"', '""', expr)
    for name, body in re.findall(r"([A-Za-z_:][A-Za-z0-9_:]*)\s*\{([^}]*)\}", s):
        for l in re.findall(r"([A-Za-z_][A-Za-z0-9_]*)\s*(?:=~|!~|!=|=)", body):
            if name in labels and l not in labels[name] | {"instance", "job"}:
                bad.append(f"{name} has no label {l}")
    for kw, body in re.findall(r"\b(by|without|on|ignoring|group_left|group_right)\s*\(([^)]*)\)", s):
        for l in re.findall(r"[A-Za-z_][A-Za-z0-9_]*", body):
            if l not in all_labels: bad.append(f"{kw}({l}): no gpumap series has that label")
    s = re.sub(r"\{[^}]*\}", " ", s)
    s = re.sub(r"\[[^\]]*\]", " ", s)
    s = re.sub(r"\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", " ", s)
    for m in re.finditer(r"[A-Za-z_:][A-Za-z0-9_:]*", s):
        word, after = m.group(0), s[m.end():].lstrip()
        if word in KEYWORDS or after.startswith("("): continue   # an operator, a function or an aggregation
        if word not in families and word not in recorded: bad.append(f"{word} is not a series gpumap exports")
    return bad

# --- the JSON Grafana imports ---
d = json.load(open(dash_path))
ok(isinstance(d.get("uid"), str) and 0 < len(d["uid"]) <= 40 and re.fullmatch(r"[A-Za-z0-9_-]+", d["uid"]),
   f"uid {d.get('uid')!r}")
ok(isinstance(d.get("title"), str) and d["title"].strip(), f"title {d.get('title')!r}")
ok(isinstance(d.get("schemaVersion"), int) and d["schemaVersion"] >= 36, f"schemaVersion {d.get('schemaVersion')}")
panels = d.get("panels", [])
for p in list(panels): panels += p.get("panels", [])   # panels inside collapsed rows
ids = [p.get("id") for p in panels]
ok(panels and all(isinstance(i, int) for i in ids) and len(set(ids)) == len(ids), f"{len(panels)} panels, unique ids", ids)
variables = {v["name"]: v for v in d.get("templating", {}).get("list", [])}
dsvars = [n for n, v in variables.items() if v.get("type") == "datasource" and v.get("query") == "prometheus"]
ok(len(dsvars) == 1, f"a Prometheus data-source variable: {dsvars}")
ds = {"type": "prometheus", "uid": "${%s}" % (dsvars[0] if dsvars else "?")}
cells, grid_bad, ds_bad, var_bad = {}, [], [], []
used = set()
for p in panels:
    g = p.get("gridPos", {})
    if not all(isinstance(g.get(k), int) for k in "hwxy") or g["w"] < 1 or g["h"] < 1 or g["x"] + g["w"] > 24:
        grid_bad.append(f"panel {p.get('id')}: gridPos {g}"); continue
    for x in range(g["x"], g["x"] + g["w"]):
        for y in range(g["y"], g["y"] + g["h"]):
            if (x, y) in cells: grid_bad.append(f"panel {p['id']} overlaps panel {cells[(x, y)]}")
            cells[(x, y)] = p["id"]
    if p.get("type") == "row": continue
    if p.get("datasource") != ds: ds_bad.append(f"panel {p['id']}: {p.get('datasource')}")
    refs = [t.get("refId") for t in p.get("targets", [])]
    if not refs or len(set(refs)) != len(refs) or not all(t.get("expr") for t in p["targets"]):
        ds_bad.append(f"panel {p['id']}: targets {refs}")
    for t in p.get("targets", []):
        if t.get("datasource", ds) != ds: ds_bad.append(f"panel {p['id']} {t.get('refId')}: {t.get('datasource')}")
        used |= set(re.findall(r"\$\{?([A-Za-z_]\w*)", t.get("expr", "")))
for v in variables.values():
    if v.get("type") == "query":
        used |= set(re.findall(r"\$\{?([A-Za-z_]\w*)", v["query"]["query"] if isinstance(v["query"], dict) else v["query"]))
        if v.get("datasource") != ds: ds_bad.append(f"variable {v['name']}: {v.get('datasource')}")
var_bad = sorted(used - set(variables) - {"__rate_interval", "__interval", "__range"})
ok(not grid_bad, "every gridPos inside 24 columns, no two panels overlap", "\n".join(grid_bad))
ok(not ds_bad, f"every panel, query and variable uses {ds}", "\n".join(ds_bad))
ok(not var_bad, f"every variable a query uses is defined ({sorted(used)})", var_bad)
ok({"node", "slurm_job"} <= set(variables), f"node and job selectors: {sorted(variables)}")

# --- the variables, asked as Grafana asks Prometheus ---
def subst(expr, values):
    for name, val in values.items(): expr = re.sub(r"\$\{%s\}|\$%s\b" % (name, name), lambda _: val, expr)
    return expr
ALL = {n: v.get("allValue", ".*") for n, v in variables.items() if v.get("type") == "query"}
real = {}
for name in ("node", "slurm_job"):
    q = variables[name]["query"]
    q = q["query"] if isinstance(q, dict) else q
    m = re.fullmatch(r"label_values\((.*),\s*(\w+)\)", q.strip())
    if not m: ok(False, f"variable {name}: {q} is not label_values(SELECTOR, LABEL)"); continue
    sel = subst(m.group(1), ALL)
    bad = check_names(sel)
    r = api(f"/api/v1/label/{m.group(2)}/values", **{"match[]": sel})
    vals = r.get("data") or []
    ok(r.get("status") == "success" and vals and not bad, f"variable {name}: {q} -> {vals}", r.get("error", "") + "\n".join(bad))
    real[name] = "|".join(re.escape(v).replace("\\", "\\\\") for v in vals)
    if name == "node":
        nodes = vals
        ok(len(vals) == 2 and node_b in vals, f"node values are the two serves ({node_b} among them)", vals)
    else:
        ok(sorted(vals) == ["4242", "5151", "6001"], "slurm_job values are the fleet's three jobs", vals)
only_b = dict(ALL, node=re.escape(node_b).replace("\\", "\\\\"))

# --- every panel's query ---
now = time.time()
for p in panels:
    if p.get("type") == "row": continue
    trap = p.get("description", "").startswith("Only when a trap exists")
    for t in p["targets"]:
        what = f"panel {p['id']} {p['title']!r} {t['refId']}"
        bad = check_names(t["expr"])
        ok(not bad, f"{what}: names only gpumap's series and labels", "\n".join(bad))
        r = api("/api/v1/query", query=subst(t["expr"], ALL))
        n = len(r.get("data", {}).get("result", [])) if r.get("status") == "success" else -1
        ok(n > 0, f"{what}: valid, {n} series with All selected", r.get("error", "") + "\n" + subst(t["expr"], ALL))
        r = api("/api/v1/query", query=subst(t["expr"], real))
        ok(r.get("status") == "success", f"{what}: valid with the variables' real values", r.get("error", ""))
        if p.get("type") == "timeseries":
            r = api("/api/v1/query_range", query=subst(t["expr"], ALL), start=now - 60, end=now, step=1)
            n = len(r.get("data", {}).get("result", [])) if r.get("status") == "success" else -1
            ok(n > 0, f"{what}: query_range, {n} series", r.get("error", ""))
        if trap:
            r = api("/api/v1/query", query=subst(t["expr"], only_b))
            n = len(r.get("data", {}).get("result", [])) if r.get("status") == "success" else -1
            ok(n == 0, f"{what}: only when a trap exists: empty on node B (no trap), {n} series", r)
traps = [p["title"] for p in panels if p.get("description", "").startswith("Only when a trap exists")]
ok(len(traps) >= 3, f"trap panels documented: {traps}")
sys.exit(1 if failed else 0)
PY
[ $? = 0 ] || failed=1
exit $failed
