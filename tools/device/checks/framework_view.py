#!/usr/bin/env python3
"""Issue 35 on the GPU host: what the frameworks make of CUDA_VISIBLE_DEVICES / CUDA_DEVICE_ORDER,
beside the driver's own answer, for the issue's cases and a seeded set from tools/difftest's grammar.

For each value, in short-lived child processes with exactly that environment:
  - the driver: tools/difftest/difftest_probe.c (cuInit + device queries; no context, no memory);
  - torch, twice: with PYTORCH_NVML_BASED_CUDA_CHECK=1 and without it.  Each child calls, in this
    order, torch.cuda._parse_visible_devices(), _device_count_nvml(), device_count() (before CUDA
    starts), is_available(), torch._C._cuda_getDeviceCount() (the driver through the runtime),
    device_count() again and get_device_properties(i).uuid for every i; any exception is recorded
    as "Type: message" in place of the value;
  - accelerate's get_max_memory() keys (only in the child without the NVML check: it calls
    mem_get_info, which makes a context on each GPU torch shows; the child exits right after).
Then, once: nvidia-ml-py's nvmlDeviceGetHandleByUUID on the full UUID, short prefixes, other cases
(no torch in that child: vLLM's failure, vllm#51677), and pytorch#159641's trap (the device count
fixed by torch._C._cuda_getDeviceCount() before CUDA_VISIBLE_DEVICES changes in os.environ).
torch's own source of the functions modelled is copied into the log for the record.

usage (repo root, on the GPU host): python3 tools/device/checks/framework_view.py [COUNT] [SEED]
writes $OUT/framework.log and $OUT/framework-vectors.jsonl (the tests/vectors/framework/ format:
one JSON object a line, the first the baseline).  JOBS (default nproc-2), DEADLINE (s, default 420).
"""
import concurrent.futures as cf
import inspect
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "difftest"))
import gen  # noqa: E402

OUT = os.environ.get("OUT") or tempfile.mkdtemp(prefix="framework-view-")
COUNT = int(sys.argv[1]) if len(sys.argv) > 1 else 150
SEED = sys.argv[2] if len(sys.argv) > 2 else "35"
JOBS = int(os.environ.get("JOBS", max(2, (os.cpu_count() or 4) - 2)))
DEADLINE = time.monotonic() + float(os.environ.get("DEADLINE", "420"))
LOG = open(os.path.join(OUT, "framework.log"), "w")


def log(*a):
    s = " ".join(str(x) for x in a)
    print(s, flush=True)
    LOG.write(s + "\n")
    LOG.flush()


TORCH_CHILD = r'''
import json, os, sys
r = {}
def attempt(name, f):
    try:
        r[name] = f()
    except BaseException as e:
        r[name] = {"raises": type(e).__name__ + ": " + str(e)[:300]}
import torch
import torch.cuda as tc
def text(x):  # an entry that is not UTF-8 (surrogate-escaped by os.getenv) as {"hex": ...}: JSON stays UTF-8
    try:
        x.encode("utf-8")
        return x
    except UnicodeEncodeError:
        return {"hex": x.encode("utf-8", "surrogateescape").hex()}
attempt("parse", lambda: [x if isinstance(x, int) else text(x) if isinstance(x, str) else repr(x) for x in tc._parse_visible_devices()])
attempt("device_count_nvml", tc._device_count_nvml)
attempt("device_count", tc.device_count)
attempt("is_available", tc.is_available)
attempt("cuda_getDeviceCount", torch._C._cuda_getDeviceCount)
attempt("device_count_after", tc.device_count)
def uuids():
    out = []
    for i in range(tc.device_count()):
        try:
            out.append("GPU-" + str(tc.get_device_properties(i).uuid))
        except BaseException as e:
            out.append({"raises": type(e).__name__ + ": " + str(e)[:300]})
    return out
attempt("uuids", uuids)
if os.environ.get("FV_ACCELERATE") == "1":
    def keys():
        from accelerate.utils import get_max_memory
        m = get_max_memory()
        return [[k if isinstance(k, (int, str)) else repr(k), v] for k, v in m.items()]
    attempt("accelerate_max_memory", keys)
print("FVJSON" + json.dumps(r))
'''


def child_env(cvd, cdo, extra):
    env = {k.encode(): v.encode() for k, v in os.environ.items()
           if k not in ("CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER", "PYTORCH_NVML_BASED_CUDA_CHECK")}
    for name, v in (("CUDA_VISIBLE_DEVICES", cvd), ("CUDA_DEVICE_ORDER", cdo)):
        if v is not None:
            env[name.encode()] = gen.encode(v)
    for k, v in extra.items():
        env[k.encode()] = v.encode()
    return env


