"""Live truth inside the program (issue 19): once CUDA runs in the process, every library call answers
from the running driver, and a variable set after that is reported (set-too-late).

The fake libcuda is loaded into a child interpreter with ctypes and started (cuInit) under one
environment; the child then changes os.environ, as a program that sets CUDA_VISIBLE_DEVICES after
`import torch` does.  Each scenario is a child: a started CUDA cannot be stopped in this interpreter.
"""

import json
import os
import shlex
import subprocess
import sys
import unittest

from test_gpumap import BUILD, PYTHON_DIR, SimulatedHost

HOSTS = os.path.join(PYTHON_DIR, "..", "hosts")

# The child: start the fake CUDA under START (None: unset), set NOW, then answer as JSON.
CHILD = r"""
import ctypes, json, os, sys, warnings
import gpumap
start, now, calls = json.loads(sys.argv[1])
if start is None: os.environ.pop("CUDA_VISIBLE_DEVICES", None)
else: os.environ["CUDA_VISIBLE_DEVICES"] = start
out = {"before": gpumap.cuda_initialized()}
cuda = ctypes.CDLL(os.path.join(os.environ["GPUMAP_BUILD_DIR"], "sim", "libcuda.so.1"))
out["cuInit"] = cuda.cuInit(0)
out["after"] = gpumap.cuda_initialized()
if now is None: os.environ.pop("CUDA_VISIBLE_DEVICES", None)
else: os.environ["CUDA_VISIBLE_DEVICES"] = now
n = ctypes.c_int()
out["cuInit_again"] = cuda.cuInit(0)
cuda.cuDeviceGetCount(ctypes.byref(n))
out["count"] = n.value
with warnings.catch_warnings(record=True) as w:
    warnings.simplefilter("always")
    d = gpumap.devices()
    out["warnings"] = [str(x.message) for x in w]
out["devices"] = [x["nvml_index"] for x in d]
out["source"] = d.source
out["device_findings"] = [f.id for f in d.findings]
for expect in calls.get("verify", []):
    try:
        gpumap.verify(expect)
        out.setdefault("verify", []).append("ok")
    except gpumap.MismatchError as e:
        out.setdefault("verify", []).append({"message": e.message, "hint": e.hint, "fix": e.fix})
if "device_map" in calls:
    out["device_map"] = {k: v["nvml_index"] if isinstance(v, dict) else v
                         for k, v in gpumap.check_device_map(calls["device_map"]).items()}
if "max_memory" in calls:
    out["max_memory"] = {str(k): v for k, v in gpumap.max_memory({int(k): v for k, v in calls["max_memory"].items()}).items()}
diag = gpumap.diagnose()
out["diagnose"] = diag.to_dict()
out["report"] = str(diag)
print(json.dumps(out))
"""


