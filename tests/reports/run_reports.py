#!/usr/bin/env python3
"""The corpus of real public reports (issue 52), run through the real gpumap binary and the Python
package.  Each tests/reports/cases/NAME.json is one report (schema: tests/reports/README.md): a
simulated host, the reporter's environment, a process table or a Python scenario where the case
needs one, and the cause the thread confirmed.  Every case is run, none skipped:

  - `gpumap doctor --json` (environment cases), `gpumap ps --json` (a process table, over a fixture
    /proc), a child Python that imports python/gpumap (a Python scenario: CUDA started under one
    environment, the variables changed after), `gpumap map --json` (an expected device count);
  - the cause must be named: the finding id at the expected severity or above (by `explain --json`
    too, for a doctor case), or the renumbering line `cuda:N = ... GPU M` in doctor's output
    (without -v), with `which M...`'s line giving those GPUs as cuda:0, 1, ... when pasted;
  - gpumap's fix for it, pasted (the `fix` line applied to the environment, as
    tests/cli_fixes_paste_test.cc does), must leave that finding at info or below;
  - the thread's own fix, as an environment (`fix_env`), must leave doctor with nothing above info
    (a check that the case is modelled right, not only that gpumap says something).

Outcomes: right, partial (the cause named but a check failed, or another warning named instead),
wrong (a finding the case lists as wrong fired), silent (nothing above info), error (the run
broke).  tests/reports/expected.json says per case `right`, `known-gap` (with the reason) or
`out-of-scope`; only a case expected right that is not right fails (a regression), as does a case
file without an entry or the reverse.  Prints the hit rate and the gaps.

Usage: run_reports.py --gpumap BIN --build DIR [--source DIR] [--jobs N] [--only ID ...] [--json OUT]
"""

import argparse
import concurrent.futures
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

SEVERITY = {"info": 0, "warning": 1, "error": 2}
HERE = os.path.dirname(os.path.abspath(__file__))
CLASSES = {"renumbering", "ranks", "containers", "keyword", "state-versions", "misspelled", "processes",
           "python-messages", "set-too-late", "order", "odd-value"}

# The Python child: fake modules (a framework's version), start the simulated CUDA under the
# environment this process started with, change os.environ, then ask gpumap.diagnose().
CHILD = r"""
import ctypes, json, os, sys, types, warnings
spec = json.loads(sys.argv[1])
for name, version in spec.get("modules", {}).items():
    m = types.ModuleType(name); m.__version__ = version; sys.modules[name] = m
import gpumap
if spec.get("cuda_started"):
    cuda = ctypes.CDLL(os.path.join(os.environ["GPUMAP_BUILD_DIR"], "sim", "libcuda.so.1"))
    cuda.cuInit(0)
for k, v in spec.get("now_env", {}).items():
    if v is None: os.environ.pop(k, None)
    else: os.environ[k] = v
out = {}
with warnings.catch_warnings(record=True) as w:
    warnings.simplefilter("always")
    try:
        d = gpumap.diagnose()
        out["findings"] = [f.to_dict() for f in d.findings]
        out["report"] = str(d)
    except gpumap.GpumapError as e:
        out["findings"] = []
        out["raised"] = {"type": type(e).__name__, "message": str(e)}
    try:  # devices() warns (RuntimeWarning) where diagnose() reports: item 8's one-line check reads both
        gpumap.devices()
    except gpumap.GpumapError as e:
        out.setdefault("raised", {"type": type(e).__name__, "message": str(e)})
    out["warnings"] = [str(x.message) for x in w]
print(json.dumps(out))
"""


def load_cases(source):
    cases = []
    folder = os.path.join(source, "tests", "reports", "cases")
    for name in sorted(os.listdir(folder)):
        if name.endswith(".json"):
            with open(os.path.join(folder, name)) as f:
                c = json.load(f)
            if c.get("id") != name[:-5]:
                raise SystemExit(f"{name}: its id is {c.get('id')!r}, not the file's name")
            cases.append(c)
    return cases


