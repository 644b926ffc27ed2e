"""The gpumap Python package on simulated hosts (run by ctest: GPUMAP_BUILD_DIR and PYTHONPATH set).

Each test gets its own lease and cache folders and a clean CUDA environment; processes that
must not share this interpreter's state (leases held until exit, a loaded libcuda) are children.
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

import gpumap

BUILD = os.environ.get("GPUMAP_BUILD_DIR", os.path.join(os.path.dirname(__file__), "..", "..", "build"))
PYTHON_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
GPUMAP = os.environ.get("GPUMAP_BINARY", os.path.join(BUILD, "gpumap"))
H200_0 = "GPU-ef612c2c"  # h200x2: nvidia-smi GPU 0 (00000000:00:06.0); GPU 1 is GPU-a04764cc (00:07.0)
CUDA_VARS = ("CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER")


class SimulatedHost(unittest.TestCase):
    host = "h200x2"

    def setUp(self):
        self.saved = dict(os.environ)
        self.tmp = tempfile.mkdtemp(prefix="gpumap-pytest-")
        for v in CUDA_VARS:
            os.environ.pop(v, None)
        os.environ["GPUMAP_SIMULATE"] = self.host
        os.environ["GPUMAP_LOCK_DIR"] = os.path.join(self.tmp, "leases")
        os.environ["GPUMAP_CACHE_DIR"] = os.path.join(self.tmp, "cache")

    def tearDown(self):
        os.environ.clear()
        os.environ.update(self.saved)
        shutil.rmtree(self.tmp, ignore_errors=True)

    def child(self, code, **kw):
        """A Python child with this environment and the package importable."""
        env = dict(os.environ, PYTHONPATH=PYTHON_DIR)
        return subprocess.Popen([sys.executable, "-c", code], env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, **kw)

    def simulate_with_faults(self, faults, name="faulty"):
        """Simulates this class's host with the fake driver's `faults` (docs/host-file.md)."""
        with open(os.path.join(PYTHON_DIR, "..", "hosts", self.host + ".json")) as f:
            host = json.load(f)
        host["faults"] = faults
        path = os.path.join(self.tmp, name + ".json")
        with open(path, "w") as f:
            json.dump(host, f)
        os.environ["GPUMAP_SIMULATE"] = path

    def cli(self, *args):
        return subprocess.run([GPUMAP, *args], env=dict(os.environ), capture_output=True, text=True, timeout=60)


class Devices(SimulatedHost):
    def test_lists_the_cuda_view_with_physical_names(self):
        d = gpumap.devices()
        self.assertEqual([x["cuda_ordinal"] for x in d], [0, 1])
        self.assertEqual([x["nvml_index"] for x in d], [0, 1])
        self.assertTrue(d[0]["uuid"].startswith(H200_0))
        self.assertEqual(d[1]["pci_bus_id"], "00000000:00:07.0")
        self.assertEqual(d[0]["name"], "NVIDIA H200")

    def test_follows_the_environment_as_it_is_at_each_call(self):
        os.environ["CUDA_VISIBLE_DEVICES"] = "1"
        self.assertEqual([x["nvml_index"] for x in gpumap.devices()], [1])
        os.environ["CUDA_VISIBLE_DEVICES"] = "1,0"
        self.assertEqual([x["nvml_index"] for x in gpumap.devices()], [1, 0])

    def test_same_answer_as_the_command(self):
        os.environ["CUDA_VISIBLE_DEVICES"] = "1,0"
        cli = json.loads(self.cli("map", "--json").stdout)["cuda"]["devices"]
        # One writer for a device (issue 21 point 2): the library's rows are map --json's objects.
        self.assertEqual(gpumap.devices(), cli)
        for d in gpumap.devices():
            self.assertLessEqual({"cuda_ordinal", "nvml_index", "uuid", "pci_bus_id", "name"}, set(d))

    def test_cuda_init_failure_says_why(self):
        os.environ["CUDA_VISIBLE_DEVICES"] = "GPU-0000dead"
        with self.assertRaises(gpumap.CudaInitError) as e:
            gpumap.devices()
        self.assertIsInstance(e.exception, gpumap.GpumapError)
        self.assertEqual(e.exception.cuda_error, "CUDA_ERROR_NO_DEVICE")
        self.assertIn("CUDA_VISIBLE_DEVICES", e.exception.hint)

    def test_import_is_light(self):
        code = "import sys; import gpumap; print(sorted(m for m in ('ctypes', 'json', 'subprocess') if m in sys.modules))"
        out = subprocess.run([sys.executable, "-c", code], env=dict(os.environ, PYTHONPATH=PYTHON_DIR),
                             capture_output=True, text=True, check=True).stdout
        self.assertEqual(out.strip(), "[]")

    def test_missing_library_is_a_clear_error(self):
        # gpumap's own library missing is its own error naming the build command, not the
        # driver's (NoDriverError sent people looking for an NVIDIA driver they had).
        env = dict(os.environ, PYTHONPATH=PYTHON_DIR, GPUMAP_LIBRARY="/nonexistent/libgpumap.so.1")
        code = ("import gpumap\ntry:\n    gpumap.devices()\nexcept gpumap.LibraryNotFoundError as e:\n"
                "    print('LibraryNotFoundError', isinstance(e, gpumap.NoDriverError), e.tried, e)\n")
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True).stdout
        self.assertIn("LibraryNotFoundError False ['/nonexistent/libgpumap.so.1']", out)
        self.assertIn("scripts/run.sh", out)
        self.assertIn("GPUMAP_BUILD_DIR", out)


    def test_devices_never_waits_on_the_utilisation_query(self):
        # devices() needs identities only: a hung utilisation query (3.7 ms per GPU on a real
        # H200 when it answers) must not be asked at all.
        self.simulate_with_faults([{"call": "nvmlDeviceGetUtilizationRates", "hang": True}], "hung-util")
        p = self.child("import gpumap; print([d['nvml_index'] for d in gpumap.devices()])")
        out, err = p.communicate(timeout=120)
        self.assertEqual((p.returncode, out.strip()), (0, "[0, 1]"), err)
        # The command's `list` shows utilisation, so it does ask: the hang is real.
        r = subprocess.run([GPUMAP, "list", "--json"], env=dict(os.environ, GPUMAP_DRIVER_TIMEOUT="1"),
                           capture_output=True, text=True, timeout=60)
        self.assertEqual(r.returncode, 3, r.stderr)
        self.assertIn("did not answer within 1 s", r.stderr)


    def test_driver_timeout_is_honoured_and_checked(self):
        # GPUMAP_DRIVER_TIMEOUT bounds a hung driver here as it does for the command.
        self.simulate_with_faults([{"call": "nvmlInit", "hang": True}], "hung-init")
        os.environ["GPUMAP_DRIVER_TIMEOUT"] = "0.5"
        code = ("import gpumap\ntry:\n    gpumap.devices()\nexcept gpumap.NoDriverError as e:\n"
                "    print('NoDriverError:', e)\n")
        p = self.child(code)
        out, err = p.communicate(timeout=50)  # the default bound would be 60 s
        self.assertEqual(p.returncode, 0, err)
        self.assertIn("did not answer within 0.5 s", out)
        os.environ["GPUMAP_DRIVER_TIMEOUT"] = "soon"
        p = self.child("import gpumap\ntry:\n    gpumap.devices()\nexcept gpumap.GpumapError as e:\n    print(e.code, e)\n")
        out, err = p.communicate(timeout=50)
        self.assertIn("2 GPUMAP_DRIVER_TIMEOUT=`soon` is not a number of seconds",
                      out, err)


class MixedHost(SimulatedHost):
    host = "seed-mixed"  # an A100/H100 mix: CUDA's default order needs the driver

    def test_driver_order_comes_from_a_child_never_this_process(self):
        d = gpumap.devices()
        self.assertEqual(d[0]["name"], "NVIDIA H100 80GB HBM3")  # FASTEST_FIRST: the H100 leads
        self.assertEqual(d[0]["nvml_index"], 1)
        with open("/proc/self/maps") as f:
            self.assertNotIn("libcuda", f.read())
        self.assertFalse(gpumap.cuda_initialized())

    def test_the_cache_folder_follows_the_commands_rule(self):
        # The package passes HOME and XDG_CACHE_HOME to the library raw; the library applies the
        # command's rule (GPUMAP_CACHE_DIR, else $XDG_CACHE_HOME/gpumap, else ~/.cache/gpumap).
        for env, folder in (({"XDG_CACHE_HOME": os.path.join(self.tmp, "xdg")}, os.path.join(self.tmp, "xdg", "gpumap")),
                            ({"HOME": os.path.join(self.tmp, "home")}, os.path.join(self.tmp, "home", ".cache", "gpumap"))):
            os.makedirs(env.get("HOME", self.tmp), exist_ok=True)  # a home exists; gpumap makes ~/.cache/gpumap at most
            code = ("import gpumap\nprint([d['nvml_index'] for d in gpumap.devices()])\n")
            child_env = {k: v for k, v in os.environ.items() if k not in ("GPUMAP_CACHE_DIR", "XDG_CACHE_HOME", "HOME")}
            child_env.update(env, PYTHONPATH=PYTHON_DIR)
            out = subprocess.run([sys.executable, "-c", code], env=child_env, capture_output=True, text=True, timeout=60)
            self.assertEqual(out.returncode, 0, out.stderr)
            self.assertEqual(out.stdout.strip(), "[1, 0, 2, 3]")
            self.assertTrue(os.path.isdir(folder) and os.listdir(folder), f"no order cache in {folder}")
            cli = subprocess.run([GPUMAP, "map", "--json"], env=dict(child_env), capture_output=True, text=True, timeout=60)
            self.assertEqual(cli.returncode, 0, cli.stderr)
            self.assertEqual(gpumap._json().loads(cli.stdout)["cuda"]["source"], "cache", "the command reads the same cache")

    def test_a_driver_printing_on_stdout_cannot_pose_as_the_probe_answer(self):
        # gpumap-probe answers on its own channel, like `gpumap __probe`: a libcuda that prints a
        # probe-like answer with 1000 devices during cuInit changes nothing.
        self.simulate_with_faults([{"call": "cuInit", "output": "stdout"}], "noisy")
        d = gpumap.devices()
        self.assertEqual([x["nvml_index"] for x in d], [1, 0, 2, 3])

    def test_not_enough_gpus_gives_each_reason(self):
        with self.assertRaises(gpumap.NotEnoughGpusError) as e:
            gpumap.pin(gpus=4)
        self.assertIn("runs 1 other process", " ".join(e.exception.passed_over[0]))
        self.assertIn("allow_busy=True", e.exception.hint)
        self.assertNotIn("CUDA_VISIBLE_DEVICES", os.environ)


class LibraryAgreesWithTheCommand(SimulatedHost):
    """Issue 30 item 8: devices().findings and line() say what `gpumap map --line` and doctor say."""
    host = "seed-mixed"

    def doctor_ids(self, *severities):
        # -v: every finding, as the library returns them (doctor alone leaves out the info note
        # ordinals-are-relative, which holds wherever CUDA_VISIBLE_DEVICES is set)
        j = json.loads(self.cli("doctor", "--json", "-v").stdout)
        return [f["id"] for f in j["findings"] if f["severity"] in severities]

    def test_findings_and_line_as_the_command_gives_them(self):
        os.environ["CUDA_VISIBLE_DEVICES"] = "0"
        d = gpumap.devices()
        self.assertIn("visible-devices-without-pci-order", [f.id for f in d.findings])
        self.assertEqual(sorted(f.id for f in d.findings), sorted(self.doctor_ids("error", "warning", "info")))
        cli = self.cli("map", "--line").stdout.strip()
        self.assertIn("visible-devices-without-pci-order", cli)
        # The same findings counted; the command's line adds "(run gpumap doctor)".
        self.assertIn(gpumap.line().split(" (predicted)")[1], cli)

    def test_clean_environment_has_no_findings_in_either(self):
        os.environ["CUDA_DEVICE_ORDER"] = "PCI_BUS_ID"
        os.environ["CUDA_VISIBLE_DEVICES"] = "0"
        self.assertEqual([f.id for f in gpumap.devices().findings if f.severity != "info"], self.doctor_ids("error", "warning"))
        self.assertIn("0 finding(s)", gpumap.line())

    def test_one_reading_of_every_gpu_hidden_on_purpose(self):
        # -1 alone: CPU-only on purpose, [] and no error in doctor.
        os.environ["CUDA_VISIBLE_DEVICES"] = "-1"
        self.assertEqual(gpumap.devices(), [])
        self.assertEqual(self.doctor_ids("error"), [])
        # -1,0: CUDA stops at -1 (no GPU), but the 0 is never read: not a clean request.  doctor
        # calls it an error, and devices() does not answer "CPU-only on purpose".
        os.environ["CUDA_VISIBLE_DEVICES"] = "-1,0"
        self.assertNotEqual(self.doctor_ids("error"), [])
        with self.assertRaises(gpumap.CudaInitError) as e:
            gpumap.devices()
        self.assertEqual(e.exception.cuda_error, "CUDA_ERROR_NO_DEVICE")
        # Set but empty: on purpose in both.
        os.environ["CUDA_VISIBLE_DEVICES"] = ""
        self.assertEqual(gpumap.devices(), [])
        self.assertEqual(self.doctor_ids("error"), [])

    def test_cpu_only_on_a_machine_without_the_driver(self):
        self.simulate_with_faults([], "nodriver")
        with open(os.environ["GPUMAP_SIMULATE"]) as f:
            host = json.load(f)
        host["errors"] = {"nvmlInit": "NVML_ERROR_DRIVER_NOT_LOADED"}
        with open(os.environ["GPUMAP_SIMULATE"], "w") as f:
            json.dump(host, f)
        os.environ["CUDA_VISIBLE_DEVICES"] = "-1"
        self.assertEqual(gpumap.devices(), [])
        self.assertIn("no GPU", gpumap.line())
        # Without the CPU-only request the missing driver is still the answer.
        os.environ["CUDA_VISIBLE_DEVICES"] = "0"
        with self.assertRaises(gpumap.NoDriverError):
            gpumap.devices()
        del os.environ["CUDA_VISIBLE_DEVICES"]
        with self.assertRaises(gpumap.NoDriverError):
            gpumap.devices()


class Verify(SimulatedHost):
    def test_match_by_index_uuid_prefix_and_pci_bus_id(self):
        os.environ["CUDA_VISIBLE_DEVICES"] = "1,0"
        self.assertIsNone(gpumap.verify([1, 0]))
        self.assertIsNone(gpumap.verify(["GPU-a04764cc", "ef612c2c"]))
        self.assertIsNone(gpumap.verify(["00:07.0"], prefix=True))

    def test_mismatch_names_the_difference_and_the_fix_works(self):
        os.environ["CUDA_VISIBLE_DEVICES"] = "1"
        with self.assertRaises(gpumap.MismatchError) as e:
            gpumap.verify(0)
        self.assertIn("cuda:0 is nvidia-smi GPU 1", str(e.exception))
        os.environ.update(e.exception.fix)  # the advice, pasted
        self.assertIsNone(gpumap.verify(0))

    def test_bad_names_are_usage_errors(self):
        with self.assertRaises(gpumap.GpumapError) as e:
            gpumap.verify(["GPU-zzzz"])
        self.assertEqual(e.exception.code, 2)
        self.assertIn("GPU-zzzz", str(e.exception))
        with self.assertRaises(gpumap.GpumapError):
            gpumap.verify([1.5])


class Which(SimulatedHost):
    def test_pasting_which_gives_exactly_those_gpus(self):
        os.environ["CUDA_VISIBLE_DEVICES"] = "0"  # which() does not depend on the current view
        env = gpumap.which([1, "00:06.0"])
        self.assertEqual(list(env), ["CUDA_VISIBLE_DEVICES"])
        os.environ.update(env)
        self.assertIsNone(gpumap.verify([1, 0]))
        self.assertEqual(gpumap.which(1), {"CUDA_VISIBLE_DEVICES": gpumap.devices()[0]["uuid"]})

    def test_a_repeated_gpu_is_refused(self):
        with self.assertRaises(gpumap.GpumapError) as e:
            gpumap.which([0, "GPU-ef612c2c"])
        self.assertIn("same GPU", str(e.exception))
        with self.assertRaises(gpumap.GpumapError):
            gpumap.which([])


class VerifyMig(SimulatedHost):
    host = "mig"

    def test_mig_device_uuid(self):
        mig = [d for d in gpumap.devices() if d["uuid"].startswith("MIG-")]
        self.assertTrue(mig)
        os.environ["CUDA_VISIBLE_DEVICES"] = mig[0]["uuid"]
        self.assertIsNone(gpumap.verify(mig[0]["uuid"]))
        self.assertIsNone(gpumap.verify(mig[0]["uuid"][:12]))
        with self.assertRaises(gpumap.MismatchError):
            gpumap.verify(1)

    def test_a_mig_device_has_its_own_name_as_in_map_json(self):
        # Issue 21 point 2: devices() used to give a MIG device its parent GPU's name.
        cli = json.loads(self.cli("map", "--json").stdout)["cuda"]["devices"]
        self.assertEqual(gpumap.devices(), cli)
        mig = [d for d in gpumap.devices() if d["uuid"].startswith("MIG-")]
        self.assertTrue(mig)
        self.assertIsNotNone(mig[0]["mig"])
        self.assertIn("MIG", mig[0]["name"])

    def test_which_names_a_mig_mode_gpu_by_its_mig_devices(self):
        os.environ.update(gpumap.which(0))  # GPU 0 is in MIG mode: CUDA shows its MIG devices
        self.assertTrue(all(d["uuid"].startswith("MIG-") and d["nvml_index"] == 0 for d in gpumap.devices()))


class Pin(SimulatedHost):
    def test_pin_sets_the_environment_and_round_trips(self):
        p = gpumap.pin()
        try:
            self.assertEqual(os.environ["CUDA_DEVICE_ORDER"], "PCI_BUS_ID")
            self.assertEqual(os.environ["CUDA_VISIBLE_DEVICES"], ",".join(p.uuids))
            self.assertEqual(len(p.uuids), 1)
            self.assertEqual(gpumap.devices(), p.devices)
            self.assertIsNone(gpumap.verify(p.uuids))
            # `gpumap run` elsewhere never gets a pinned GPU: both GPUs are not available to it.
            os.environ.pop("CUDA_VISIBLE_DEVICES")
            run = self.cli("run", "--gpus", "2", "--", "true")
            self.assertEqual(run.returncode, 6, run.stderr)
            self.assertIn("leased by pid %d" % os.getpid(), run.stderr)
        finally:
            p.release()
        self.assertFalse(p.held)
        self.assertEqual(self.cli("run", "--gpus", "2", "--", "true").returncode, 0)

    def test_two_processes_get_disjoint_gpus_and_leases_end_at_exit(self):
        code = ("import gpumap, json, sys\np = gpumap.pin()\nprint(json.dumps(p.uuids), flush=True)\n"
                "sys.stdin.read()\n")  # hold until the parent closes stdin, then exit without release()
        a, b = self.child(code), self.child(code)
        try:
            got = [json.loads(c.stdout.readline() or "null") for c in (a, b)]
            if not (got[0] and got[1]):  # a child failed: it has exited, its stderr says why
                self.fail([c.stderr.read() for c in (a, b)])
            self.assertFalse(set(got[0]) & set(got[1]), got)
            with self.assertRaises(gpumap.NotEnoughGpusError) as e:
                gpumap.pin()
            self.assertIn("leased by pid", str(e.exception.passed_over))
        finally:
            for c in (a, b):
                c.stdin.close()
                c.wait(30)
                c.stdout.close()
                c.stderr.close()
        both = gpumap.pin(gpus=2)  # their leases ended with them
        self.assertEqual(len(both.uuids), 2)
        both.release()

    def test_wait_then_give_up(self):
        with gpumap.pin(gpus=2):
            with self.assertRaises(gpumap.NotEnoughGpusError) as e:
                gpumap.pin(wait=0.3)
            self.assertIn("waited 0.3 s", str(e.exception))

    def test_a_second_pin_names_this_processes_own_lease(self):
        # Issue 43: pin() twice called the first pin's lease "leased by pid N (root)", as if someone else's.
        with gpumap.pin() as first:
            with self.assertRaises(gpumap.NotEnoughGpusError) as e:
                gpumap.pin()
            err = e.exception
            self.assertIn("already leased by this process", str(err.passed_over))
            self.assertNotIn("leased by pid", str(err))
            self.assertTrue(err.hint.startswith("this process already holds them (pin lease "), err.hint)
            self.assertIn("Pinned.release()", err.hint)
            self.assertTrue(first.held)
        again = gpumap.pin()  # after the release it can pin the same GPU again
        self.assertEqual(again.uuids, first.uuids)
        again.release()

    def test_include_exclude_and_bad_requests(self):
        with gpumap.pin(include=1) as p:
            self.assertEqual([d["nvml_index"] for d in p.devices], [1])
        os.environ.pop("CUDA_VISIBLE_DEVICES")
        with gpumap.pin(exclude=["00:06.0"]) as p:
            self.assertEqual([d["nvml_index"] for d in p.devices], [1])
        os.environ.pop("CUDA_VISIBLE_DEVICES")
        for bad in ({"max_util": 200}, {"gpus": 0}, {"wait": -1}):
            with self.assertRaises(gpumap.GpumapError) as e:
                gpumap.pin(**bad)
            self.assertEqual(e.exception.code, 2, bad)

    def test_too_late_once_cuda_is_initialised(self):
        code = ("import ctypes, os, gpumap\n"
                "cuda = ctypes.CDLL(os.path.join(os.environ['GPUMAP_BUILD_DIR'], 'sim', 'libcuda.so.1'))\n"
                "print('loaded', gpumap.cuda_initialized())\n"
                "cuda.cuInit(0)\n"
                "print('after cuInit', gpumap.cuda_initialized())\n"
                "try:\n    gpumap.pin()\nexcept gpumap.TooLateError as e:\n    print('TooLateError', e)\n")
        env = dict(os.environ, GPUMAP_FAKE_HOST=os.path.join(BUILD, "hosts", "h200x2.json"))
        out = subprocess.run([sys.executable, "-c", code], env=dict(env, PYTHONPATH=PYTHON_DIR),
                             capture_output=True, text=True, timeout=60)
        self.assertIn("loaded False", out.stdout, out.stderr)
        self.assertIn("after cuInit True", out.stdout, out.stderr)
        self.assertIn("TooLateError CUDA is already initialised", out.stdout, out.stderr)


class DeviceMaps(SimulatedHost):
    def test_max_memory_keys_are_this_process_ordinals(self):
        os.environ["CUDA_VISIBLE_DEVICES"] = "1,0"
        self.assertEqual(gpumap.max_memory({0: "10GiB", 1: "20GiB", "cpu": "64GiB"}),
                         {1: "10GiB", 0: "20GiB", "cpu": "64GiB"})
        self.assertEqual(gpumap.max_memory({"00:07.0": 5}), {0: 5})

    def test_max_memory_refuses_an_invisible_gpu(self):
        os.environ["CUDA_VISIBLE_DEVICES"] = "1"
        with self.assertRaises(gpumap.NotVisibleError) as e:
            gpumap.max_memory({0: "10GiB"})
        self.assertIn("nvidia-smi GPU 0", str(e.exception))

    def test_check_device_map(self):
        os.environ["CUDA_VISIBLE_DEVICES"] = "1,0"
        placed = gpumap.check_device_map({"embed": 0, "layers.0": "cuda:1", "lm_head": "cpu"})
        self.assertEqual(placed["embed"]["nvml_index"], 1)
        self.assertEqual(placed["layers.0"]["nvml_index"], 0)
        self.assertEqual(placed["lm_head"], "cpu")
        with self.assertRaises(gpumap.NotVisibleError) as e:
            gpumap.check_device_map({"lm_head": 2})
        self.assertIn("lm_head", str(e.exception))
        # The round trip: a device_map built from max_memory's keys lands where it was asked.
        ordinal = next(iter(gpumap.max_memory({0: "1GiB"})))
        self.assertEqual(gpumap.check_device_map({"m": ordinal})["m"]["nvml_index"], 0)


if __name__ == "__main__":
    unittest.main()
