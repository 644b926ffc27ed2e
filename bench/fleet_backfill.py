#!/usr/bin/env python3
"""OpenMetrics text for a simulated fleet of N nodes, as Prometheus would hold it after scraping each
node's `gpumap serve`: the input of `promtool tsdb create-blocks-from openmetrics` (issue 44 item 4,
bench/fleet_scale.sh).

The families, their HELP and TYPE, and each family's label keys (in order) come from TEMPLATE, a real
`gpumap metrics` exposition of an eight-GPU host with processes (bench/fleet_scale.sh captures one from
the binary it measures); nothing about the exposition is written here by hand except the label keys
of a process in a Kubernetes pod (`pod`, `namespace`, `container`, docs/metrics.md), which a simulated
host cannot produce.  A family the generator does not know is copied per node (no `uuid` label) or per
GPU (a `uuid` label), with the template's values.

What varies per node: `instance` (`nodeNNNN:9467`, `job="gpumap"` as a static scrape config gives),
GPU uuids and PCI ids, PIDs, users, Slurm jobs of eight ranks (one rank a GPU, all GPUs visible, as
torchrun leaves them; every second node's first job spans it and the next node: 16 ranks, one job),
Kubernetes pods instead of Slurm jobs on every fifth node (2, 7, 12...), the findings gpumap reports for that layout
(`gpu-shared` and `no-visibility-shared-host` for every process when a GPU holds several, as the real
exposition has them) plus a few per node: a rank on the wrong GPU with its `ranks-share-gpu` pair on
every seventh node (1, 8...), a `stray-context` on every eleventh (0, 11...).  Prometheus's own per-target series (`up`,
`scrape_duration_seconds`, `scrape_samples_scraped`, `scrape_samples_post_metric_relabeling`,
`scrape_series_added`) are added for every node.  Node health: the last node of every 50 (at least
one) is down: `up` 0 and no gpumap series from half the past window on; the second to last of every
100 (at least one, when N > 1) serves a stale frame (`gpumap_exporter_stale` 1, `gpumap_exporter_up`
0, `up` 1).

Time: samples every INTERVAL seconds from NOW - PAST to NOW + FUTURE.  Samples after NOW keep a cached
backfill usable: an instant query at "now" sees the newest sample within Prometheus's 5 minute
lookback until NOW + FUTURE, so `gpumap fleet` (which asks at "now") sees a live fleet.

A summary goes to stderr and, with --summary FILE, as JSON to FILE: series per node kind, series in
total, samples, nodes up/down/stale, jobs spanning nodes, findings by id.  stdlib only.

usage: fleet_backfill.py --template FILE --nodes N [--processes P] [--interval S] [--past S]
                         [--future S] [--now UNIX] [--summary FILE] [-o OUT]
"""

import argparse
import json
import re
import sys
import time

GPUS = 8
# Label keys of a process in a Kubernetes pod, after the template's own (docs/metrics.md's order).
POD_KEYS = ["pod", "namespace", "container"]
# Prometheus's own series per scrape target (names and HELP as Prometheus has no HELP for them: the
# OpenMetrics input needs a TYPE; gauge as Prometheus reports them).
TARGET_FAMILIES = ["up", "scrape_duration_seconds", "scrape_samples_scraped",
                   "scrape_samples_post_metric_relabeling", "scrape_series_added"]
NAME_RE = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*")
LABEL_RE = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')


class Family:
    def __init__(self, name):
        self.name, self.help, self.type, self.samples = name, "", "untyped", []  # (labels, value)

    def keys(self):
        """The label keys of the family's first sample with the most labels, in the template's order."""
        best = []
        for labels, _ in self.samples:
            if len(labels) > len(best):
                best = [k for k, _ in labels]
        return best