class Live(SimulatedHost):
    host = "dgx8"

    def run_child(self, start, now, calls=None, argv_prefix=()):
        env = dict(os.environ, PYTHONPATH=PYTHON_DIR, GPUMAP_FAKE_HOST=os.path.join(HOSTS, self.host + ".json"))
        env.pop("CUDA_VISIBLE_DEVICES", None)
        if start is not None:  # the environment the program starts with (/proc/self/environ)
            env["CUDA_VISIBLE_DEVICES"] = start
        r = subprocess.run([*argv_prefix, sys.executable, "-c", CHILD, json.dumps([start, now, calls or {}])],
                           env=env, capture_output=True, text=True, timeout=120)
        self.assertEqual(r.returncode, 0, r.stderr)
        return json.loads(r.stdout)

    def test_late_variable_changes_nothing_and_every_call_answers_live(self):
        out = self.run_child("1,0", "4", {"verify": [4, [1, 0]], "device_map": {"a": 0, "b": "cuda:1", "c": "cpu"},
                                          "max_memory": {"0": "10GiB", "1": "5GiB"}})
        self.assertFalse(out["before"])
        self.assertEqual(out["cuInit"], 0)
        self.assertTrue(out["after"])
        # The fake driver, like the real one, read the variable once at cuInit.
        self.assertEqual((out["cuInit_again"], out["count"]), (0, 2))
        self.assertEqual(out["devices"], [1, 0])
        self.assertEqual(out["source"], "live")
        self.assertEqual(out["device_findings"], ["set-too-late"])
        self.assertTrue(any("set-too-late" in w or "changes nothing" in w for w in out["warnings"]), out["warnings"])
        wrong, right = out["verify"]
        self.assertEqual(right, "ok")
        self.assertIn("already runs in this process", wrong["message"])
        self.assertIn("nvidia-smi GPU 1", wrong["message"])
        self.assertIn("relaunch", wrong["hint"])
        self.assertEqual(out["device_map"], {"a": 1, "b": 0, "c": "cpu"})
        self.assertEqual(out["max_memory"], {"1": "10GiB", "0": "5GiB"})  # nvidia-smi 0 is cuda:1 live
        d = out["diagnose"]
        self.assertEqual(d["source"], "live")
        self.assertFalse(d["ok"])
        late = [f for f in d["findings"] if f["id"] == "set-too-late"]
        self.assertEqual(len(late), 1)
        self.assertEqual(late[0]["severity"], "error")
        self.assertIn('"4" now (at start: "1,0")', late[0]["message"])
        self.assertIn("cuda:0 = nvidia-smi GPU 1", late[0]["message"])
        # pytorch#159641: torch's device_count() parses "4" now (one GPU) while CUDA keeps two.
        self.assertIn("torch.cuda.device_count() reads the value now and says 1 while CUDA has 2", late[0]["message"])
        self.assertTrue(late[0]["fix"].startswith("CUDA_VISIBLE_DEVICES=4 "), late[0]["fix"])
        self.assertEqual(d["environment"]["start"].get("CUDA_VISIBLE_DEVICES"), "1,0")
        self.assertEqual(d["environment"]["now"].get("CUDA_VISIBLE_DEVICES"), "4")
        self.assertIn("set-too-late", out["report"])
        self.assertIn("CUDA sees 2 of the 8", out["report"])

    def test_pasted_fix_leaves_nothing_to_report(self):
        """The fix relaunches with the variable on the command line: the program then starts CUDA
        under it, its own late assignment of the same value changes nothing, and diagnose is clean."""
        out = self.run_child(None, "4")
        fix = [f for f in out["diagnose"]["findings"] if f["id"] == "set-too-late"][0]["fix"]
        words = shlex.split(fix)
        assigns = [w for w in words if w.startswith("CUDA_")]
        self.assertEqual(assigns, ["CUDA_VISIBLE_DEVICES=4"])
        # Pasted: the variable is in the environment the program starts with.
        again = self.run_child("4", "4")
        self.assertEqual(again["devices"], [4])
        self.assertEqual(again["source"], "live")
        self.assertEqual([f["id"] for f in again["diagnose"]["findings"] if f["severity"] != "info"], [])
        self.assertTrue(again["diagnose"]["ok"])

    def test_a_late_value_that_names_no_gpu_is_not_an_init_error(self):
        out = self.run_child(None, "GPU-deadbeef", {"verify": [[0, 1, 2, 3, 4, 5, 6, 7]]})
        self.assertEqual(out["devices"], list(range(8)))  # torch keeps running on all eight
        self.assertEqual(out["verify"], ["ok"])
        late = [f for f in out["diagnose"]["findings"] if f["id"] == "set-too-late"][0]
        self.assertIn("would make CUDA fail", late["message"])
        self.assertEqual(late["fix"], "")  # nothing to paste: the value now is the mistake
        self.assertIn("remove the late assignment", late["note"])

    def test_same_value_late_is_no_finding(self):
        out = self.run_child("2,3", "2,3")
        self.assertEqual(out["devices"], [2, 3])
        self.assertEqual(out["device_findings"], [])
        self.assertEqual(out["warnings"], [])

    def test_before_cuda_starts_answers_are_predicted(self):
        os.environ["CUDA_VISIBLE_DEVICES"] = "5"
        d = __import__("gpumap").devices()
        self.assertEqual(d.source, "predicted")
        self.assertEqual([x["nvml_index"] for x in d], [5])


# A child that starts the fake CUDA under CUDA_VISIBLE_DEVICES=1,0 on a host whose driver then
# fails (the host file's faults), and reports what each library call did.
FAILING = r"""
import ctypes, json, os, time
import gpumap
os.environ["CUDA_VISIBLE_DEVICES"] = "1,0"
cuda = ctypes.CDLL(os.path.join(os.environ["GPUMAP_BUILD_DIR"], "sim", "libcuda.so.1"))
assert cuda.cuInit(0) == 0
out = {"initialized": gpumap.cuda_initialized()}
def attempt(name, call):
    t0 = time.monotonic()
    try:
        r = call()
        out[name] = {"answer": r}
    except gpumap.GpumapError as e:
        out[name] = {"error": type(e).__name__, "code": e.code, "message": e.message}
    out[name]["seconds"] = time.monotonic() - t0
attempt("devices", lambda: [d["nvml_index"] for d in gpumap.devices()])
attempt("verify", lambda: gpumap.verify([1, 0]))
attempt("diagnose", lambda: gpumap.diagnose().to_dict()["cuda_device_count"])
print(json.dumps(out))
"""


