"""Issue 52 items 1 and 8 in the Python package: diagnose() says the cuda:N numbering in one line
when it is not nvidia-smi's, and str() of every gpumap exception and warning is one line, each
phrase once, with the detail in attributes."""

import json
import os
import subprocess
import sys
import unittest

import gpumap

from test_gpumap import PYTHON_DIR, SimulatedHost

HOSTS = os.path.join(PYTHON_DIR, "..", "hosts")


class Renumbering(SimulatedHost):
    host = "dgx8"

    def test_a_subset_is_said_in_one_line(self):
        os.environ["CUDA_VISIBLE_DEVICES"] = "3,5"
        d = gpumap.diagnose()
        self.assertEqual(d.renumbering, "cuda:0 = nvidia-smi GPU 3, cuda:1 = GPU 5")
        self.assertEqual(d.to_dict()["renumbering"], d.renumbering)
        self.assertIn("cuda:0 = nvidia-smi GPU 3, cuda:1 = GPU 5", str(d))
        # The same line as `gpumap doctor --json`.
        cli = json.loads(self.cli("doctor", "--json").stdout)
        self.assertEqual(cli["renumbering"], d.renumbering)

    def test_the_identity_says_nothing(self):
        for value in (None, "0,1"):
            if value is None:
                os.environ.pop("CUDA_VISIBLE_DEVICES", None)
            else:
                os.environ["CUDA_VISIBLE_DEVICES"] = value
            d = gpumap.diagnose()
            self.assertIsNone(d.renumbering)
            self.assertNotIn("renumbered", str(d))


class OneLineMessages(SimulatedHost):
    host = "dgx8"

    def test_verify_with_every_gpu_visible_is_one_short_line(self):
        # Eight GPUs visible, one expected: seven extra GPUs were seven copies of one phrase.
        with self.assertRaises(gpumap.MismatchError) as e:
            gpumap.verify(0)
        text = str(e.exception)
        self.assertNotIn("\n", text)
        self.assertLess(len(text), 400, text)
        self.assertEqual(text.count("not expected"), 1, text)
        self.assertIn("cuda:1 to cuda:7 are visible but not expected", text)
        self.assertEqual(len(e.exception.differences), 7)
        self.assertTrue(all("GPU-" in d for d in e.exception.differences))
        self.assertIn("; hint: ", text)
        self.assertTrue(e.exception.hint)
        self.assertEqual(e.exception.source, "predicted")

    def test_several_differences_name_the_first_and_count_the_rest(self):
        os.environ["CUDA_VISIBLE_DEVICES"] = "4,5,6"
        with self.assertRaises(gpumap.MismatchError) as e:
            gpumap.verify([0, 1, 2])
        text = str(e.exception)
        self.assertNotIn("\n", text)
        self.assertIn("cuda:0 is nvidia-smi GPU 4; expected nvidia-smi GPU 0 (and 2 more)", text)
        self.assertEqual(len(e.exception.differences), 3)
        os.environ.update(e.exception.fix)  # the advice, pasted
        self.assertIsNone(gpumap.verify([0, 1, 2]))

    def test_other_errors_are_one_line(self):
        for call in (lambda: gpumap.verify(["GPU-zzzz"]), lambda: gpumap.verify(None), lambda: gpumap.pin(gpus=0)):
            with self.assertRaises(gpumap.GpumapError) as e:
                call()
            self.assertNotIn("\n", str(e.exception))
            self.assertTrue(str(e.exception).startswith(" ".join(e.exception.message.split())))


# Starts the fake CUDA under "1,0", then sets "4": devices() warns, verify() refuses.
LATE = r"""
import ctypes, json, os, warnings
import gpumap
os.environ["CUDA_VISIBLE_DEVICES"] = "1,0"
cuda = ctypes.CDLL(os.path.join(os.environ["GPUMAP_BUILD_DIR"], "sim", "libcuda.so.1"))
cuda.cuInit(0)
os.environ["CUDA_VISIBLE_DEVICES"] = "4"
out = {}
with warnings.catch_warnings(record=True) as w:
    warnings.simplefilter("always")
    gpumap.devices()
    late = [x.message for x in w if isinstance(x.message, gpumap.SetTooLateWarning)]
    out["warning"] = str(late[0])
    out["is_runtime_warning"] = isinstance(late[0], RuntimeWarning)
    out["finding"] = late[0].finding.to_dict()
try:
    gpumap.verify([4, 5, 6, 7])
except gpumap.MismatchError as e:
    out["verify"] = str(e)
    out["verify_findings"] = [f.id for f in e.findings]
print(json.dumps(out))
"""


class SetTooLate(SimulatedHost):
    host = "dgx8"

    def test_the_warning_and_the_live_mismatch_are_one_line(self):
        env = dict(os.environ, PYTHONPATH=PYTHON_DIR, GPUMAP_FAKE_HOST=os.path.join(HOSTS, self.host + ".json"))
        env["CUDA_VISIBLE_DEVICES"] = "1,0"
        r = subprocess.run([sys.executable, "-c", LATE], env=env, capture_output=True, text=True, timeout=120)
        self.assertEqual(r.returncode, 0, r.stderr)
        out = json.loads(r.stdout)
        self.assertTrue(out["is_runtime_warning"])
        self.assertNotIn("\n", out["warning"])
        self.assertIn("set-too-late", out["warning"])
        self.assertEqual(out["finding"]["id"], "set-too-late")
        self.assertIn("Setting them now changes nothing", out["finding"]["message"])  # the detail, kept
        self.assertNotIn("\n", out["verify"])
        self.assertIn("already runs in this process", out["verify"])
        # The hint is the relaunch line (this child's whole command line); the message itself is short.
        self.assertLess(len(out["verify"].split("; hint: ")[0]), 300, out["verify"])
        self.assertIn("relaunch", out["verify"].split("; hint: ")[1])
        self.assertEqual(out["verify_findings"], ["set-too-late"])


if __name__ == "__main__":
    unittest.main()
