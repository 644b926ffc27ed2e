"""The library in a child made by fork() and under Ctrl-C (issue 34 point 5).

multiprocessing's fork start method and PyTorch DataLoader workers fork a process that already used
gpumap.  fork() copies memory, not threads: a reader thread the parent started is not there in the
child.  Each scenario runs in a child interpreter, so this one's state never leaks into it.
"""

import os
import signal
import subprocess
import unittest

from test_gpumap import SimulatedHost

# The driver timeout is short so that the old failure (the child handing its read to the parent's
# reader thread, which does not exist there) shows as NoDriverError within seconds.
FORKED = r"""
import json, os, sys
import gpumap
what = sys.argv[1]

def call():
    if what == "pin":
        p = gpumap.pin()
        return p.uuids
    if what == "diagnose":
        return gpumap.diagnose().to_dict()["source"]
    return [d["nvml_index"] for d in gpumap.devices()]

parent = call()
if what == "pin":
    os.environ.pop("CUDA_VISIBLE_DEVICES")  # the child picks among every GPU again
r, w = os.pipe()
pid = os.fork()
if pid == 0:
    os.close(r)
    try:
        answer = {"ok": call()}
    except gpumap.GpumapError as e:
        answer = {"error": type(e).__name__, "message": str(e)}
    os.write(w, json.dumps(answer).encode())
    os._exit(0)
os.close(w)
child = json.loads(os.read(r, 1 << 20).decode())
os.waitpid(pid, 0)
print(json.dumps({"parent": parent, "child": child}))
"""

POOL = r"""
import multiprocessing, json
import gpumap

def work(_):
    return [d["nvml_index"] for d in gpumap.devices()], gpumap.diagnose().ok

if __name__ == "__main__":
    first = work(0)
    with multiprocessing.get_context("fork").Pool(2) as pool:
        print(json.dumps({"parent": first, "workers": pool.map(work, range(4))}))
"""

# Both GPUs held, then a pin that can only wait: Ctrl-C must end it at once.
WAITER = r"""
import sys, time
import gpumap
held = gpumap.pin(gpus=2)
import os
os.environ.pop("CUDA_VISIBLE_DEVICES")
print("waiting", flush=True)
start = time.monotonic()
try:
    gpumap.pin(wait=25)
except KeyboardInterrupt:
    print("interrupted after %.1f s" % (time.monotonic() - start), flush=True)
    sys.exit(130)
print("pin returned", flush=True)
"""


class Fork(SimulatedHost):
    def setUp(self):
        super().setUp()
        os.environ["GPUMAP_DRIVER_TIMEOUT"] = "4"

    def forked(self, what):
        import json
        p = self.child(FORKED.replace("sys.argv[1]", repr(what)))
        out, err = p.communicate(timeout=120)
        self.assertEqual(p.returncode, 0, err)
        return json.loads(out)

    def test_devices_in_a_forked_child(self):
        got = self.forked("devices")
        self.assertEqual(got["parent"], [0, 1])
        self.assertEqual(got["child"], {"ok": [0, 1]})

    def test_diagnose_in_a_forked_child(self):
        got = self.forked("diagnose")
        self.assertEqual(got["child"], {"ok": "predicted"})

    def test_pin_in_a_forked_child_gets_the_other_gpu(self):
        got = self.forked("pin")
        self.assertIn("ok", got["child"], got["child"])
        self.assertEqual(len(got["parent"]), 1)
        self.assertEqual(len(got["child"]["ok"]), 1)
        self.assertNotEqual(got["parent"], got["child"]["ok"])  # the parent's lease holds in the child too

    def test_multiprocessing_fork_pool(self):
        import json
        p = self.child(POOL)
        out, err = p.communicate(timeout=120)
        self.assertEqual(p.returncode, 0, err)
        got = json.loads(out)
        self.assertEqual(got["parent"], [[0, 1], True])
        self.assertEqual(got["workers"], [[[0, 1], True]] * 4)


class Interrupt(SimulatedHost):
    def test_ctrl_c_ends_a_waiting_pin(self):
        p = self.child(WAITER)
        try:
            self.assertEqual(p.stdout.readline().strip(), "waiting", p.stderr.read() if p.poll() is not None else "")
            # Let the call get into the library's wait (it retries every 50-150 ms), then press Ctrl-C.
            # The old behaviour: the KeyboardInterrupt came only when the 25 s wait was over.
            try:
                p.wait(timeout=1.5)
            except subprocess.TimeoutExpired:
                pass
            if p.poll() is not None:
                self.fail("pin(wait=25) returned before the interrupt: " + p.stderr.read())
            p.send_signal(signal.SIGINT)
            out, err = p.communicate(timeout=10)  # a generous bound, far below the 25 s of the old behaviour
            self.assertEqual(p.returncode, 130, out + err)
            self.assertTrue(out.startswith("interrupted after"), out + err)
        finally:
            if p.poll() is None:
                p.kill()
                p.communicate()
        # Nothing leased by the interrupted call, nothing left behind: both GPUs free again.
        held = __import__("gpumap").pin(gpus=2)
        held.release()

    def test_a_signal_whose_handler_returns_does_not_end_the_wait(self):
        code = ("import os, signal, threading, gpumap\n"
                "signal.signal(signal.SIGUSR1, lambda *a: print('usr1', flush=True))\n"
                "held = gpumap.pin(gpus=2)\nos.environ.pop('CUDA_VISIBLE_DEVICES')\n"
                "threading.Timer(0.5, lambda: os.kill(os.getpid(), signal.SIGUSR1)).start()\n"
                "try:\n    gpumap.pin(wait=1.5)\nexcept gpumap.NotEnoughGpusError as e:\n    print('gave up:', e)\n")
        p = self.child(code)
        out, err = p.communicate(timeout=60)
        self.assertEqual(p.returncode, 0, err)
        lines = out.splitlines()
        self.assertEqual(lines[0], "usr1")
        self.assertTrue(lines[1].startswith("gave up: pin: "), out)


if __name__ == "__main__":
    unittest.main()
