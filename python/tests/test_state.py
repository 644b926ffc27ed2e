"""State and versions (issue 52 item 5): a CUDA start that already failed in this process, and the
versions of frameworks already imported, read without starting or importing anything.

The failed start is real: a child interpreter loads the fake libcuda with ctypes and calls cuInit
under CUDA_VISIBLE_DEVICES="" (Ray's value for a task that asked for no GPU), which fails as the
driver's does (CUDA_ERROR_NO_DEVICE); the child then sets the variable, as the program in the report
did, and asks gpumap.
"""

import json
import os
import shlex
import subprocess
import sys
import unittest

from test_gpumap import BUILD, PYTHON_DIR, SimulatedHost

import gpumap

HOSTS = os.path.join(PYTHON_DIR, "..", "hosts")

CHILD = r"""
import ctypes, json, os, sys, warnings
import gpumap
now = sys.argv[1]
cuda = ctypes.CDLL(os.path.join(os.environ["GPUMAP_BUILD_DIR"], "sim", "libcuda.so.1"))
out = {"before": gpumap.cuda_start_failed() is None, "cuInit": cuda.cuInit(0)}
os.environ["CUDA_VISIBLE_DEVICES"] = now
out["state"] = gpumap.cuda_start_state()
f = gpumap.cuda_start_failed()
out["finding"] = f.to_dict() if f else None
with warnings.catch_warnings(record=True) as w:
    warnings.simplefilter("always")
    d = gpumap.devices()
    out["warnings"] = [str(x.message) for x in w]
out["device_findings"] = [x.id for x in d.findings]
diag = gpumap.diagnose()
out["diagnose_findings"] = [x.id for x in diag.findings]
out["ok"] = diag.ok
out["versions"] = gpumap.framework_versions()
print(json.dumps(out))
"""


class CudaStartFailed(SimulatedHost):
    host = "dgx8"

    def run_child(self, start, now, extra_env=None):
        env = dict(os.environ, PYTHONPATH=PYTHON_DIR, GPUMAP_FAKE_HOST=os.path.join(HOSTS, self.host + ".json"))
        env.pop("CUDA_VISIBLE_DEVICES", None)
        if start is not None:
            env["CUDA_VISIBLE_DEVICES"] = start
        env.update(extra_env or {})
        r = subprocess.run([sys.executable, "-c", CHILD, now], env=env, capture_output=True, text=True, timeout=120)
        self.assertEqual(r.returncode, 0, r.stderr)
        return json.loads(r.stdout)

    def test_a_failed_start_is_said_first_and_the_prediction_not_trusted(self):
        out = self.run_child("", "0", {"RAY_ADDRESS": "127.0.0.1:6379"})
        self.assertTrue(out["before"])  # libcuda not loaded yet: nothing to say
        self.assertEqual(out["cuInit"], 100)  # CUDA_ERROR_NO_DEVICE, as the driver under ""
        st = out["state"]
        self.assertTrue(st["libcuda_loaded"])
        self.assertFalse(st["initialized"])
        self.assertEqual((st["start"], st["now"]), ("", "0"))
        f = out["finding"]
        self.assertEqual(f["id"], "cuda-start-failed")
        self.assertEqual(f["severity"], "error")
        self.assertIn('ran with CUDA_VISIBLE_DEVICES "" (at start) and failed', f["message"])
        self.assertIn("num_gpus=1", f["note"])  # under Ray: Ray's knob
        self.assertTrue(f["fix"].startswith("CUDA_VISIBLE_DEVICES=0 "), f["fix"])
        self.assertEqual(out["device_findings"][0], "cuda-start-failed")
        self.assertEqual(out["diagnose_findings"][0], "cuda-start-failed")
        self.assertFalse(out["ok"])
        self.assertTrue(any("already failed to start" in w for w in out["warnings"]), out["warnings"])
        self.assertEqual(out["versions"], {})  # nothing imported, nothing imported by gpumap either

    def test_the_fix_pasted_starts_cuda_under_the_variable(self):
        # The fix relaunches with the variable set at start: cuInit then succeeds, nothing to say.
        out = self.run_child("0", "0")
        self.assertEqual(out["cuInit"], 0)
        self.assertIsNone(out["finding"])
        self.assertNotIn("cuda-start-failed", out["device_findings"])
        self.assertNotIn("cuda-start-failed", out["diagnose_findings"])

    def test_an_unchanged_variable_is_not_this_finding(self):
        out = self.run_child("", "")
        self.assertEqual(out["cuInit"], 100)
        self.assertIsNone(out["finding"])


