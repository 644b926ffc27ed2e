#!/usr/bin/env python3
"""Differential test of gpumap's prediction against a CUDA driver (issue 25).

Generates seeded CUDA_VISIBLE_DEVICES / CUDA_DEVICE_ORDER values for this host (gen.py), asks the
driver under each one (difftest_probe: cuInit in a child process of its own, no context), in
parallel over the CPUs, predicts the same with one `gpumap map --batch FILE --json`, compares, and
shrinks every disagreement to a minimal value (delta debugging on the entries, then on the
characters).  Each shrunk disagreement becomes a test vector (tests/vectors/ format: the driver's
answer, with gpumap's prediction, the driver version and the host beside it).

On a GPU host the driver is the real libcuda; with --simulate HOST and --cuda-lib build/sim/libcuda.so.1
it is gpumap's simulated driver (src/fake/fake_cuda.cc), which CI checks: two independent
readings of the same rules, so every disagreement is a bug in one of them.

Writes under --out: summary.json (counts, host, driver, seed, timings), vectors.jsonl (the shrunk
disagreements; the first line is the unset/unset baseline), disagreements.jsonl (each one as
generated), cases.jsonl (one line per case: length, the driver's outcome, agreement) and log.txt.
Prints progress and, last, "generated N, compared M, agreeing A, disagreeing D".
Exit 0; 1 with --fail-on-disagreement when any disagreed (or the deadline left values uncompared);
2 when the harness itself failed.
"""
import argparse
import concurrent.futures as cf
import hashlib
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen  # noqa: E402

VARS = ("CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER")


class HarnessError(Exception):
    pass


def hexof(uuid):
    return uuid[4:].replace("-", "").lower() if uuid[:4] in ("GPU-", "MIG-") else uuid.lower()