def run(argv, cvd, cdo, extra, timeout=40):
    try:
        p = subprocess.run(argv, env=child_env(cvd, cdo, extra), capture_output=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, "timeout"
    return p, None


def driver(probe, cvd, cdo):
    p, err = run([probe], cvd, cdo, {}, timeout=25)
    if err:
        return {"error": "TIMEOUT", "uuids": []}
    if p.returncode < 0:
        return {"error": "DRIVER_CRASH", "uuids": []}
    lines = p.stdout.decode(errors="replace").splitlines()
    if lines and lines[0].startswith("error"):
        return {"error": lines[0].split()[1], "uuids": []}
    return {"error": None, "uuids": [l.split()[1] for l in lines if l.startswith("uuid ")]}


def torch_child(cvd, cdo, nvml_check, accelerate):
    extra = {"FV_ACCELERATE": "1" if accelerate else "0"}
    if nvml_check:
        extra["PYTORCH_NVML_BASED_CUDA_CHECK"] = "1"
    p, err = run([sys.executable, "-c", TORCH_CHILD], cvd, cdo, extra)
    if err:
        return {"child": "timeout"}
    out = p.stdout.decode(errors="replace")
    for line in out.splitlines():
        if line.startswith("FVJSON"):
            return json.loads(line[6:])
    return {"child": "exit %d" % p.returncode, "stderr": p.stderr.decode(errors="replace")[-400:]}


def measure(probe, cvd, cdo, found_by):
    if time.monotonic() > DEADLINE:
        return None
    d = driver(probe, cvd, cdo)
    t0 = torch_child(cvd, cdo, nvml_check=False, accelerate=True)
    t1 = torch_child(cvd, cdo, nvml_check=True, accelerate=False)
    v = json.loads(gen.to_batch_line(cvd, cdo))
    v.update({"driver": d, "torch": t0, "torch_nvml_check": t1, "found_by": found_by})
    return v


def curated(uuid):
    h = uuid[4:].replace("-", "")
    cases = [None, "", "0", "1", "-1", "0,0", "0,1", "1,0", "0,,1", ",0", "0,5", "5", "5,0", "00", "+0", "+",
             "-", "+1", "-0", "--0", " 0", "0 ", "\u00a00", "\u0660", "\u00b2", "0x0", "1e0", "0a", "a", "all",
             "none", "NoDevFiles", "void", "0,-1", "0,a", "4294967296",
             uuid, uuid.upper(), "GPU-" + h[:8], "GPU-" + h[:4], "GPU-" + h[:8].upper(), "GPU-" + h, uuid + "x",
             uuid + ",0", "0," + uuid, uuid + "," + uuid, "GPU-", "GPU--", "GPU-deadbeef", "MIG-" + uuid[4:],
             "MIG-" + h[:8], "MIG-GPU-" + uuid[4:] + "/0/0", " " + uuid, "gpu-" + uuid[4:],
             uuid + ",GPU-deadbeef", "GPU-" + h[:8] + "," + uuid, uuid[4:]]
    out = [(c, None, "issue 35 case") for c in cases]
    out += [("0", "PCI_BUS_ID", "issue 35 case"), ("0", "FASTEST_FIRST", "issue 35 case"),
            ("0", "garbage", "issue 35 case"), (None, "garbage", "issue 35 case"), ("", "PCI_BUS_ID", "issue 35 case")]
    return out


NVML_CHILD = r'''
import json, sys
import pynvml as n
n.nvmlInit()
full = n.nvmlDeviceGetUUID(n.nvmlDeviceGetHandleByIndex(0))
full = full.decode() if isinstance(full, bytes) else full
h = full[4:].replace("-", "")
r = {"nvml_version": str(getattr(n, "__version__", "?")), "driver": str(n.nvmlSystemGetDriverVersion()), "full": full}
for name, key in [("full", full), ("short_prefix_8", "GPU-" + h[:8]), ("short_prefix_dash", full[:13]),
                  ("upper", full.upper()), ("no_dashes", "GPU-" + h), ("no_GPU_word", full[4:]),
                  ("trailing_x", full + "x"), ("MIG_word", "MIG-" + full[4:])]:
    try:
        hd = n.nvmlDeviceGetHandleByUUID(key)
        u = n.nvmlDeviceGetUUID(hd)
        r[name] = {"key": key, "found": u.decode() if isinstance(u, bytes) else u}
    except Exception as e:
        r[name] = {"key": key, "raises": type(e).__name__ + ": " + str(e)}
print("FVJSON" + json.dumps(r))
'''

TRAP_CHILD = r'''
import json, os
os.environ["CUDA_VISIBLE_DEVICES"] = os.environ["FV_FIRST"]
import torch
r = {"first": os.environ["CUDA_VISIBLE_DEVICES"]}
def attempt(name, f):
    try:
        r[name] = f()
    except BaseException as e:
        r[name] = {"raises": type(e).__name__ + ": " + str(e)[:300]}
attempt("getDeviceCount_first", torch._C._cuda_getDeviceCount)
os.environ["CUDA_VISIBLE_DEVICES"] = os.environ["FV_THEN"]
r["then"] = os.environ["CUDA_VISIBLE_DEVICES"]
attempt("getDeviceCount_then", torch._C._cuda_getDeviceCount)
attempt("device_count_then", torch.cuda.device_count)
attempt("is_available_then", torch.cuda.is_available)
def where():
    t = torch.zeros(1, device="cuda")
    return "GPU-" + str(torch.cuda.get_device_properties(t.device.index).uuid)
attempt("tensor_on", where)
attempt("device_count_after_init", torch.cuda.device_count)
print("FVJSON" + json.dumps(r))
'''


def child_json(code, extra, cvd=None):
    p, err = run([sys.executable, "-c", code], cvd, None, extra, timeout=60)
    if err:
        return {"child": err}
    for line in p.stdout.decode(errors="replace").splitlines():
        if line.startswith("FVJSON"):
            return json.loads(line[6:])
    return {"child": "exit %d" % p.returncode, "stderr": p.stderr.decode(errors="replace")[-600:]}


def main():
    here = os.getcwd()
    probe = os.path.join(tempfile.mkdtemp(prefix="fv-"), "difftest_probe")
    subprocess.run(["cc", "-O2", "-o", probe, os.path.join(HERE, "..", "difftest", "difftest_probe.c"), "-ldl"], check=True)
    smi = subprocess.run(["nvidia-smi", "--query-gpu=index,uuid,pci.bus_id,name,driver_version,memory.total",
                          "--format=csv,noheader"], capture_output=True, text=True).stdout.strip()
    log("== %s %s, %d CPUs, %d jobs, seed %s, %d generated" % (time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                                                              os.uname().nodename, os.cpu_count(), JOBS, SEED, COUNT))
    log("== nvidia-smi:", smi)
    uuid = smi.split(",")[1].strip()
    driver_version = smi.split(",")[4].strip()
    import importlib.metadata as md
    versions = {}
    for pkg in ("torch", "accelerate", "transformers", "nvidia-ml-py"):
        try:
            versions[pkg] = md.version(pkg)
        except Exception as e:
            versions[pkg] = None
    log("== versions:", json.dumps(versions))
    import torch.cuda as tc  # only to copy the source: no CUDA call in this process
    for f in ("_parse_visible_devices", "_device_count_nvml", "_transform_uuid_to_ordinals", "_raw_device_uuid_nvml",
              "_raw_device_count_nvml", "device_count", "is_available", "_nvml_based_avail"):
        try:
            log("== torch source of torch.cuda.%s:\n%s" % (f, inspect.getsource(getattr(tc, f))))
        except Exception as e:
            log("== torch source of torch.cuda.%s: %r" % (f, e))

    log("== nvidia-ml-py nvmlDeviceGetHandleByUUID:", json.dumps(child_json(NVML_CHILD, {})))
    for first, then in (("0", ""), ("", "0"), ("0", "GPU-deadbeef"), ("0", "1")):
        log("== pytorch#159641 trap, first %r then %r:" % (first, then),
            json.dumps(child_json(TRAP_CHILD, {"FV_FIRST": first, "FV_THEN": then})))

    host = gen.Host([uuid])
    cases = curated(uuid)
    cases += [(c[0], c[1], "difftest grammar seed %s case %d" % (SEED, i))
              for i, c in ((i, gen.case(SEED, i, host)) for i in range(COUNT))]
    vpath = os.path.join(OUT, "framework-vectors.jsonl")
    done = 0
    differ = 0
    t = time.monotonic()
    with cf.ThreadPoolExecutor(JOBS) as pool, open(vpath, "w") as vf:
        results = list(pool.map(lambda c: measure(probe, *c), cases))
        for v in results:
            if v is None:
                continue
            v.update({"driver_version": driver_version, "torch_version": versions["torch"],
                      "accelerate_version": versions["accelerate"], "host": "1 x NVIDIA H200"})
            vf.write(json.dumps(v) + "\n")
            done += 1
            dc = v["torch"].get("device_count")
            drv = None if v["driver"]["error"] else len(v["driver"]["uuids"])
            if dc != (drv or 0):
                differ += 1
                log("differs: CVD=%r CDO=%r driver=%s torch.device_count()=%s" % (
                    (v.get("CUDA_VISIBLE_DEVICES") or v.get("CUDA_VISIBLE_DEVICES_hex") or "")[:80],
                    v.get("CUDA_DEVICE_ORDER"), v["driver"]["error"] or drv, dc))
    log("== %d of %d cases measured in %.0f s; torch.device_count() differs from the driver's count on %d"
        % (done, len(cases), time.monotonic() - t, differ))
    log("== vectors:", vpath)


if __name__ == "__main__":
    main()