class FrameworkVersions(SimulatedHost):
    host = "h200x2"

    def test_an_old_torch_is_told_by_diagnose_and_the_fix_pasted_clears_it(self):
        class OldTorch:
            __version__ = "1.13.1+cu117"
        saved = sys.modules.get("torch")
        sys.modules["torch"] = OldTorch()
        try:
            os.environ["CUDA_VISIBLE_DEVICES"] = "GPU-a04764cc-0f61-5fc1-4301-0cd910d5610a"  # h200x2's GPU 1
            d = gpumap.diagnose()
            f = [x for x in d.findings if x.id == "framework-cannot-parse-uuid"]
            self.assertEqual(len(f), 1, [x.id for x in d.findings])
            self.assertEqual(f[0].severity, "error")
            self.assertIn("torch 1.13.1+cu117", f[0].message)
            words = shlex.split(f[0].fix.split("  #")[0])
            self.assertEqual(words[0], "export")
            for w in words[1:]:
                k, v = w.split("=", 1)
                os.environ[k] = v
            again = gpumap.diagnose()
            self.assertEqual([x.id for x in again.findings if x.severity != "info"], [])
            self.assertEqual([x["nvml_index"] for x in again.devices], [1])
        finally:
            if saved is None:
                sys.modules.pop("torch", None)
            else:
                sys.modules["torch"] = saved


class Judged(unittest.TestCase):
    def state(self, **kw):
        s = {"libcuda_loaded": True, "initialized": False, "start_known": True, "start": "", "now": "0",
             "torch": None, "under_ray": False}
        s.update(kw)
        return s

    def test_rule(self):
        f = gpumap._cuda_start_failed_finding(self.state(), ["python", "train.py", "--lr", "1e-4"])
        self.assertEqual(f["fix"], "CUDA_VISIBLE_DEVICES=0 python train.py --lr 1e-4")
        self.assertIn("remove the late assignment", f["note"])
        torch = {"version": "2.5.1", "initialized": False, "cached_device_count": None, "bad_fork": False}
        self.assertIn("torch.cuda.is_available() stays False",
                      gpumap._cuda_start_failed_finding(self.state(torch=torch), ["p"])["message"])
        for quiet in (dict(libcuda_loaded=False), dict(initialized=True), dict(now=""), dict(start_known=False)):
            self.assertIsNone(gpumap._cuda_start_failed_finding(self.state(**quiet), ["p"]), quiet)
        # Unset now: no line to paste.
        self.assertEqual(gpumap._cuda_start_failed_finding(self.state(now=None), ["p"])["fix"], "")

    def test_maps(self):
        maps = ("7f00-7f01 r-xp 00000000 08:01 123 /usr/lib/x86_64-linux-gnu/libcuda.so.580.159.04\n"
                "7f02-7f03 r-xp 00000000 08:01 124 /usr/lib/libcudart.so.12\n")
        self.assertTrue(gpumap._libcuda_in_maps(maps))
        self.assertFalse(gpumap._libcuda_in_maps(maps.splitlines()[1]))
        self.assertFalse(gpumap._libcuda_in_maps("7f00-7f01 rw-p 00000000 00:00 0 \n"))

    def test_versions_read_only_what_is_imported(self):
        class Fake:
            __version__ = "1.13.1"
        sys.modules["vllm"] = Fake()
        try:
            self.assertEqual(gpumap.framework_versions().get("vllm"), "1.13.1")
            self.assertNotIn("deepspeed", gpumap.framework_versions())
        finally:
            del sys.modules["vllm"]


if __name__ == "__main__":
    unittest.main()