def check_schema(c):
    """Problems with a case file (an empty list when it is well formed)."""
    bad = []
    for key in ("id", "link", "project", "title", "class", "cause", "resolved_by", "host"):
        if not c.get(key):
            bad.append(f"missing {key}")
    if not str(c.get("link", "")).startswith("https://"):
        bad.append("link is not an https address")
    if c.get("class") not in CLASSES:
        bad.append(f"class {c.get('class')!r} is not one of {sorted(CLASSES)}")
    if "out_of_scope" not in c:
        e = c.get("expect")
        if not isinstance(e, dict) or not ({"finding", "mapping", "map_devices"} & set(e)):
            bad.append("expect needs finding, mapping or map_devices (or the case is out_of_scope with a reason)")
        elif "finding" in e and e.get("severity") not in SEVERITY:
            bad.append("expect.severity must be info, warning or error")
    return bad


class Runner:
    def __init__(self, gpumap, build, source, tmp):
        self.gpumap, self.build, self.source, self.tmp = gpumap, build, source, tmp

    # -- the host -----------------------------------------------------------------------------
    def host_json(self, c):
        h = c["host"]
        if isinstance(h, str):
            with open(os.path.join(self.source, "hosts", h + ".json")) as f:
                return json.load(f)
        if "gpus" in h:  # a whole host file inline
            return json.loads(json.dumps(h))
        with open(os.path.join(self.source, "hosts", h["base"] + ".json")) as f:
            j = json.load(f)
        if "keep_gpus" in h:
            j["gpus"] = [j["gpus"][i] for i in h["keep_gpus"]]
            j.pop("cuda_default_order", None)
        j.update(h.get("set", {}))
        return j

    def case_dir(self, c):
        d = os.path.join(self.tmp, c["id"])
        os.makedirs(d, exist_ok=True)
        return d

    def write_host(self, c):
        """The host file (with the case's processes in NVML's lists) and, with processes, a fixture
        /proc for them."""
        d = self.case_dir(c)
        j = self.host_json(c)
        procs = c.get("processes", [])
        if procs:
            for g in j["gpus"]:
                g["processes"] = []
            root = os.path.join(d, "proc")
            os.makedirs(root, exist_ok=True)
            for p in procs:
                for idx, mib in p.get("gpus", []):
                    j["gpus"][idx]["processes"].append({"pid": p["pid"], "used_memory_mib": mib})
                pd = os.path.join(root, str(p["pid"]))
                os.makedirs(pd, exist_ok=True)
                with open(os.path.join(pd, "status"), "w") as f:
                    f.write(f"Name:\t{p['argv'][0]}\nUid:\t0\t0\t0\t0\nNSpid:\t{p['pid']}\nPPid:\t{p.get('ppid', 1)}\n")
                with open(os.path.join(pd, "cmdline"), "wb") as f:
                    f.write(b"".join(a.encode() + b"\0" for a in p["argv"]))
                with open(os.path.join(pd, "environ"), "wb") as f:
                    f.write(b"".join(f"{k}={v}".encode() + b"\0" for k, v in p.get("env", {}).items()))
        h = c["host"]
        if isinstance(h, dict) and "dev_nodes" in h:  # a device cgroup / container: only these /dev/nvidiaN
            dev = os.path.join(d, "dev")
            os.makedirs(dev, exist_ok=True)
            for minor in h["dev_nodes"]:
                open(os.path.join(dev, f"nvidia{minor}"), "w").close()
            j["dev_dir"] = dev
        path = os.path.join(d, "host.json")
        with open(path, "w") as f:
            json.dump(j, f, indent=1)
        return path

    # -- running ------------------------------------------------------------------------------
    def clean_env(self, c, extra):
        d = self.case_dir(c)
        home = os.path.join(d, "home")
        os.makedirs(home, exist_ok=True)
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": home,
               "GPUMAP_CACHE_DIR": os.path.join(d, "cache")}
        for k in ("LD_PRELOAD", "ASAN_OPTIONS", "UBSAN_OPTIONS"):
            if k in os.environ:
                env[k] = os.environ[k]
        env.update(extra)
        return env

    def gpumap_json(self, c, args, env, extra=None):
        r = subprocess.run([self.gpumap, *args], env=self.clean_env(c, dict(env, **(extra or {}))),
                           capture_output=True, text=True, timeout=120)
        try:
            return json.loads(r.stdout), r
        except ValueError:
            return None, r

    def python_child(self, c, host, start_env, spec):
        env = self.clean_env(c, dict(start_env, GPUMAP_SIMULATE=host, GPUMAP_FAKE_HOST=host,
                                     GPUMAP_BUILD_DIR=self.build, PYTHONPATH=os.path.join(self.source, "python"),
                                     PYTHONDONTWRITEBYTECODE="1"))
        r = subprocess.run([sys.executable, "-c", CHILD, json.dumps(spec)], env=env, capture_output=True,
                           text=True, timeout=120)
        try:
            return json.loads(r.stdout.strip().splitlines()[-1]), r
        except (ValueError, IndexError):
            return None, r


