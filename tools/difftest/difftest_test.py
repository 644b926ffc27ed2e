"""Tests of the differential test itself (ctest difftest_self): the generator keeps its promises, and
the harness finds and shrinks a disagreement when the driver's side lies on purpose."""
import collections
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import gen  # noqa: E402

HOST = gen.Host(["GPU-ef612c2c-fb96-14cb-ebbf-9b494cffceab", "GPU-a04764cc-0f61-5fc1-4301-0cd910d5610a"],
                ["00000000:00:06.0", "00000000:00:07.0"])


class Generator(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.cases = [gen.case(7, i, HOST) for i in range(3000)]

    def test_seeded(self):
        self.assertEqual(self.cases[:50], [gen.case(7, i, HOST) for i in range(50)])
        self.assertEqual(gen.case(7, 1234, HOST), self.cases[1234])  # a case alone, regenerated
        self.assertNotEqual(self.cases[:50], [gen.case(8, i, HOST) for i in range(50)])

    def test_values_are_valid_for_execve(self):
        for cvd, cdo in self.cases:
            for name, v in (("CUDA_VISIBLE_DEVICES", cvd), ("CUDA_DEVICE_ORDER", cdo)):
                if v is None:
                    continue
                b = gen.encode(v)
                self.assertNotIn(b"\0", b)
                self.assertLess(len(name) + 1 + len(b) + 1, gen.MAX_ARG_STRLEN + 1)
                self.assertLessEqual(len(v), gen.MAX_CHARS)

    def test_lengths_from_0_to_100000(self):
        lengths = [len(c) for c, _ in self.cases if c is not None]
        self.assertIn(0, lengths)
        self.assertEqual(max(lengths), gen.MAX_CHARS)
        for lo, hi in ((1, 10), (10, 100), (100, 1000), (1000, 10000), (10000, 100000)):
            self.assertTrue(any(lo <= n < hi for n in lengths), (lo, hi))
        self.assertTrue(any(c is None for c, _ in self.cases))

    def test_every_kind_of_entry_and_separator(self):
        text = "\n".join(c for c, _ in self.cases if c and len(c) < 2000)
        for needle in ["GPU-ef612c2c", "GPU-EF612C2C", "MIG-", "MIG-GPU-", "gpu-", "GPU-ef612c2cfb96", "--",
                       "0x", "1e0", "4294967296", "18446744073709551616", "+", ",,", "\u00a0", "\u3000", "\u0660",
                       "\uff10", "00000000:00:06.0", "0000:00:07.0", "NoDevFiles", "all", ";", "\t", "\n"]:
            self.assertIn(needle, text, needle)
        self.assertTrue(any(c and not _utf8(c) for c, _ in self.cases), "no value with bytes that are not UTF-8")
        orders = collections.Counter(o for _, o in self.cases)
        for o in (None, "PCI_BUS_ID", "FASTEST_FIRST", "", "pci_bus_id"):
            self.assertGreater(orders[o], 0, o)
        self.assertTrue(any(o and o.strip() != o for o in orders))

    def test_batch_line_round_trip(self):
        for cvd, cdo in self.cases[:500]:
            j = json.loads(gen.to_batch_line(cvd, cdo))
            for name, v in (("CUDA_VISIBLE_DEVICES", cvd), ("CUDA_DEVICE_ORDER", cdo)):
                got = bytes.fromhex(j[name + "_hex"]) if name + "_hex" in j else (
                    None if j[name] is None else j[name].encode())
                self.assertEqual(got, None if v is None else gen.encode(v))


def _utf8(s):
    try:
        gen.encode(s).decode("utf-8")
        return True
    except UnicodeDecodeError:
        return False


LYING_PROBE = r'''#!%s
# The real probe's answer, except that any CUDA_VISIBLE_DEVICES holding "7" gets CUDA_ERROR_NO_DEVICE.
import os, subprocess, sys
if b"7" in os.environb.get(b"CUDA_VISIBLE_DEVICES", b""):
    print("error CUDA_ERROR_NO_DEVICE 100\nend")
    sys.exit(0)
sys.exit(subprocess.run([os.environ["DIFFTEST_PROBE"]] + sys.argv[1:]).returncode)
'''


@unittest.skipUnless(os.environ.get("GPUMAP_BINARY") and os.environ.get("DIFFTEST_PROBE"),
                     "needs GPUMAP_BINARY and DIFFTEST_PROBE (ctest sets them)")
class Harness(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="gpumap-difftest-test-")
        self.build = os.environ["GPUMAP_BUILD_DIR"]

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def harness(self, probe, count):
        out = os.path.join(self.tmp, "out")
        r = subprocess.run([sys.executable, os.path.join(HERE, "difftest.py"), "--gpumap", os.environ["GPUMAP_BINARY"],
                            "--probe", probe, "--cuda-lib", os.path.join(self.build, "sim", "libcuda.so.1"),
                            "--simulate", os.path.join(self.build, "hosts", "dgx8.json"), "--seed", "3",
                            "--count", str(count), "--jobs", "2", "--fail-on-disagreement", "--out", out,
                            "--max-shrink", "3", "--shrink-each", "60"],
                           capture_output=True, text=True, timeout=280)
        with open(os.path.join(out, "summary.json")) as f:
            summary = json.load(f)
        with open(os.path.join(out, "vectors.jsonl")) as f:
            vectors = [json.loads(line) for line in f]
        return r, summary, vectors

    def test_a_lying_driver_is_caught_and_shrunk(self):
        probe = os.path.join(self.tmp, "lying_probe")
        with open(probe, "w") as f:
            f.write(LYING_PROBE % sys.executable)
        os.chmod(probe, 0o755)
        r, summary, vectors = self.harness(probe, 100)
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertGreater(summary["disagreeing"], 0)
        self.assertEqual(summary["compared"], 100)
        self.assertEqual(summary["agreeing"] + summary["disagreeing"], 100)
        self.assertIn("generated 100, compared 100", r.stdout)
        self.assertEqual(vectors[0]["CUDA_VISIBLE_DEVICES"], None)  # the baseline first
        self.assertGreater(len(vectors), 1, r.stdout)
        for v in vectors[1:]:
            cvd = v["CUDA_VISIBLE_DEVICES"]
            # 1-minimal: "7" names GPU 7 of eight, so the lie needs that one character and nothing else.
            self.assertEqual(cvd, "7", r.stdout)
            self.assertEqual(v["error"], "CUDA_ERROR_NO_DEVICE(100)")
            if v["CUDA_DEVICE_ORDER"] is None:
                self.assertEqual(v["predicted"], {"error": None, "uuids": [summary["uuids"][7]]})
            else:  # an invalid order, shrunk to the empty one
                self.assertEqual((v["CUDA_DEVICE_ORDER"], v["predicted"]["error"]), ("", "CUDA_ERROR_INVALID_DEVICE"))
            self.assertEqual(v["host"], "simulated dgx8.json")
            self.assertIn("seed 3 case", v["found_by"])

    def test_an_honest_driver_agrees(self):
        r, summary, vectors = self.harness(os.environ["DIFFTEST_PROBE"], 150)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertEqual((summary["compared"], summary["agreeing"], summary["disagreeing"]), (150, 150, 0))
        self.assertEqual(len(vectors), 1)


if __name__ == "__main__":
    unittest.main()
