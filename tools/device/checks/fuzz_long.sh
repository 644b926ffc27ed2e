#!/usr/bin/env bash
# Issue 12 point 13: run libFuzzer targets to 10^7 executions each, spread over parallel jobs on
# the GPU host's CPUs (libFuzzer -jobs/-workers: each job is a process of its own, all sharing one
# corpus folder that starts from fuzz/seeds).  Uses no GPU.  Prints one summary line per target
# and leaves logs and any crash input in $OUT.
# usage (repo root): bash tools/device/checks/fuzz_long.sh DIR NAME:JOBS ...   (DIR holds the fuzz_* binaries)
set -u
bin=$(cd "$1" && pwd); shift
OUT=${OUT:-/tmp/fuzz-out}; mkdir -p "$OUT"
W=$(mktemp -d /tmp/gpumap-fuzz-XXXXXX); trap 'rm -rf "$W"' EXIT
total=${TOTAL_RUNS:-10000000}
echo "== $(date -u +%FT%TZ) $(nproc) CPUs; $(clang --version 2>/dev/null | head -1)"
for spec in "$@"; do
  name=${spec%%:*}; jobs=${spec##*:}
  runs=$(( (total + jobs - 1) / jobs ))
  mkdir -p "$W/$name/corpus"; cp fuzz/seeds/"$name"/* "$W/$name/corpus/" 2>/dev/null
  ( cd "$W/$name" && "$bin/$name" -jobs="$jobs" -workers="$jobs" -runs="$runs" -max_total_time="${MAX_S:-420}" \
      -timeout=5 -rss_limit_mb=2048 -artifact_prefix="$W/$name/" corpus > driver.log 2>&1 ) &
done
wait
echo "target jobs execs seconds cov ft corpus result"
for spec in "$@"; do
  name=${spec%%:*}; jobs=${spec##*:}; d=$W/$name
  python3 - "$d" "$name" "$jobs" <<'PY'
import glob, os, re, sys
d, name, jobs = sys.argv[1], sys.argv[2], int(sys.argv[3])
runs = secs = cov = ft = 0
crash = []
for log in sorted(glob.glob(os.path.join(d, "fuzz-*.log"))):
    text = open(log, errors="replace").read()
    m = re.findall(r"Done (\d+) runs in (\d+) second", text)
    if m:
        runs += int(m[-1][0]); secs = max(secs, int(m[-1][1]))
    for c, f in re.findall(r"cov: (\d+) ft: (\d+)", text):
        cov, ft = max(cov, int(c)), max(ft, int(f))
    if re.search(r"ERROR: (libFuzzer|AddressSanitizer|LeakSanitizer)|runtime error:|SUMMARY: ", text):
        crash.append(os.path.basename(log))
corpus = len(os.listdir(os.path.join(d, "corpus")))
arts = [f for f in os.listdir(d) if f.startswith(("crash-", "leak-", "timeout-", "oom-"))]
result = "no crash" if not crash and not arts else "FOUND " + " ".join(crash + arts)
print(f"{name} {jobs} {runs} {secs} {cov} {ft} {corpus} {result}")
PY
  tail -3 "$d/fuzz-0.log" 2>/dev/null | sed "s/^/  $name job 0: /"
  for a in "$d"/crash-* "$d"/leak-* "$d"/timeout-* "$d"/oom-*; do [ -f "$a" ] && cp "$a" "$OUT/$name-$(basename "$a")"; done
done
tar czf "$OUT/fuzz-logs-$(date +%s).tgz" -C "$W" $(cd "$W" && ls -d */fuzz-*.log 2>/dev/null | head -200) 2>/dev/null
echo "== done"