def findings_of(j, command):
    """Every finding of a doctor / ps answer (folded ones too), as (id, severity, fix, message)."""
    out = []

    def add(f):
        out.append((f.get("id"), f.get("severity", "info"), f.get("fix") or "", f.get("message", ""), f))
        for a in f.get("also", []) or []:
            # Folded into f: said with f, whose fix and note are the ones printed for it.
            out.append((a.get("id"), f.get("severity", "info"), f.get("fix") or "", a.get("message", ""),
                        dict(a, _folded=True, note=a.get("note") or f.get("note"))))

    if j is None:
        return out
    if command == "ps":
        for p in j.get("processes", []):
            for f in p.get("findings", []):
                add(dict(f, _pid=p.get("pid")))
        for g in j.get("gpus", []) or []:
            for f in g.get("findings", []) if isinstance(g, dict) else []:
                add(f)
        for f in j.get("findings", []) or []:
            add(f)
    else:
        for f in j.get("findings", []):
            add(f)
    return out


def apply_fix(line, env):
    """Applies a pasted line to a copy of env: `export A=1 B=2`, `unset A`, `A=1 B=2 command ...`
    (the assignments; the command is the user's own), statements joined by ; or &&, a trailing
    comment; quotes as bash reads them.  None when a statement sets nothing (a command alone)."""
    lex = shlex.shlex(line, posix=True, punctuation_chars=";&")
    lex.whitespace_split = True
    lex.commenters = "#"
    try:
        tokens = list(lex)
    except ValueError:
        return None
    statements, cur = [], []
    for t in tokens:
        if t in (";", "&&"):
            statements.append(cur)
            cur = []
        else:
            cur.append(t)
    statements.append(cur)
    env = dict(env)
    any_ = False
    for w in statements:
        if not w:
            continue
        any_ = True
        if w[0] == "unset":
            for k in w[1:]:
                env.pop(k, None)
            continue
        k = 1 if w[0] == "export" else 0
        assigned = False
        while k < len(w) and re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", w[k]):
            name, _, value = w[k].partition("=")
            env[name] = value
            assigned = True
            k += 1
        if not assigned:
            return None
    return env if any_ else None


def short(text, n=160):
    text = " ".join(text.split())
    return text if len(text) <= n else text[:n] + "…"


MAPPING = "cuda:{n} = (?:nvidia-smi )?GPU {m}(?![0-9])"