class FailingLiveDriver(SimulatedHost):
    """issue 34 point 8: a failed or hung query of the CUDA running in the process is an error,
    never a shorter device list (nor a set-too-late whose fix sets the value the process has)."""
    host = "dgx8"

    def run_failing(self, faults, name):
        self.simulate_with_faults(faults, name)
        env = dict(os.environ, PYTHONPATH=PYTHON_DIR, GPUMAP_FAKE_HOST=os.environ["GPUMAP_SIMULATE"])
        r = subprocess.run([sys.executable, "-c", FAILING], env=env, capture_output=True, text=True, timeout=100)
        self.assertEqual(r.returncode, 0, r.stderr)
        return json.loads(r.stdout)

    def test_a_failing_cuDeviceGet_is_an_error_not_one_device(self):
        # cuda:1 is nvidia-smi GPU 0 under CUDA_VISIBLE_DEVICES=1,0: the driver fails to name it.
        out = self.run_failing([{"call": "cuDeviceGet", "gpu": 0, "error": "CUDA_ERROR_UNKNOWN"}], "get")
        self.assertTrue(out["initialized"])
        for call in ("devices", "verify", "diagnose"):
            self.assertEqual(out[call].get("error"), "NoDriverError", (call, out[call]))
            self.assertIn("cuDeviceGet for cuda:1 (of 2)", out[call]["message"])
            self.assertIn("CUDA_ERROR_UNKNOWN (999)", out[call]["message"])

    def test_a_failing_uuid_query_is_an_error(self):
        out = self.run_failing([{"call": "cuDeviceGetUuid", "gpu": 1, "error": "CUDA_ERROR_UNKNOWN"}], "uuid")
        self.assertEqual(out["devices"].get("error"), "NoDriverError", out["devices"])
        self.assertIn("cuDeviceGetUuid for cuda:0 (of 2)", out["devices"]["message"])

    def test_a_failing_name_query_leaves_the_answer_whole(self):
        # The name is descriptive (gpumap names devices from NVML by UUID): the list stays right.
        out = self.run_failing([{"call": "cuDeviceGetName", "error": "CUDA_ERROR_UNKNOWN"}], "name")
        self.assertEqual(out["devices"], {"answer": [1, 0], "seconds": out["devices"]["seconds"]})
        self.assertEqual(out["verify"]["answer"], None)

    def test_a_hung_query_obeys_the_driver_timeout(self):
        os.environ["GPUMAP_DRIVER_TIMEOUT"] = "2"
        out = self.run_failing([{"call": "cuDeviceGetName", "hang": True}], "hung")
        for call in ("devices", "verify", "diagnose"):
            self.assertEqual(out[call].get("error"), "NoDriverError", (call, out[call]))
            self.assertIn("did not answer within 2 s", out[call]["message"])
            self.assertIn("CUDA driver running in this process", out[call]["message"])


class FakeTensor:
    def __init__(self, device):
        self.device = device


class FakeModel:
    """Duck-typed like a torch module: .parameters(), .buffers(), optionally .hf_device_map."""

    def __init__(self, devices, hf_device_map=None):
        self._devices = devices
        if hf_device_map is not None:
            self.hf_device_map = hf_device_map

    def parameters(self):
        return [FakeTensor(d) for d in self._devices]

    def buffers(self):
        return []


