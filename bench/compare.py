#!/usr/bin/env python3
"""Side-by-side timing of whole commands: median wall time and peak RSS of each, and the
ratio to a baseline.  A benchmark program, not a test: it asserts nothing.

usage: compare.py [--runs N] [--out FILE] NAME=COMMAND [NAME=COMMAND ...]
The first NAME=COMMAND is the baseline (ratio 1.00).  COMMAND runs through /bin/sh -c.
Env: entries may be prefixed by VAR=value as usual for sh."""
import argparse, json, os, statistics, subprocess, sys, time


def measure(cmd, runs):
    times, rss, rcs = [], [], set()
    for _ in range(runs):
        t = time.perf_counter()
        # exec, so that wait4's peak RSS is the command's own; NAME=value prefixes go through env.
        prefix = "exec env " if "=" in cmd.split(" ")[0] else "exec "
        p = subprocess.Popen(["/bin/sh", "-c", prefix + cmd], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        _, status, ru = os.wait4(p.pid, 0)
        times.append((time.perf_counter() - t) * 1000)
        rss.append(ru.ru_maxrss / 1024)  # KiB -> MiB
        rcs.add(os.waitstatus_to_exitcode(status))
    return {"median_ms": statistics.median(times), "min_ms": min(times), "max_rss_mib": max(rss), "exit_codes": sorted(rcs)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--out")
    ap.add_argument("cases", nargs="+")
    a = ap.parse_args()
    rows = []
    for case in a.cases:
        name, _, cmd = case.partition("=")
        m = measure(cmd, a.runs)
        m.update(name=name, command=cmd)
        rows.append(m)
    base = rows[0]["median_ms"]
    print(f"{'case':<28} {'median ms':>10} {'min ms':>9} {'ratio':>7} {'peak RSS MiB':>13}  exit")
    for r in rows:
        r["ratio_to_" + rows[0]["name"]] = r["median_ms"] / base if base else None
        print(f"{r['name']:<28} {r['median_ms']:>10.2f} {r['min_ms']:>9.2f} {r['median_ms']/base:>7.3f} "
              f"{r['max_rss_mib']:>13.1f}  {r['exit_codes']}")
    if a.out:
        with open(a.out, "a") as f:
            for r in rows:
                f.write(json.dumps(r) + "\n")


if __name__ == "__main__":
    sys.exit(main())