def parse_template(path):
    """The families of a Prometheus text exposition, in order."""
    fams, order = {}, []

    def fam(name):
        if name not in fams:
            fams[name] = Family(name)
            order.append(name)
        return fams[name]

    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if not line:
                continue
            if line.startswith("# HELP ") or line.startswith("# TYPE "):
                parts = line.split(" ", 3)
                if len(parts) < 4:
                    continue
                if parts[1] == "HELP":
                    fam(parts[2]).help = parts[3]
                else:
                    fam(parts[2]).type = parts[3]
                continue
            if line.startswith("#"):
                continue
            m = NAME_RE.match(line)
            if not m:
                raise SystemExit(f"fleet_backfill: {path}: not an exposition line: {line[:80]!r}")
            rest = line[m.end():]
            labels = []
            if rest.startswith("{"):
                close = rest.index("}")
                labels = LABEL_RE.findall(rest[1:close])
                rest = rest[close + 1:]
            value = rest.split()[0]
            fam(m.group(0)).samples.append((labels, value))
    return [fams[n] for n in order]


def esc(v):
    return v.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def fmt(v):
    if isinstance(v, float):
        return repr(round(v, 6)) if v != int(v) else str(int(v))
    return str(v)


def is_kube(n):
    return n % 5 == 2


class Node:
    """One simulated node: its GPUs, processes and findings."""

    def __init__(self, n, args, tmpl_gpus, jobs):
        self.n = n
        self.instance = "node%04d:9467" % n
        self.down = (n % 50 == 49) or (n == args.nodes - 1)
        self.stale = not self.down and args.nodes > 1 and ((n % 100 == 98) or (n == args.nodes - 2))
        self.kube = is_kube(n)
        self.gpus = []
        for g in range(GPUS):
            t = tmpl_gpus[g % len(tmpl_gpus)]
            self.gpus.append({
                "uuid": "GPU-%08x-%04x-4%03x-8000-%012x" % (0x6a000000 + n, g, n % 4096, n * GPUS + g),
                "nvml_index": str(g), "minor_number": str(g),
                "pci_bus_id": "00000000:%02X:00.0" % (0x18 + g * 0x10), "name": t["name"],
                "mig": "disabled"})
        self.procs = []  # dicts of label values, plus "gpu" (index), "mem" (bytes)
        pid = 100000 + (n * 7919) % 300000
        slots = args.processes // GPUS
        # nodes 2k and 2k+1 share a job of 16 ranks when both run Slurm
        first = n - n % 2
        pair = first + 1 < args.nodes and not is_kube(first) and not is_kube(first + 1)
        for s in range(slots):
            if self.kube:
                job, base = None, 0
            elif s == 0 and pair:
                job, base = jobs.spanning(first), GPUS * (n - first)
            else:
                job, base = jobs.new(), 0
            user = "user%02d" % ((n * 3 + s) % 37)
            for lr in range(GPUS):
                gpu = lr
                p = {"pid": str(pid), "type": "compute", "state": "running", "user": user,
                     "command": "python train.py --config cfg/exp%d.yaml" % ((n + s) % 97),
                     "local_rank": str(lr), "rank": str(base + lr), "gpu": gpu,
                     "mem": (1 + (n + s + lr) % 8) * 2**30}  # eight a GPU: at most 64 GiB
                if job is None:
                    p.update(pod="train-%04d-%d" % (n, s), namespace="team%d" % (n % 6),
                             container="trainer", rank=str(lr))
                else:
                    p["slurm_job_id"] = str(job)
                    p["launcher_job"] = "slurm %d.0" % job  # ps's JOB: srun's step 0
                    p["_job"] = job
                self.procs.append(p)
                pid += 1 + (pid % 3)
        # leftover processes (P not a multiple of eight): one-process jobs on GPU 0..
        for i in range(args.processes - slots * GPUS):
            self.procs.append({"pid": str(pid), "type": "compute", "state": "running", "user": "user%02d" % (n % 37),
                               "command": "python eval.py", "local_rank": "0", "rank": "0", "gpu": i % GPUS,
                               "mem": 4 * 2**30, "slurm_job_id": str(jobs.new())})
            self.procs[-1]["launcher_job"] = "slurm %s.0" % self.procs[-1]["slurm_job_id"]
            pid += 1
        self.findings = []  # (id, severity, pid, uuid)
        # a rank on the wrong GPU: local rank 3 of the second job sits on GPU 5 (with that job's rank 5)
        if n % 7 == 1 and slots >= 2:
            p3, p5 = self.procs[GPUS + 3], self.procs[GPUS + 5]
            p3["gpu"] = 5
            self.findings.append(("rank-on-wrong-gpu", "error", p3["pid"], self.uuid(5)))
            self.findings.append(("ranks-share-gpu", "warning", p3["pid"], self.uuid(5)))
            self.findings.append(("ranks-share-gpu", "warning", p5["pid"], self.uuid(5)))
        if n % 11 == 0 and slots >= 1:
            p = self.procs[2]
            self.findings.append(("stray-context", "warning", p["pid"], self.uuid(0)))
        per_gpu = [0] * GPUS
        for p in self.procs:
            per_gpu[p["gpu"]] += 1
            p["uuid"], p["nvml_index"] = self.uuid(p["gpu"]), str(p["gpu"])
            p["cuda_ordinal"] = str(p["gpu"])  # all GPUs visible, PCI order: cuda:N is index N
        for p in self.procs:
            if per_gpu[p["gpu"]] > 1:
                self.findings.append(("gpu-shared", "info", p["pid"], p["uuid"]))
                self.findings.append(("no-visibility-shared-host", "info", p["pid"], p["uuid"]))
        self.per_gpu = per_gpu

    def uuid(self, g):
        return self.gpus[g]["uuid"]