class DiagnoseModel(SimulatedHost):
    host = "dgx8"

    def host_with_own_memory(self, mib_per_gpu):
        """dgx8 with this test process holding memory on some GPUs (NVML's process lists)."""
        with open(os.path.join(HOSTS, "dgx8.json")) as f:
            host = json.load(f)
        for i, mib in mib_per_gpu.items():
            host["gpus"][i]["processes"] = [{"pid": os.getpid(), "used_memory_mib": mib}]
        path = os.path.join(self.tmp, "own.json")
        with open(path, "w") as f:
            json.dump(host, f)
        os.environ["GPUMAP_SIMULATE"] = path

    def ids(self, diag):
        return [f.id for f in diag.findings if f.severity != "info"]

    def test_model_devices_and_offloaded_modules(self):
        import gpumap
        os.environ["CUDA_VISIBLE_DEVICES"] = "3,4"
        model = FakeModel(["cuda:0"] * 5 + ["cpu"] * 2, {"embed": 0, "layers.0": 1, "layers.1": "cpu", "lm_head": "disk"})
        d = gpumap.diagnose(model, max_memory={0: "1GiB", 1: "1GiB"})
        off = [f for f in d.findings if f.id == "offloaded-modules"]
        self.assertEqual(len(off), 1)
        self.assertIn("2 of 4 modules", off[0].message)
        self.assertIn("1 on cpu, 1 on disk", off[0].message)
        self.assertIn("1GiB", off[0].message)
        self.assertEqual(d.data["model"]["tensor_devices"], {"cuda:0": 5, "cpu": 2})
        self.assertIn("Model tensors: cpu: 2, cuda:0: 5", str(d))

    def test_keys_and_values_that_are_not_ordinals_here(self):
        # Issue 30 item 8: diagnose checks what it is given as check_device_map does.  Under
        # CUDA_VISIBLE_DEVICES=4,5 there is no cuda:4; nvidia-smi GPU 4 is cuda:0.
        import gpumap
        os.environ["CUDA_VISIBLE_DEVICES"] = "4,5"
        with self.assertRaises(gpumap.NotVisibleError):
            gpumap.check_device_map({"0": 4})
        d = gpumap.diagnose(FakeModel(["cuda:0"], {"0": 4}), max_memory={4: "10GiB", "cpu": "100GiB"})
        bad = [f for f in d.findings if f.id == "device-not-visible"]
        self.assertEqual(len(bad), 1, d)
        self.assertEqual(bad[0].severity, "error")
        self.assertIn("hf_device_map[\"0\"] = 4, max_memory key 4: cuda:4 does not exist here", bad[0].message)
        self.assertIn("nvidia-smi GPU 4 is cuda:0 here: use 0", bad[0].note)
        self.assertFalse(d.ok)
        ok = gpumap.diagnose(FakeModel(["cuda:0"], {"0": 0}), max_memory={0: "10GiB", 1: "10GiB"})
        self.assertNotIn("device-not-visible", self.ids(ok))

    def test_model_left_on_the_cpu(self):
        import gpumap
        os.environ["CUDA_VISIBLE_DEVICES"] = "6"
        d = gpumap.diagnose(FakeModel(["cpu"] * 9))  # no hf_device_map: transformers sets none then
        cpu = [f for f in d.findings if f.id == "model-on-cpu"]
        self.assertEqual(len(cpu), 1)
        self.assertIn("9 on cpu", cpu[0].message)
        self.assertIn("nvidia-smi GPU 6", cpu[0].message)
        self.assertNotIn("model-on-cpu", self.ids(gpumap.diagnose(FakeModel(["cuda:0"]))))

    def test_stray_context_from_nvml_memory(self):
        import gpumap
        self.host_with_own_memory({2: 512, 5: 30000})  # its model is on GPU 5 = cuda:1
        os.environ["CUDA_VISIBLE_DEVICES"] = "2,5"
        d = gpumap.diagnose(FakeModel(["cuda:1"] * 3))
        self.assertTrue(d.data["memory_known"])
        self.assertEqual({m["nvml_index"]: m["used_memory_mib"] for m in d.data["memory"]}, {2: 512, 5: 30000})
        stray = [f for f in d.findings if f.id == "stray-context"]
        self.assertEqual(len(stray), 1, d)
        self.assertIn("512 MiB on nvidia-smi GPU 2", stray[0].message)
        self.assertIn("cuda:0", stray[0].message)
        # The model where its memory is: nothing stray.
        self.assertNotIn("stray-context", self.ids(gpumap.diagnose(FakeModel(["cuda:0", "cuda:1"]))))

    def test_local_rank_on_another_device(self):
        import gpumap
        os.environ.update(LOCAL_RANK="1", CUDA_VISIBLE_DEVICES="0,1,2,3")
        d = gpumap.diagnose(FakeModel(["cuda:0"] * 4))  # the G2 4.1 script: hard-coded cuda:0
        mism = [f for f in d.findings if f.id == "local-rank-device-mismatch"]
        self.assertEqual(len(mism), 1)
        self.assertEqual(mism[0].severity, "error")
        self.assertIn("LOCAL_RANK=1", mism[0].message)
        self.assertIn("cuda:1 (nvidia-smi GPU 1", mism[0].message)
        # The fixed script: the model on cuda:LOCAL_RANK.
        self.assertNotIn("local-rank-device-mismatch", self.ids(gpumap.diagnose(FakeModel(["cuda:1"]))))
        # A rank narrowed to its one GPU uses cuda:0 rightly.
        os.environ["CUDA_VISIBLE_DEVICES"] = "1"
        self.assertNotIn("local-rank-device-mismatch", self.ids(gpumap.diagnose(FakeModel(["cuda:0"]))))

    def test_without_model_the_environment_traps_are_reported(self):
        import gpumap
        os.environ["CUDA_VISIBLE_DEVICES"] = "1,1"
        d = gpumap.diagnose()
        self.assertEqual(d.source, "predicted")
        self.assertIn("duplicate-gpu", [f.id for f in d.findings])
        self.assertFalse(d.ok)


