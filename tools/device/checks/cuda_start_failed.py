"""On a GPU host with the real torch (issue 52 item 5): a process whose CUDA start already failed.
A child python starts with CUDA_VISIBLE_DEVICES="" (Ray's value for a task that asked for no GPU),
touches torch.cuda (cuInit fails: no device), then sets the variable to "0", as the reported program
did, and shows torch's answers and gpumap's (the Python check, then `gpumap ps` on the still-running
child).  Creates no CUDA context beyond what torch's failed start does (none: cuInit fails first).
Prints plain lines to paste into docs/validation/; exits 1 on a failure.
usage: GPUMAP_BUILD_DIR=build PYTHONPATH=python python3 tools/device/checks/cuda_start_failed.py [gpumap binary]"""
import ctypes
import json
import os
import subprocess
import sys
import time

CHILD = r"""
import ctypes, json, os, sys, time
out = {"start": os.environ.get("CUDA_VISIBLE_DEVICES")}
def libcuda_mapped():
    with open("/proc/self/maps") as f:
        return any(l.rstrip().rsplit("/", 1)[-1].startswith("libcuda.so") for l in f)
import torch
out["torch"] = torch.__version__
out["libcuda_after_import"] = libcuda_mapped()
out["is_available_1"] = torch.cuda.is_available()
out["device_count_1"] = torch.cuda.device_count()
out["libcuda_after_touch"] = libcuda_mapped()
os.environ["CUDA_VISIBLE_DEVICES"] = "0"
out["now"] = "0"
out["is_available_2"] = torch.cuda.is_available()
out["device_count_2"] = torch.cuda.device_count()
out["c_count_2"] = torch._C._cuda_getDeviceCount()
out["initialized"] = torch.cuda._initialized
out["cached_device_count"] = getattr(torch.cuda, "_cached_device_count", "absent")
try:
    torch.zeros(1, device="cuda")
    out["tensor"] = "ok"
except Exception as e:
    out["tensor"] = type(e).__name__ + ": " + str(e).splitlines()[0]
# The driver's own answer, without cuInit: the library already loaded, asked with RTLD_NOLOAD.
try:
    lib = ctypes.CDLL("libcuda.so.1", mode=os.RTLD_NOLOAD | os.RTLD_LAZY)
    n = ctypes.c_int(-1)
    out["cuDeviceGetCount_rc"] = lib.cuDeviceGetCount(ctypes.byref(n))
except OSError as e:
    out["cuDeviceGetCount_rc"] = "libcuda not loaded: " + str(e)
import gpumap
out["gpumap_state"] = gpumap.cuda_start_state()
f = gpumap.cuda_start_failed()
out["gpumap_finding"] = f.to_dict() if f else None
d = gpumap.devices()
out["devices_findings"] = [x.id for x in d.findings]
out["devices_predicted"] = [x["nvml_index"] for x in d]
out["diagnose_findings"] = [x.id for x in gpumap.diagnose().findings]
print(json.dumps(out), flush=True)
sys.stdin.readline()  # stay alive for `gpumap ps`
"""

results = []


def check(name, ok, detail=""):
    results.append(ok)
    print(("PASS " if ok else "FAIL ") + name + (f"  [{detail}]" if detail else ""), flush=True)


def main():
    gpumap_bin = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.environ.get("GPUMAP_BUILD_DIR", "build"), "gpumap")
    env = dict(os.environ, CUDA_VISIBLE_DEVICES="", RAY_ADDRESS="127.0.0.1:6379")
    p = subprocess.Popen([sys.executable, "-c", CHILD], env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    try:
        line = p.stdout.readline()
        if not line:
            print("child failed:", p.stderr.read())
            return 1
        out = json.loads(line)
        for k in ("torch", "start", "now", "libcuda_after_import", "is_available_1", "device_count_1", "libcuda_after_touch",
                  "is_available_2", "device_count_2", "c_count_2", "initialized", "cached_device_count", "tensor",
                  "cuDeviceGetCount_rc", "devices_predicted", "devices_findings", "diagnose_findings"):
            print(f"  {k}: {out[k]!r}")
        print("  gpumap_state:", json.dumps(out["gpumap_state"]))
        print("  gpumap_finding:", json.dumps(out["gpumap_finding"]))
        check("torch's first touch under \"\" sees no GPU", out["is_available_1"] is False and out["device_count_1"] == 0)
        # A fact about torch, not a verdict on gpumap: torch 2.11 (H100, driver 580.159.04, 2026-12-07)
        # maps libcuda.so.1 at `import torch`; older builds only at the first CUDA touch.  gpumap's
        # check asks the driver (cuDeviceGetCount: not initialised), not whether libcuda is mapped.
        print("NOTE libcuda mapped by `import torch`:", out["libcuda_after_import"])
        check("libcuda is mapped after the failed touch", out["libcuda_after_touch"] is True)
        check("after setting \"0\": is_available() stays False", out["is_available_2"] is False)
        check("after setting \"0\": the C++ count stays 0", out["c_count_2"] == 0)
        check("the driver answers not initialised (no cuInit asked)", out["cuDeviceGetCount_rc"] != 0,
              str(out["cuDeviceGetCount_rc"]))
        f = out["gpumap_finding"] or {}
        check("gpumap.cuda_start_failed() names it", f.get("id") == "cuda-start-failed", f.get("message", "")[:120])
        check("devices() and diagnose() put it first",
              out["devices_findings"][:1] == ["cuda-start-failed"] and out["diagnose_findings"][:1] == ["cuda-start-failed"])
        # Another process's view: `gpumap ps` on the live child (no GPU context: NVML lists nothing).
        r = subprocess.run([gpumap_bin, "ps", "--all", "--json"], capture_output=True, text=True, timeout=60)
        print(f"  gpumap ps --all --json: rc {r.returncode}; child pid {p.pid} listed: {str(p.pid) in r.stdout}")
        for l in r.stdout.splitlines()[:40]:
            if str(p.pid) in l or "cuda-start-failed" in l:
                print("   ", l[:300])
        if r.returncode not in (0, 1):
            print("   stderr:", r.stderr[:500])
    finally:
        try:
            p.stdin.write("\n")
            p.stdin.flush()
        except OSError:
            pass
        p.wait(timeout=30)
    print(f"{sum(results)}/{len(results)} passed")
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