class Jobs:
    def __init__(self):
        self.next, self.span = 4000000, {}

    def new(self):
        self.next += 1
        return self.next

    def spanning(self, first_node):
        if first_node not in self.span:
            self.span[first_node] = self.new()
        return self.span[first_node]


def gpu_value(fam, g, node, tmpl_gpu_values, k):
    """A GPU gauge's value at step k: the template's, with the busy ones moving over time."""
    base = tmpl_gpu_values.get((fam, g))
    busy = node.per_gpu[g] > 0
    wave = ((node.n * 13 + g * 7 + k * 3) % 20) / 100.0
    if fam == "gpumap_gpu_utilization_ratio":
        return round(0.75 + wave, 2) if busy else 0
    if fam == "gpumap_gpu_memory_utilization_ratio":
        return round(0.35 + wave, 2) if busy else 0
    if fam == "gpumap_gpu_memory_used_bytes":
        return sum(p["mem"] for p in node.procs if p["gpu"] == g)
    if fam == "gpumap_gpu_temperature_celsius":
        return (62 + int(wave * 50)) if busy else base
    if fam == "gpumap_gpu_power_watts":
        return round(540 + wave * 500, 1) if busy else base
    if fam == "gpumap_gpu_processes":
        return node.per_gpu[g]
    return base


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--template", required=True, help="a `gpumap metrics` exposition of an 8-GPU host")
    ap.add_argument("--nodes", type=int, required=True)
    ap.add_argument("--processes", type=int, default=64, help="processes per node (default 64)")
    ap.add_argument("--interval", type=int, default=60,
                    help="seconds between samples (default 60, Prometheus's default scrape_interval)")
    ap.add_argument("--past", type=int, default=600, help="seconds of history before NOW (default 600)")
    ap.add_argument("--future", type=int, default=2400, help="seconds of samples after NOW (default 2400)")
    ap.add_argument("--now", type=int, default=None, help="the anchor time (default: now)")
    ap.add_argument("--summary", help="write the summary as JSON to this file")
    ap.add_argument("-o", "--output", help="output file (default stdout)")
    a = ap.parse_args()
    if a.nodes < 1 or a.processes < 0 or a.interval < 1 or a.past < 0 or a.future < 0:
        ap.error("--nodes must be >= 1, --processes >= 0, --interval >= 1, --past and --future >= 0")
    if a.past < 2 * 300 and a.nodes > 0:
        # a down node's series end at NOW - PAST/2: more than the 5 minute lookback is needed for it to
        # be gone from instant queries at NOW
        ap.error("--past must be at least 600 s (a down node's series must be older than the 5 min lookback)")
    fams = parse_template(a.template)
    byname = {f.name: f for f in fams}
    for need in ("gpumap_gpu_info", "gpumap_process_info", "gpumap_finding", "gpumap_exporter_up"):
        if need not in byname or not byname[need].samples:
            raise SystemExit(f"fleet_backfill: {a.template} has no {need} sample: give the exposition of a "
                             "host with GPUs and processes (bench/fleet_scale.sh makes one)")
    tmpl_gpus = [dict(lab) for lab, _ in byname["gpumap_gpu_info"].samples]
    if len(tmpl_gpus) != GPUS:
        raise SystemExit(f"fleet_backfill: {a.template} has {len(tmpl_gpus)} GPUs, not {GPUS}")
    tmpl_index = {g["uuid"]: i for i, g in enumerate(tmpl_gpus)}
    tmpl_gpu_values = {}
    for f in fams:
        for lab, v in f.samples:
            d = dict(lab)
            if "uuid" in d and "pid" not in d and d["uuid"] in tmpl_index:
                tmpl_gpu_values[(f.name, tmpl_index[d["uuid"]])] = float(v) if "." in v or "e" in v else int(v)

    now = a.now if a.now is not None else int(time.time())
    start = now - a.past // a.interval * a.interval
    steps = list(range(start, now + a.future + 1, a.interval))
    down_at = now - a.past // 2
    jobs = Jobs()
    nodes = [Node(n, a, tmpl_gpus, jobs) for n in range(a.nodes)]

    out = open(a.output, "w", encoding="utf-8", buffering=1 << 20) if a.output else sys.stdout
    w = out.write
    series_count = {}  # family -> series
    by_node = {}  # instance -> gpumap series
    samples = 0

    def emit(name, labels_text, values):
        """One series: labels_text is the inside of {...}; values a function of the step index or a constant."""
        nonlocal samples
        head = name + "{" + labels_text + "} "
        if callable(values):
            for k, t in enumerate(steps):
                w("%s%s %d\n" % (head, fmt(values(k)), t))
        else:
            v = fmt(values)
            for t in steps:
                w("%s%s %d\n" % (head, v, t))
        samples += len(steps)
        series_count[name] = series_count.get(name, 0) + 1

    def emit_until(name, labels_text, value, last):
        nonlocal samples
        head = name + "{" + labels_text + "} "
        v = fmt(value)
        n = 0
        for t in steps:
            if t > last:
                break
            w("%s%s %d\n" % (head, v, t))
            n += 1
        samples += n
        series_count[name] = series_count.get(name, 0) + 1

    def target(node):
        return 'instance="%s",job="gpumap"' % node.instance

    def write_family(f, series_of_node):
        """HELP/TYPE (OpenMetrics: a counter's family name has no _total) and every node's series."""
        name = f.name
        if f.type == "counter" and name.endswith("_total"):
            w("# HELP %s %s\n# TYPE %s counter\n" % (name[:-6], f.help, name[:-6]))
        else:
            w("# HELP %s %s\n# TYPE %s %s\n" % (name, f.help, name, "gauge" if f.type == "untyped" else f.type))
        for node in nodes:
            last = down_at if node.down else None
            for labels_text, value in series_of_node(node):
                by_node[node.instance] = by_node.get(node.instance, 0) + 1
                if last is None:
                    emit(name, labels_text, value)
                else:
                    emit_until(name, labels_text, value if not callable(value) else value(0), last)

    proc_keys = byname["gpumap_process_info"].keys()
    proc_keys = proc_keys + [k for k in POD_KEYS if k not in proc_keys]
    finding_keys = byname["gpumap_finding"].keys()

    for f in fams:
        keys = f.keys()
        name = f.name
        if name == "gpumap_process_info":
            def gen(node, keys=proc_keys):
                for p in node.procs:
                    yield target(node) + "," + ",".join('%s="%s"' % (k, esc(p[k])) for k in keys if k in p), 1
        elif name == "gpumap_finding":
            def gen(node, keys=finding_keys):
                for fid, sev, pid, uuid in node.findings:
                    d = {"id": fid, "severity": sev, "pid": pid, "uuid": uuid}
                    yield target(node) + "," + ",".join('%s="%s"' % (k, esc(d[k])) for k in keys if k in d), 1
        elif "pid" in keys:  # per-process value series (used memory, utilisation)
            def gen(node, keys=keys, name=name):
                for p in node.procs:
                    lab = target(node) + "," + ",".join('%s="%s"' % (k, esc(p[k])) for k in keys if k in p)
                    if name == "gpumap_process_used_memory_bytes":
                        yield lab, p["mem"]
                    else:
                        yield lab, (lambda k, p=p: round(0.5 + ((int(p["pid"]) + k) % 40) / 100.0, 2))
        elif name == "gpumap_gpu_info":
            def gen(node, keys=keys):
                for g in node.gpus:
                    yield target(node) + "," + ",".join('%s="%s"' % (k, esc(g[k])) for k in keys if k in g), 1
        elif "uuid" in keys:  # a GPU gauge (or a family of MIG devices or leases: copied per GPU)
            if name in ("gpumap_gpu_lease_info",) or name.startswith("gpumap_mig_"):
                continue  # no leases, no MIG in this fleet
            def gen(node, name=name):
                for gi, g in enumerate(node.gpus):
                    if (name, gi) not in tmpl_gpu_values:
                        continue  # the template's GPU has no sample (e.g. no fan): none here either
                    yield (target(node) + ',uuid="%s"' % g["uuid"],
                           lambda k, gi=gi: gpu_value(name, gi, node, tmpl_gpu_values, k))
        else:  # a node's own series
            tmpl = f.samples
            def gen(node, name=name, tmpl=tmpl):
                for lab, v in tmpl:
                    d = dict(lab)
                    if name == "gpumap_driver_info":
                        d["source"], d["simulated"] = "NVML", "false"
                    val = v
                    if name == "gpumap_exporter_up" and node.stale:
                        val = "0"
                    elif name == "gpumap_exporter_stale" and node.stale:
                        val = "1"
                    elif name == "gpumap_exporter_last_success_timestamp_seconds":
                        val = (lambda k: steps[k] - 1) if not node.stale else (now - a.past)
                    lt = target(node) + "".join(',%s="%s"' % (k, esc(x)) for k, x in d.items())
                    yield lt, (float(val) if isinstance(val, str) else val)
        write_family(f, gen)

    # Prometheus's own series per target.  A down node's scrape fails from down_at on: up 0 there.
    gpumap_series_per_node = {n.instance: 0 for n in nodes}
    per_node = sum(series_count.values())  # all nodes, gpumap families
    for fam in TARGET_FAMILIES:
        w("# HELP %s Prometheus's per-target series (simulated).\n# TYPE %s gauge\n" % (fam, fam))
        for node in nodes:
            lt = target(node)
            if fam == "up":
                emit(fam, lt, (lambda k, node=node: 0 if node.down and steps[k] > down_at else 1))
            else:
                emit(fam, lt, 0.05 if fam == "scrape_duration_seconds" else 400)
    w("# EOF\n")
    if out is not sys.stdout:
        out.close()

    findings, findings_up = {}, {}
    for node in nodes:
        for fid, *_ in node.findings:
            findings[fid] = findings.get(fid, 0) + 1
            if not node.down:
                findings_up[fid] = findings_up.get(fid, 0) + 1
    summary = {
        "nodes": a.nodes, "processes_per_node": a.processes, "gpus_per_node": GPUS,
        "down": sum(n.down for n in nodes), "stale": sum(n.stale for n in nodes),
        "kubernetes_nodes": sum(n.kube for n in nodes), "jobs_spanning_nodes": len(jobs.span),
        "series": sum(series_count.values()), "gpumap_series": per_node,
        "series_by_family": series_count, "samples": samples, "steps": len(steps),
        "interval_s": a.interval, "first_ts": steps[0], "now_ts": now, "last_ts": steps[-1],
        "down_since_ts": down_at, "findings_by_id": findings, "findings_by_id_up_nodes": findings_up,
        "jobs_spanning_up_nodes": sum(1 for f in jobs.span if not nodes[f].down and not nodes[f + 1].down),
        "process_info_keys": proc_keys, "gpumap_series_by_node": by_node,
        "processes": sum(len(n.procs) for n in nodes),
    }
    if a.summary:
        with open(a.summary, "w") as s:
            json.dump(summary, s, indent=1)
    print("fleet_backfill: %d nodes (%d down, %d stale), %d series (%d gpumap), %d samples over %d steps" %
          (a.nodes, summary["down"], summary["stale"], summary["series"], per_node, samples, len(steps)),
          file=sys.stderr)


if __name__ == "__main__":
    main()