def judge(runner, c):
    """Runs one case; returns {outcome, detail, named: [...]}."""
    e = c["expect"]
    host = runner.write_host(c)
    env = dict(c.get("env", {}))
    command = e.get("command") or ("ps" if c.get("processes") else "doctor")
    detail = []
    one_line = None
    proc_env = {"GPUMAP_PROC_ROOT": os.path.join(runner.case_dir(c), "proc")} if c.get("processes") else {}

    # 1. The command the user would run.
    if command == "python":
        py = c["python"]
        out, r = runner.python_child(c, host, py.get("start_env", {}), py)
        if out is None:
            return {"outcome": "error", "detail": f"the Python child failed: {r.stderr[-2000:]}"}
        found = [(f["id"], f["severity"], f.get("fix") or "", f.get("message", ""), f) for f in out["findings"]]
        answer = out
        texts = out.get("warnings", []) + ([out["raised"]["message"]] if out.get("raised") else [])
        one_line = all("\n" not in t for t in texts)
    else:
        args = [command, "--json", "--simulate", host]
        answer, r = runner.gpumap_json(c, args, env, proc_env)
        if answer is None:
            return {"outcome": "error", "detail": f"gpumap {command} gave no JSON (exit {r.returncode}): {r.stderr[-1500:]}"}
        found = findings_of(answer, command)
    loud = sorted({f[0] for f in found if SEVERITY.get(f[1], 0) >= 1})
    ok = True
    named = False

    # 2. The cause named.
    if "finding" in e:
        want = SEVERITY[e["severity"]]
        hits = [f for f in found if f[0] == e["finding"]]
        at = [f for f in hits if SEVERITY.get(f[1], 0) >= want]
        named = bool(at)
        if not hits:
            ok = False
            detail.append(f"{e['finding']} not named")
        elif not at:
            ok = False
            detail.append(f"{e['finding']} named at {hits[0][1]}, expected {e['severity']} or above")
        if named and e.get("once_per_process"):
            per = {}
            for f in found:
                pid = f[4].get("_pid")
                if pid is not None and SEVERITY.get(f[1], 0) >= 1:
                    per.setdefault(pid, []).append(f[0])
            twice = {p: ids for p, ids in per.items() if len(ids) > 1}
            # A cause folded into another finding's `also` is said once, with that finding (what
            # `ps` prints as "also ..."): only findings of their own count, and a per-GPU finding
            # that folds the expected one per rank is that cause's one statement, not a repeat.
            shared = [f[0] for f in found if f[4].get("_pid") is None and SEVERITY.get(f[1], 0) >= 1
                      and f[0] in ("ranks-share-gpu",) and not f[4].get("_folded")
                      and not any(a.get("id") == e["finding"] for a in f[4].get("also", []) or [])]
            if twice or shared:
                ok = False
                detail.append(f"said more than once: per process {twice}, per GPU {shared}")
        # The advice the thread's fix needs (`--nproc-per-node` for more ranks than GPUs).
        if at and e.get("advice_contains"):
            advice = (at[0][2] or "") + " " + (at[0][4].get("note") or "")
            if e["advice_contains"] not in advice:
                ok = False
                detail.append(f"{e['finding']}'s fix and note do not say `{e['advice_contains']}`")
        # `explain` (the same environment in plain words) names the same cause.
        if at and command == "doctor":
            x, r = runner.gpumap_json(c, ["explain", "--json", "--simulate", host], env)
            if not any(f[0] == e["finding"] and SEVERITY.get(f[1], 0) >= want for f in findings_of(x, "doctor")):
                ok = False
                detail.append(f"explain does not name {e['finding']}")
        # 3. gpumap's fix, pasted.
        if at and at[0][2] and command == "doctor":
            fixed = apply_fix(at[0][2], env)
            if fixed is None:
                ok = False
                detail.append(f"the fix `{short(at[0][2])}` is not a line that sets variables")
            else:
                after, r = runner.gpumap_json(c, ["doctor", "--json", "--simulate", host], fixed)
                left = [f for f in findings_of(after, "doctor") if f[0] == e["finding"] and SEVERITY.get(f[1], 0) >= 1]
                if after is None or left:
                    ok = False
                    detail.append(f"the fix `{short(at[0][2])}` pasted leaves {e['finding']}")
        elif at and at[0][2] and command == "python":
            py = dict(c["python"])
            fixed = apply_fix(at[0][2], dict(py.get("start_env", {}), **{k: v for k, v in py.get("now_env", {}).items()}))
            if fixed is None:
                ok = False
                detail.append(f"the fix `{short(at[0][2])}` is not a line that sets variables")
            else:
                out2, r = runner.python_child(c, host, fixed, dict(py, now_env={}))
                if out2 is None or any(f["id"] == e["finding"] and SEVERITY.get(f["severity"], 0) >= 1 for f in out2["findings"]):
                    ok = False
                    detail.append(f"the fix `{short(at[0][2])}` pasted at start leaves {e['finding']}")
        elif at and not at[0][2] and not at[0][4].get("note"):
            ok = False
            detail.append(f"{e['finding']} has neither a fix nor a note")

    # 4. The renumbering line, without -v.
    if "mapping" in e:
        text = json.dumps(answer, ensure_ascii=False)
        missing = [f"cuda:{n} = GPU {m}" for n, m in e["mapping"] if not re.search(MAPPING.format(n=n, m=m), text)]
        if missing:
            ok = False
            detail.append("doctor does not show " + ", ".join(missing))
        else:
            named = True

        # The user who suspects it asks `which` for the nvidia-smi GPUs meant; its line, pasted,
        # must give them as cuda:0, cuda:1, ... in that order (`map` after the paste).
        meant = [m for _, m in sorted(e["mapping"])]
        w, r = runner.gpumap_json(c, ["which", *map(str, meant), "--json", "--simulate", host], env)
        form = (w or {}).get("uuid_form") or {}
        if not form:
            ok = False
            detail.append(f"which {' '.join(map(str, meant))} gave no line (exit {r.returncode})")
        else:
            m, r = runner.gpumap_json(c, ["map", "--json", "--simulate", host], dict(env, **form))
            got = [d.get("nvml_index") for d in ((m or {}).get("cuda") or {}).get("devices") or []]
            if got != meant:
                ok = False
                detail.append(f"which's line gives nvidia-smi GPUs {got}, not {meant}")

    # 5. How many devices CUDA gets.
    if "map_devices" in e:
        m, r = runner.gpumap_json(c, ["map", "--json", "--simulate", host], env)
        n = len(((m or {}).get("cuda") or {}).get("devices") or [])
        if n != e["map_devices"]:
            ok = False
            detail.append(f"map predicts {n} CUDA device(s), the report shows {e['map_devices']}")
        else:
            named = True

    # 6. The thread's own fix leaves doctor quiet (the case is modelled right).
    if "fix_env" in e and command == "doctor":
        after, r = runner.gpumap_json(c, ["doctor", "--json", "--simulate", host], dict(e["fix_env"]))
        loud_after = [f[0] for f in findings_of(after, "doctor") if SEVERITY.get(f[1], 0) >= 1]
        if after is None or loud_after:
            ok = False
            detail.append(f"the thread's fix {e['fix_env']} still leaves {loud_after or 'no answer'}")

    wrong = sorted(set(e.get("wrong_if", [])) & set(loud))
    if wrong:
        outcome = "wrong"
        detail.append("named the wrong cause: " + ", ".join(wrong))
    elif ok:
        outcome = "right"
    elif named or loud:
        outcome = "partial"
        if loud and not named:
            detail.append("said instead: " + ", ".join(loud))
    else:
        outcome = "silent"
    return {"outcome": outcome, "detail": "; ".join(detail), "said": loud, "python_one_line": one_line}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gpumap", required=True)
    ap.add_argument("--build", required=True)
    ap.add_argument("--source", default=os.path.dirname(os.path.dirname(HERE)))
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--only", nargs="*")
    ap.add_argument("--json", help="write every case's outcome here")
    a = ap.parse_args()

    cases = load_cases(a.source)
    with open(os.path.join(a.source, "tests", "reports", "expected.json")) as f:
        expected = json.load(f)
    problems = []
    ids = {c["id"] for c in cases}
    for c in cases:
        for b in check_schema(c):
            problems.append(f"{c['id']}: {b}")
        ex = expected.get(c["id"])
        if ex is None:
            problems.append(f"{c['id']}: no entry in expected.json")
        elif ex.get("status") not in ("right", "known-gap", "out-of-scope"):
            problems.append(f"{c['id']}: expected status {ex.get('status')!r}")
        elif ex["status"] != "right" and not ex.get("reason"):
            problems.append(f"{c['id']}: a {ex['status']} needs a reason")
        elif (ex["status"] == "out-of-scope") != ("out_of_scope" in c):
            problems.append(f"{c['id']}: out_of_scope in the case and expected.json disagree")
    for k in expected:
        if k not in ids:
            problems.append(f"expected.json names {k}, which has no case file")
    if a.only:
        cases = [c for c in cases if c["id"] in a.only]

    tmp = tempfile.mkdtemp(prefix="gpumap-reports-")
    runner = Runner(a.gpumap, a.build, a.source, tmp)
    results = {}
    try:
        todo = [c for c in cases if "out_of_scope" not in c]
        with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, a.jobs)) as pool:
            futs = {pool.submit(judge, runner, c): c for c in todo}
            for fut in concurrent.futures.as_completed(futs):
                c = futs[fut]
                try:
                    results[c["id"]] = fut.result()
                except Exception as ex:  # a broken case is reported, never skipped
                    results[c["id"]] = {"outcome": "error", "detail": f"{type(ex).__name__}: {ex}"}
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    counts = {k: 0 for k in ("right", "partial", "wrong", "silent", "error")}
    regressions, flipped = [], []
    by_class = {}
    for c in cases:
        ex = expected.get(c["id"], {})
        if "out_of_scope" in c:
            continue
        r = results[c["id"]]
        counts[r["outcome"]] += 1
        by_class.setdefault(c["class"], [0, 0])
        by_class[c["class"]][1] += 1
        by_class[c["class"]][0] += r["outcome"] == "right"
        if ex.get("status") == "right" and r["outcome"] != "right":
            regressions.append(f"{c['id']} ({c['link']}): was right, now {r['outcome']}: {r['detail']}")
        if ex.get("status") == "known-gap" and r["outcome"] == "right":
            flipped.append(c["id"])
    in_scope = sum(counts.values())
    oos = [c for c in cases if "out_of_scope" in c]
    print(f"gpumap on {len(cases)} real reports: {in_scope} in scope, {len(oos)} out of scope")
    print(f"  right {counts['right']}, partial {counts['partial']}, wrong {counts['wrong']}, "
          f"silent {counts['silent']}, error {counts['error']}  "
          f"(hit rate {100.0 * counts['right'] / max(1, in_scope):.0f} %)")
    for cls in sorted(by_class):
        print(f"  {cls:15s} {by_class[cls][0]:3d} / {by_class[cls][1]}")
    print("Cases not right:")
    for c in cases:
        if "out_of_scope" in c or results[c["id"]]["outcome"] == "right":
            continue
        ex = expected.get(c["id"], {})
        print(f"  {c['id']:24s} {results[c['id']]['outcome']:8s} [{ex.get('status')}: {ex.get('reason', '')}] {results[c['id']]['detail']}")
    print("Out of scope:")
    for c in oos:
        print(f"  {c['id']:24s} {c['out_of_scope']}")
    py = [r for r in results.values() if r.get("python_one_line") is not None]
    print(f"Item 8 (a Python warning or exception is one line), recorded apart from the outcomes: "
          f"{sum(r['python_one_line'] for r in py)} of {len(py)} Python scenarios")
    if flipped:
        print("Now right, still listed as known-gap in expected.json (flip them): " + ", ".join(sorted(flipped)))
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"counts": counts, "in_scope": in_scope, "out_of_scope": len(oos), "cases": results}, f, indent=1)
    for p in problems:
        print("CORPUS ERROR: " + p)
    for rg in regressions:
        print("REGRESSION: " + rg)
    return 1 if problems or regressions or counts["error"] else 0


if __name__ == "__main__":
    sys.exit(main())