def show(value, limit=120):
    """A value for a log line: repr, cut in the middle when long."""
    if value is None:
        return "unset"
    r = repr(value)
    return r if len(r) <= limit else r[:limit // 2] + "...(%d chars)..." % len(value) + r[-limit // 2:]


class Outcome:
    """What cuInit made of one environment: an error name, or the devices' UUIDs (hex) in order."""

    def __init__(self, error=None, code=None, uuids=(), ms=None, raw_uuids=()):
        self.error, self.code, self.uuids, self.ms, self.raw_uuids = error, code, tuple(uuids), ms, list(raw_uuids)

    def key(self):
        return (self.error, self.uuids if self.error is None else ())

    def __str__(self):
        if self.error:
            return self.error
        return "[" + ", ".join(u[:8] for u in self.uuids) + "]"


class Harness:
    def __init__(self, a):
        self.a = a
        self.t0 = time.monotonic()
        self.tmp = tempfile.mkdtemp(prefix="gpumap-difftest-")
        os.makedirs(a.out, exist_ok=True)
        self.log_file = open(os.path.join(a.out, "log.txt"), "w")
        self.lock = threading.Lock()
        base = {k: v for k, v in os.environb.items() if k.decode("utf-8", "replace") not in VARS}
        base[b"GPUMAP_CACHE_DIR"] = os.fsencode(os.path.join(self.tmp, "cache"))
        base.pop(b"GPUMAP_SIMULATE", None)
        self.gpumap_env = dict(base)
        self.probe_env = dict(base)
        if a.simulate:
            self.probe_env[b"GPUMAP_FAKE_HOST"] = os.fsencode(os.path.abspath(a.simulate))
        self.probes = 0
        self.probe_seconds = 0.0

    def elapsed(self):
        return time.monotonic() - self.t0

    def left(self):
        return self.a.deadline - self.elapsed()

    def log(self, msg):
        line = "[%6.1fs] %s" % (self.elapsed(), msg)
        with self.lock:
            print(line, flush=True)
            self.log_file.write(line + "\n")
            self.log_file.flush()

    def gpumap_cmd(self, *args):
        cmd = [self.a.gpumap] + list(args)
        if self.a.simulate:
            cmd += ["--simulate", self.a.simulate]
        return cmd

    def host(self):
        r = subprocess.run(self.gpumap_cmd("list", "--json"), env=self.gpumap_env, capture_output=True, timeout=120)
        if r.returncode != 0:
            raise HarnessError("gpumap list --json failed (exit %d): %s" % (r.returncode, r.stderr.decode(errors="replace")))
        doc = json.loads(r.stdout)
        self.doc = doc
        self.host_name = ("simulated " + os.path.basename(self.a.simulate)) if self.a.simulate else socket.gethostname()
        self.driver_version = doc.get("driver_version")
        return gen.Host.from_list_json(doc)

    # --- the driver's side ---

    def probe(self, cvd, cdo):
        env = dict(self.probe_env)
        for name, v in zip(VARS, (cvd, cdo)):
            if v is not None:
                env[name.encode()] = gen.encode(v)
        t = time.monotonic()
        try:
            r = subprocess.run([self.a.probe, self.a.cuda_lib], env=env, capture_output=True, timeout=self.a.probe_timeout)
        except subprocess.TimeoutExpired:
            return Outcome(error="probe-timeout")
        ms = (time.monotonic() - t) * 1000
        with self.lock:
            self.probes += 1
            self.probe_seconds += ms / 1000
        if r.returncode == 3:  # the library cannot be loaded: nothing can be compared
            raise HarnessError("the probe failed (exit 3): %s" % r.stderr.decode(errors="replace")[:500])
        if r.returncode < 0:  # killed by a signal inside cuInit: gpumap's DRIVER_CRASH (a measured rule)
            self.log("the probe died of signal %d under %s" % (-r.returncode, show(cvd, 60)))
            return Outcome(error="DRIVER_CRASH", ms=round(ms, 1))
        if r.returncode != 0:  # the probe exited under this value: a finding, not the end
            self.log("the probe exited %d under %s: %s" % (r.returncode, show(cvd, 60), r.stderr.decode(errors="replace")[:200]))
            return Outcome(error="PROBE_EXIT_%d" % r.returncode, ms=round(ms, 1))
        lines = r.stdout.decode("utf-8", "replace").splitlines()
        if not lines or lines[-1] != "end":
            raise HarnessError("the probe answered nonsense: %r" % r.stdout[:300])
        out = Outcome(ms=round(ms, 1))
        uuids = []
        for line in lines[:-1]:
            f = line.split(" ")
            if f[0] == "error":
                out.error, out.code = f[1], int(f[2])
            elif f[0] == "uuid":
                uuids.append(f[1])
        out.raw_uuids = uuids
        out.uuids = tuple(hexof(u) for u in uuids)
        return out

    def probe_all(self, cases, pool, progress=None):
        """Outcomes of `cases` (index -> (cvd, cdo)), probed in parallel; stops early at the deadline."""
        results = {}
        futures = {pool.submit(self.probe, *c): i for i, c in cases.items()}
        last = time.monotonic()
        try:
            for f in cf.as_completed(futures):
                results[futures[f]] = f.result()
                if progress and time.monotonic() - last > 5:
                    last = time.monotonic()
                    self.log("%s %d/%d" % (progress, len(results), len(futures)))
                if self.left() < self.a.reserve:
                    break
        finally:
            for f in futures:
                f.cancel()
        return results

    # --- gpumap's side ---

    def predict(self, cases):
        """gpumap's predictions for `cases` (a list of (cvd, cdo)), from one map --batch."""
        path = os.path.join(self.tmp, "batch.jsonl")
        with open(path, "w") as f:
            for cvd, cdo in cases:
                f.write(gen.to_batch_line(cvd, cdo) + "\n")
        r = subprocess.run(self.gpumap_cmd("map", "--batch", path, "--json"), env=self.gpumap_env,
                           capture_output=True, timeout=max(60, self.left()))
        if r.returncode != 0:
            raise HarnessError("gpumap map --batch failed (exit %d): %s" % (r.returncode, r.stderr.decode(errors="replace")[:2000]))
        out = [None] * len(cases)
        for text in r.stdout.split(b"\n"):  # not splitlines(): U+2028 and U+0085 are inside strings
            if not text:
                continue
            j = json.loads(text)
            c = j["cuda"]
            uuids = [d["uuid"] for d in c["devices"]]
            out[j["line"] - 1] = Outcome(error=c["error"], uuids=[hexof(u) for u in uuids], raw_uuids=uuids)
        if any(o is None for o in out):
            raise HarnessError("gpumap map --batch left lines unanswered")
        return out

    # --- shrinking ---

    def first_failing(self, candidates, pool):
        """Index of the first candidate whose driver answer and prediction differ, or None."""
        wave = max(1, self.a.jobs)
        for start in range(0, len(candidates), wave):
            if self.left() < self.a.reserve / 2 or time.monotonic() > self.shrink_until:
                return None
            chunk = candidates[start:start + wave]
            predicted = self.predict(chunk)
            got = list(pool.map(lambda c: self.probe(*c), chunk))
            for k, (p, d) in enumerate(zip(predicted, got)):
                if d.error != "probe-timeout" and p.key() != d.key():
                    return start + k
        return None

    def ddmin(self, pieces, join, rebuild, pool):
        """Delta debugging: a smallest sublist of `pieces` for which rebuild(join(sublist)) still disagrees."""
        n = 2
        while len(pieces) >= 2:
            size = -(-len(pieces) // n)
            chunks = [pieces[i:i + size] for i in range(0, len(pieces), size)]
            subsets = [c for c in chunks]
            complements = [pieces[:i] + pieces[i + size:] for i in range(0, len(pieces), size)]
            cands = subsets + complements if len(chunks) > 2 else subsets
            k = self.first_failing([rebuild(join(c)) for c in cands], pool)
            if k is None:
                if n >= len(pieces) or time.monotonic() > self.shrink_until or self.left() < self.a.reserve / 2:
                    break
                n = min(len(pieces), 2 * n)
                continue
            pieces = cands[k]
            n = 2 if k < len(subsets) else max(n - 1, 2)
        # A single piece: try nothing at all.
        if len(pieces) == 1 and self.first_failing([rebuild(join([]))], pool) == 0:
            pieces = []
        return pieces

    def shrink(self, cvd, cdo, pool):
        self.shrink_until = time.monotonic() + self.a.shrink_each
        # Unset or empty a variable when the disagreement does not need it.
        for alt in ((None, cdo), ("", cdo)) if cvd is not None else ():
            if self.first_failing([alt], pool) == 0:
                cvd = alt[0]
                break
        if cdo is not None and self.first_failing([(cvd, None)], pool) == 0:
            cdo = None
        if cvd:
            entries = self.ddmin(cvd.split(","), ",".join, lambda v: (v, cdo), pool)
            cvd = ",".join(entries)
            cvd = "".join(self.ddmin(list(cvd), "".join, lambda v: (v, cdo), pool))
        if cdo:
            cdo = "".join(self.ddmin(list(cdo), "".join, lambda v: (cvd, v), pool))
        return cvd, cdo

    # --- records ---

    def vector(self, cvd, cdo, driver, predicted, origin):
        v = {}
        for name, value in zip(VARS, (cvd, cdo)):
            if value is None:
                v[name] = None
                continue
            b = gen.encode(value)
            try:
                v[name] = b.decode("utf-8")
            except UnicodeDecodeError:
                v[name + "_hex"] = b.hex()
        v["error"] = None if not driver.error else driver.error if driver.code is None else "%s(%d)" % (driver.error, driver.code)
        v["uuids"] = driver.raw_uuids
        v["ms"] = driver.ms
        v["predicted"] = {"error": predicted.error, "uuids": predicted.raw_uuids}
        v["driver_version"] = self.driver_version
        v["host"] = self.host_name
        v["found_by"] = origin
        return v

    def run(self):
        a = self.a
        host = self.host()
        self.log("host %s: driver %s, %d GPU(s) and MIG devices: %s" % (self.host_name, self.driver_version, len(host.uuids),
                                                                         ", ".join(host.uuids)))
        t = time.monotonic()
        cases = {-1: (None, None)}  # the baseline: both unset
        for i in range(a.count):
            cases[i] = gen.case(a.seed, i, host)
        self.log("generated %d values (seed %s) in %.1f s; longest %d characters" % (
            a.count, a.seed, time.monotonic() - t, max((len(c[0]) for c in cases.values() if c[0]), default=0)))
        order = sorted(cases)
        t = time.monotonic()
        predictions = dict(zip(order, self.predict([cases[i] for i in order])))
        self.log("gpumap predicted %d values with one map --batch in %.1f s" % (len(order), time.monotonic() - t))
        summary = {"seed": a.seed, "host": self.host_name, "driver_version": self.driver_version,
                   "cuda_driver_version": self.doc.get("cuda_driver_version"), "uuids": host.uuids,
                   "simulated": bool(a.simulate), "generated": a.count, "jobs": a.jobs}
        with cf.ThreadPoolExecutor(max_workers=a.jobs) as pool:
            t = time.monotonic()
            driver = self.probe_all(cases, pool, progress="probed")
            summary["probe_seconds"] = round(time.monotonic() - t, 1)
            self.log("probed %d of %d values in %.1f s (%d in parallel, %.0f ms each on average)" % (
                len(driver), len(cases), time.monotonic() - t, a.jobs, 1000 * self.probe_seconds / max(1, self.probes)))
            disagreements, outcomes, timeouts = [], {}, 0
            with open(os.path.join(a.out, "cases.jsonl"), "w") as f:
                for i in order:
                    if i not in driver:
                        continue
                    d, p = driver[i], predictions[i]
                    if d.error == "probe-timeout":
                        timeouts += 1
                        continue
                    agree = d.key() == p.key()
                    label = d.error or "%d device(s)" % len(d.uuids)
                    outcomes[label] = outcomes.get(label, 0) + 1
                    cvd, cdo = cases[i]
                    f.write(json.dumps({"case": i, "cvd_chars": None if cvd is None else len(cvd),
                                        "cdo": None if cdo is None or len(cdo) > 40 else cdo, "driver": str(d),
                                        "agree": agree}) + "\n")
                    if not agree:
                        disagreements.append(i)
            compared = sum(1 for i in order if i in driver and driver[i].error != "probe-timeout") - (1 if -1 in driver else 0)
            base_ok = -1 in driver and driver[-1].key() == predictions[-1].key()
            self.log("compared %d: %d agree, %d disagree%s" % (compared, compared - len([i for i in disagreements if i >= 0]),
                                                              len([i for i in disagreements if i >= 0]),
                                                              "" if base_ok else "; the unset/unset BASELINE disagrees"))
            vectors = [self.vector(None, None, driver[-1], predictions[-1], "baseline: both variables unset")] if -1 in driver else []
            seen = set()
            # Shrink the kinds of disagreement in turn (driver's outcome, gpumap's, whether the order is
            # set), shortest value first within a kind: one systematic difference must not spend the
            # whole budget while another goes unshrunk.
            by_kind = {}
            for i in sorted(disagreements, key=lambda i: len(gen.encode(cases[i][0] or "")) + len(gen.encode(cases[i][1] or ""))):
                d, p = driver[i], predictions[i]
                by_kind.setdefault((d.error or len(d.uuids), p.error or len(p.uuids), cases[i][1] is None), []).append(i)
            queues = list(by_kind.values())
            summary["disagreement_kinds"] = [{"driver": str(k[0]), "gpumap": str(k[1]), "order_unset": k[2], "count": len(q)}
                                             for k, q in by_kind.items()]
            disagreements = [q[k] for k in range(max(map(len, queues), default=0)) for q in queues if k < len(q)]
            with open(os.path.join(a.out, "disagreements.jsonl"), "w") as f:
                for n, i in enumerate(disagreements):
                    cvd, cdo = cases[i]
                    d, p = driver[i], predictions[i]
                    rec = {"case": i, "seed": a.seed, "driver": str(d), "predicted": str(p),
                           "regenerate": "tools/difftest/gen.py --host LIST.json --seed %s --index %d" % (a.seed, i)}
                    for name, v in zip(VARS, (cvd, cdo)):
                        b = None if v is None else gen.encode(v)
                        rec[name + "_chars"] = None if v is None else len(v)
                        rec[name + "_sha256"] = None if b is None else hashlib.sha256(b).hexdigest()
                        if b is not None and len(b) <= 4096:
                            rec[name + "_hex"] = b.hex()
                    if n < a.max_shrink and self.left() > a.reserve:
                        t = time.monotonic()
                        scvd, scdo = self.shrink(cvd, cdo, pool)
                        sd, sp = self.probe(scvd, scdo), self.predict([(scvd, scdo)])[0]
                        rec["shrunk"] = {"CUDA_VISIBLE_DEVICES": scvd and gen.encode(scvd).hex(),
                                         "CUDA_DEVICE_ORDER": scdo and gen.encode(scdo).hex(), "seconds": round(time.monotonic() - t, 1)}
                        self.log("disagreement case %d: %s + %s: driver %s, gpumap %s; shrunk in %.1f s to %s + %s: driver %s, gpumap %s" % (
                            i, show(cvd, 60), show(cdo, 30), d, p, time.monotonic() - t, show(scvd), show(scdo), sd, sp))
                        if sd.key() != sp.key() and (scvd, scdo) not in seen:
                            seen.add((scvd, scdo))
                            origin = "difftest seed %s case %d (%s characters)" % (a.seed, i, rec["CUDA_VISIBLE_DEVICES_chars"])
                            vectors.append(self.vector(scvd, scdo, sd, sp, origin))
                    elif n < a.max_shrink + 20:
                        self.log("disagreement case %d: %s + %s: driver %s, gpumap %s (not shrunk: %s)" % (
                            i, show(cvd, 60), show(cdo, 30), d, p, "budget" if n >= a.max_shrink else "deadline"))
                    elif n == a.max_shrink + 20:
                        self.log("... the other %d disagreements are in disagreements.jsonl" % (len(disagreements) - n))
                    f.write(json.dumps(rec) + "\n")
                    f.flush()
        with open(os.path.join(a.out, "vectors.jsonl"), "w") as f:
            for v in vectors:
                f.write(json.dumps(v) + "\n")
        n_dis = len([i for i in disagreements if i >= 0])
        summary.update({"compared": compared, "agreeing": compared - n_dis, "disagreeing": n_dis,
                        "baseline_agrees": base_ok, "probe_timeouts": timeouts, "distinct_shrunk": len(vectors) - 1,
                        "driver_outcomes": dict(sorted(outcomes.items(), key=lambda kv: -kv[1])),
                        "seconds": round(self.elapsed(), 1)})
        with open(os.path.join(a.out, "summary.json"), "w") as f:
            json.dump(summary, f, indent=1)
        self.log("driver outcomes: " + ", ".join("%s %d" % kv for kv in summary["driver_outcomes"].items()))
        self.log("generated %d, compared %d, agreeing %d, disagreeing %d (%d distinct after shrinking)%s" % (
            a.count, compared, compared - n_dis, n_dis, len(vectors) - 1, "" if base_ok else "; BASELINE DISAGREES"))
        if a.fail_on_disagreement and compared < a.count:
            self.log("FAIL: only %d of %d values were compared before the deadline" % (compared, a.count))
        return 1 if a.fail_on_disagreement and (n_dis or not base_ok or compared < a.count) else 0

    def close(self):
        self.log_file.close()
        shutil.rmtree(self.tmp, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    ap.add_argument("--gpumap", required=True, help="the gpumap binary")
    ap.add_argument("--probe", required=True, help="difftest_probe (tools/difftest/difftest_probe.c)")
    ap.add_argument("--cuda-lib", default="libcuda.so.1", help="the driver library the probe loads")
    ap.add_argument("--simulate", help="a simulated host file: gpumap gets --simulate, the probe GPUMAP_FAKE_HOST")
    ap.add_argument("--seed", default="1")
    ap.add_argument("--count", type=int, default=5000)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--deadline", type=float, default=540, help="seconds for the whole run (default 540)")
    ap.add_argument("--reserve", type=float, default=20, help="seconds kept for writing the results")
    ap.add_argument("--shrink-each", type=float, default=25, help="seconds at most per disagreement")
    ap.add_argument("--max-shrink", type=int, default=40, help="disagreements shrunk at most (the rest are listed)")
    ap.add_argument("--probe-timeout", type=float, default=60)
    ap.add_argument("--out", default="difftest-out")
    ap.add_argument("--fail-on-disagreement", action="store_true",
                    help="exit 1 when any value disagreed or the deadline left some uncompared (CI)")
    a = ap.parse_args()
    h = Harness(a)
    try:
        return h.run()
    except (HarnessError, OSError, subprocess.SubprocessError, json.JSONDecodeError) as e:
        h.log("HARNESS FAILED: %s" % e)
        return 2
    finally:
        h.close()


if __name__ == "__main__":
    sys.exit(main())