class PythonArguments(SimulatedHost):
    """Bad arguments raise gpumap errors naming the argument, never a raw AttributeError/IndexError."""

    def child_output(self, code):
        """What a Python child running `code` printed; it must exit 0."""
        p = self.child(code)
        out, err = p.communicate(timeout=120)
        self.assertEqual(p.returncode, 0, err)
        return out.strip()

    def test_bad_types_and_values(self):
        import gpumap
        cases = [
            (lambda: gpumap.verify(None), gpumap.ArgumentTypeError, "verify(expect=...)"),
            (lambda: gpumap.verify(1.5), gpumap.ArgumentTypeError, "verify(expect=...)"),
            (lambda: gpumap.verify([]), gpumap.ArgumentValueError, "verify(expect=...)"),
            (lambda: gpumap.verify(0, prefix="yes"), gpumap.ArgumentTypeError, "prefix"),
            (lambda: gpumap.max_memory(None), gpumap.ArgumentTypeError, "max_memory(sizes)"),
            (lambda: gpumap.max_memory({0: -1}), gpumap.ArgumentValueError, "max_memory[0]"),
            (lambda: gpumap.max_memory({0: "9999999TB"}), gpumap.ArgumentValueError, "1 PiB"),
            (lambda: gpumap.max_memory({0: "lots"}), gpumap.ArgumentValueError, "max_memory[0]"),
            (lambda: gpumap.check_device_map(None), gpumap.ArgumentTypeError, "check_device_map"),
            (lambda: gpumap.check_device_map({"a": "cuda:²"}), gpumap.ArgumentValueError, "device_map['a']"),
            (lambda: gpumap.check_device_map({"a": "cuda:١"}), gpumap.ArgumentValueError, "device_map['a']"),
            (lambda: gpumap.check_device_map({"a": -1}), gpumap.ArgumentValueError, "device_map['a']"),
            (lambda: gpumap.pin(gpus=2**64), gpumap.ArgumentValueError, "pin(gpus=...)"),
            (lambda: gpumap.pin(gpus=-1), gpumap.ArgumentValueError, "pin(gpus=...)"),
            (lambda: gpumap.pin(gpus=True), gpumap.ArgumentTypeError, "pin(gpus=...)"),
            (lambda: gpumap.pin(min_free_mib=2**64), gpumap.ArgumentValueError, "min_free_mib"),
            (lambda: gpumap.pin(wait=1e10), gpumap.ArgumentValueError, "wait"),
            (lambda: gpumap.pin(wait=float("nan")), gpumap.ArgumentValueError, "wait"),
            (lambda: gpumap.pin(max_util=101), gpumap.ArgumentValueError, "max_util"),
            (lambda: gpumap.which(None), gpumap.ArgumentTypeError, "which"),
        ]
        for call, cls, words in cases:
            with self.subTest(words=words):
                with self.assertRaises(cls) as cm:
                    call()
                self.assertIsInstance(cm.exception, gpumap.GpumapError)
                self.assertEqual(cm.exception.code, 2)
                self.assertIn(words, str(cm.exception))

    def test_type_errors_are_also_python_type_errors(self):
        import gpumap
        with self.assertRaises(TypeError):
            gpumap.verify(None)
        with self.assertRaises(ValueError):
            gpumap.pin(gpus=0)

    def test_string_device_maps(self):
        import gpumap
        self.assertEqual(gpumap.check_device_map("cuda:1")[""]["nvml_index"], 1)
        self.assertEqual(gpumap.check_device_map("cpu"), {"": "cpu"})
        self.assertEqual([d["nvml_index"] for d in gpumap.check_device_map("auto")[""]], [0, 1])

    def test_cpu_only(self):
        import gpumap
        os.environ["CUDA_VISIBLE_DEVICES"] = "-1"
        self.assertEqual(gpumap.devices(), [])
        self.assertEqual(gpumap.check_device_map({"a": "cpu"}), {"a": "cpu"})
        with self.assertRaises(gpumap.NotVisibleError):
            gpumap.check_device_map({"a": 0})
        os.environ["CUDA_VISIBLE_DEVICES"] = "GPU-deadbeef"  # a typo is still an error
        with self.assertRaises(gpumap.CudaInitError):
            gpumap.devices()

    def test_check_max_memory_points_at_the_ordinal_meant(self):
        import gpumap
        os.environ["CUDA_VISIBLE_DEVICES"] = "1"
        self.assertEqual(gpumap.check_max_memory({0: "70GiB", "cpu": "100GiB"})[0]["nvml_index"], 1)
        with self.assertRaises(gpumap.NotVisibleError) as cm:
            gpumap.check_max_memory({1: "70GiB"})
        self.assertIn("cuda:1 does not exist", cm.exception.message)
        self.assertIn("nvidia-smi GPU 1 is cuda:0 in this process: use 0", cm.exception.hint)

    def test_non_utf8_argv_and_environment(self):
        """pin() with a non-UTF-8 argv (display only) and a CUDA_DEVICE_ORDER with a raw byte."""
        code = ("import sys, gpumap\n"
                "p = gpumap.pin()\n"
                "print(len(p.uuids))\n")
        env = dict(os.environ, PYTHONPATH=PYTHON_DIR)
        r = subprocess.run([sys.executable, "-c", code, b"caf\xe9"], env=env, capture_output=True, text=True, timeout=60)
        self.assertEqual((r.returncode, r.stdout.strip()), (0, "1"), r.stderr)
        env = {k.encode(): v.encode() for k, v in env.items()}
        env[b"CUDA_DEVICE_ORDER"] = b"PCI\xff"
        code = ("import gpumap\n"
                "try:\n    gpumap.devices()\nexcept gpumap.CudaInitError as e:\n    print('CudaInitError', e.code)\n")
        r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
        self.assertEqual(r.stdout.strip(), "CudaInitError 5", r.stderr)

    def test_unknown_process_list_is_never_idle_for_pin(self):
        """issue 20 point 3: a GPU whose process list NVML cannot read is not taken as free."""
        self.simulate_with_faults([{"call": "nvmlDeviceGetComputeRunningProcesses", "gpu": 0,
                                    "error": "NVML_ERROR_UNKNOWN"}], "unlisted")
        code = ("import gpumap\n"
                "try:\n    gpumap.pin(gpus=2)\nexcept gpumap.NotEnoughGpusError as e:\n    print(e.passed_over[0])\n"
                "p = gpumap.pin(gpus=1)\nprint(p.devices[0]['nvml_index'])\np.release()\n"
                "import os\nos.environ.pop('CUDA_VISIBLE_DEVICES')\n"
                "p = gpumap.pin(gpus=2, allow_unknown=True)\nprint(len(p.uuids))\n")
        lines = self.child_output(code).splitlines()
        self.assertIn("process list unreadable", lines[0])
        self.assertEqual(lines[1:], ["1", "2"])

    def test_a_hung_driver_holds_one_reader_thread(self):
        """issue 20 point 5: repeated devices() against a hung NVML leave at most one reader thread."""
        self.simulate_with_faults([{"call": "nvmlInit", "hang": True}], "hung")
        os.environ["GPUMAP_DRIVER_TIMEOUT"] = "0.2"
        code = ("import os, gpumap\n"
                "def threads(): return len(os.listdir('/proc/self/task'))\n"
                "before = threads()\n"
                "for _ in range(20):\n"
                "    try:\n        gpumap.devices()\n    except gpumap.NoDriverError:\n        pass\n"
                "print(threads() - before)\n")
        self.assertLessEqual(int(self.child_output(code)), 1)

    def test_line(self):
        import gpumap
        os.environ["CUDA_VISIBLE_DEVICES"] = "1"
        text = gpumap.line()
        self.assertTrue(text.startswith("gpumap: cuda:0 = nvidia-smi 1 GPU-"), text)
        self.assertIn("(predicted); 0 finding(s)", text)


if __name__ == "__main__":
    unittest.main()
