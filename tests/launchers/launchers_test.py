"""gpumap bind under the real launchers (issue 23 points 3 and 4): Debian's torchrun
(python3-torch's torch.distributed.run) and Open MPI's mpirun start the stand-in ranks of rank.py
through `gpumap bind` on a simulated 8-GPU host, and the harness checks, from outside gpumap:

  - each rank's CUDA_VISIBLE_DEVICES, CUDA_DEVICE_ORDER, local rank and CPU affinity are what
    docs/launch.md says (its own GPU, in PCI order; the inherited CPUs, since a simulated host's
    CPUs are shown, never applied);
  - the simulated driver (the build's libcuda.so.1, not gpumap's resolver) puts the rank's cuda:0
    on that GPU;
  - `gpumap ps`, run while the ranks live (listed on the GPU each one works on), shows one rank per
    GPU and no finding above info; broken layouts (G2 §4.1: hard-coded cuda:0 under
    CUDA_VISIBLE_DEVICES=3,4,5,6; cuda:$LOCAL_RANK under bind --keep-visible) are caught.

usage: launchers_test.py --gpumap BIN --cuda-lib LIBCUDA --hosts DIR torchrun|mpirun
Exit 0: passed; 1: failed; 77: the launcher is not installed (scripts/deps.sh installs it).
Every process is started in a session of its own and stopped by its PID (its group), also on a
failure; the temporary folder is removed."""
import argparse
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
RANK_PY = os.path.join(HERE, "rank.py")
TIMEOUT = 150  # seconds for one launch to report (torch imports are slow on a loaded 2-core machine)


class Failed(Exception):
    pass


def check(cond, what):
    if not cond:
        raise Failed(what)


def cpu_text(cpus):
    return ",".join(str(c) for c in sorted(cpus))


class Harness:
    def __init__(self, args):
        self.gpumap = os.path.abspath(args.gpumap)
        self.cuda_lib = os.path.abspath(args.cuda_lib)
        self.hosts = args.hosts
        self.tmp = tempfile.mkdtemp(prefix="gpumap-launchers-")
        os.mkdir(os.path.join(self.tmp, "t"))  # TMPDIR of everything started: nothing lands in /tmp
        self.procs = []  # every launcher started, each the leader of its own session
        self.inherited = sorted(os.sched_getaffinity(0))
        self.runs = 0

    # ---- simulated hosts ------------------------------------------------------------------
    def host(self, name, uuid_tail, processes=None):
        """hosts/dgx8.json with UUIDs ending in `uuid_tail` (each node its own) and CPU affinity
        split between the two halves of this machine's CPUs (GPUs 0-3: first, 4-7: second), so the
        binding shows on any machine with two CPUs or more.  processes: {nvml_index: [pid, ...]}."""
        with open(os.path.join(self.hosts, "dgx8.json")) as f:
            h = json.load(f)
        half = max(1, len(self.inherited) // 2)
        low, high = self.inherited[:half], self.inherited[half:] or self.inherited[:half]
        for i, g in enumerate(h["gpus"]):
            g["uuid"] = g["uuid"][:-len(uuid_tail)] + uuid_tail
            g["cpu_affinity"] = cpu_text(low if i < 4 else high)
            g["processes"] = [{"pid": p, "used_memory_mib": 512} for p in (processes or {}).get(i, [])]
        path = os.path.join(self.tmp, name + ".json")
        with open(path, "w") as f:
            json.dump(h, f)
        return path, h

    # ---- processes ------------------------------------------------------------------------
    def env(self, host, node="0", extra=None):
        e = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": os.path.join(self.tmp, "home"),
             "GPUMAP_SIMULATE": host, "GPUMAP_CACHE_DIR": os.path.join(self.tmp, "cache"),
             "RANK_CUDA_LIB": self.cuda_lib, "RANK_NODE": node, "PYTHONDONTWRITEBYTECODE": "1",
             "LANG": "C.UTF-8", "TMPDIR": os.path.join(self.tmp, "t")}
        # Under the sanitizers (ctest sets them): the ASan runtime first in every launcher and rank,
        # which load the instrumented fake libcuda.
        for k in ("LD_PRELOAD", "ASAN_OPTIONS", "UBSAN_OPTIONS"):
            if k in os.environ:
                e[k] = os.environ[k]
        e.update(extra or {})
        return e

    def start(self, argv, env, tag):
        log = open(os.path.join(self.tmp, tag + ".log"), "w")
        p = subprocess.Popen(argv, env=env, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                             start_new_session=True, cwd=self.tmp)
        p.tag = tag
        self.procs.append(p)
        return p

    def log_tail(self, p, lines=25):
        with open(os.path.join(self.tmp, p.tag + ".log"), errors="replace") as f:
            return "".join(f.readlines()[-lines:])

    def new_run(self):
        self.runs += 1
        d = os.path.join(self.tmp, "run%d" % self.runs)
        os.mkdir(d)
        return d

    def reports(self, run_dir, count, procs):
        """Waits for `count` rank reports; fails early when a launcher exits first."""
        deadline = time.monotonic() + TIMEOUT
        while True:
            names = [n for n in os.listdir(run_dir) if n.startswith("rank-") and n.endswith(".json")]
            if len(names) >= count:
                break
            for p in procs:
                if p.poll() is not None:
                    raise Failed("%s exited (%s) before %d ranks reported:\n%s" % (p.tag, p.returncode, count,
                                                                                  self.log_tail(p)))
            if time.monotonic() > deadline:
                raise Failed("%d of %d ranks reported within %d s:\n%s" % (
                    len(names), count, TIMEOUT, "\n".join(self.log_tail(p) for p in procs)))
            time.sleep(0.1)
        out = []
        for n in names:
            with open(os.path.join(run_dir, n)) as f:
                out.append(json.load(f))
        return sorted(out, key=lambda r: (r["node"], r["local_rank"]))

    def finish(self, run_dir, procs):
        """Lets the ranks exit and expects every launcher to succeed."""
        open(os.path.join(run_dir, "go"), "w").close()
        for p in procs:
            try:
                rc = p.wait(timeout=60)
            except subprocess.TimeoutExpired:
                raise Failed("%s did not exit within 60 s after the ranks were released" % p.tag)
            check(rc == 0, "%s exited %s:\n%s" % (p.tag, rc, self.log_tail(p)))

    def stop_all(self):
        # Ranks that reported, by PID (a launcher may start them in sessions of their own), while
        # they are still rank.py; then each launcher's session.
        for run in range(1, self.runs + 1):
            d = os.path.join(self.tmp, "run%d" % run)
            for n in os.listdir(d):
                if n.startswith("rank-") and n.endswith(".json"):
                    pid = int(n[5:-5])
                    try:
                        with open("/proc/%d/cmdline" % pid, "rb") as f:
                            if RANK_PY.encode() in f.read():
                                os.kill(pid, signal.SIGKILL)
                    except (OSError, ProcessLookupError):
                        pass
        for p in self.procs:
            if p.poll() is None:
                try:
                    os.killpg(p.pid, signal.SIGKILL)  # its own session: the launcher and its ranks
                except ProcessLookupError:
                    pass
            p.wait()

    def gpumap_run(self, args, env):
        return subprocess.run([self.gpumap] + args, env=env, capture_output=True, text=True, timeout=60)

    # ---- what gpumap ps says about live ranks ---------------------------------------------
    def ps(self, name, uuid_tail, ranks):
        """`gpumap ps --json` on the node's host listing each rank on the GPU its driver said."""
        _, base = self.host(name + "-base", uuid_tail)
        index_of = {g["uuid"]: i for i, g in enumerate(base["gpus"])}
        processes = {}
        for r in ranks:
            check(r["uuid"] in index_of, "rank %s: its cuda:%d is %s, not a GPU of the host" % (
                r["local_rank"], r["ordinal"], r["uuid"]))
            processes.setdefault(index_of[r["uuid"]], []).append(r["pid"])
        host, _ = self.host(name, uuid_tail, processes)
        res = self.gpumap_run(["ps", "--json", "--simulate", host], self.env(host))
        check(res.returncode in (0, 7), "gpumap ps exited %d: %s" % (res.returncode, res.stderr))
        return json.loads(res.stdout)


def rows_by_pid(ps):
    out = {}
    for row in ps["processes"]:
        out.setdefault(row["pid"], []).append(row)
    return out


def findings(ps, pid):
    """A process's own findings and those of its GPU that name it (ps's top-level findings)."""
    own = [(f["id"], f["severity"]) for row in ps["processes"] if row["pid"] == pid for f in row["findings"]]
    return own + [(f["id"], f["severity"]) for f in ps.get("findings", []) if pid in f["pids"]]


def expect_clean_ps(ps, ranks, what):
    """One rank per GPU, each on the GPU its driver named, nothing above info."""
    by_pid = rows_by_pid(ps)
    check(sorted(by_pid) == sorted(r["pid"] for r in ranks), "%s: ps lists pids %s, the ranks are %s" % (
        what, sorted(by_pid), sorted(r["pid"] for r in ranks)))
    gpus = [row["nvml_index"] for row in ps["processes"]]
    check(len(gpus) == len(set(gpus)), "%s: two ranks on one GPU: %s" % (what, gpus))
    for r in ranks:
        (row,) = by_pid[r["pid"]]
        check(row["uuid"] == r["uuid"], "%s: ps puts pid %d on %s, its driver on %s" % (what, r["pid"], row["uuid"],
                                                                                         r["uuid"]))
        check(row["cuda_ordinal"] == r["ordinal"], "%s: ps says pid %d calls its GPU cuda:%s, it uses cuda:%d" % (
            what, r["pid"], row["cuda_ordinal"], r["ordinal"]))
        above = [f for f in findings(ps, r["pid"]) if f[1] != "info"]
        check(not above, "%s: rank %d (pid %d) has findings above info: %s" % (what, r["local_rank"], r["pid"],
                                                                              above))


def expect_bound(h, ranks, host, first_gpu, keep_visible, what):
    """Each rank r is on GPU first_gpu + r with the variables and CPUs docs/launch.md gives."""
    gpus = host["gpus"]
    for r in ranks:
        lr = r["local_rank"]
        own = first_gpu + lr
        e = r["env"]
        if keep_visible:
            n = len(gpus) - first_gpu  # the job's view: GPUs first_gpu..7
            want = ",".join(str(first_gpu + (lr + i) % n) for i in range(n))
        else:
            want = str(own)
        check(e["CUDA_VISIBLE_DEVICES"] == want, "%s: rank %d: CUDA_VISIBLE_DEVICES=%s, want %s" % (
            what, lr, e["CUDA_VISIBLE_DEVICES"], want))
        check(e["CUDA_DEVICE_ORDER"] == "PCI_BUS_ID", "%s: rank %d: CUDA_DEVICE_ORDER=%s" % (
            what, lr, e["CUDA_DEVICE_ORDER"]))
        check(e["GPUMAP_BOUND"] == want, "%s: rank %d: GPUMAP_BOUND=%s" % (what, lr, e["GPUMAP_BOUND"]))
        check(e["GPUMAP_BOUND_OWN"] == ("1" if keep_visible else None), "%s: rank %d: GPUMAP_BOUND_OWN=%s" % (
            what, lr, e["GPUMAP_BOUND_OWN"]))
        check(r["uuid"] == gpus[own]["uuid"], "%s: rank %d: the driver's cuda:0 is %s, want GPU %d %s" % (
            what, lr, r["uuid"], own, gpus[own]["uuid"]))
        # A simulated host's CPUs are shown, never applied (issue 43): the rank keeps the inherited set.
        # The real pinning is tested on the real driver's path (tests/cli_run_test.cc).
        check(set(r["cpus"]) == set(h.inherited), "%s: rank %d: CPUs %s, want the inherited %s (GPU %d's %s "
              "belong to the simulated host)" % (what, lr, r["cpus"], h.inherited, own, gpus[own]["cpu_affinity"]))


def expect_caught(ps, ranks, shared, what):
    """The broken layouts: ranks other than 0 work off their own GPU (rank-on-wrong-gpu, error);
    `shared`: they all share one GPU, one cause said once (issue 52): ranks-share-gpu, an error,
    with each misplaced rank's rank-on-wrong-gpu as its evidence (`also`), not a finding of its own."""
    for r in ranks:
        fs = findings(ps, r["pid"])
        if shared:
            check(("ranks-share-gpu", "error") in fs, "%s: rank %d: no ranks-share-gpu (error): %s" % (
                what, r["local_rank"], fs))
            check(("rank-on-wrong-gpu", "error") not in fs, "%s: rank %d: rank-on-wrong-gpu besides ranks-share-gpu: %s" % (
                what, r["local_rank"], fs))
            continue
        wrong = ("rank-on-wrong-gpu", "error") in fs
        check(wrong == (r["local_rank"] != 0), "%s: rank %d: rank-on-wrong-gpu %s: %s" % (
            what, r["local_rank"], "missing" if not wrong else "on rank 0", fs))
    if shared:
        also = [a["id"] for f in ps.get("findings", []) if f["id"] == "ranks-share-gpu" for a in f.get("also", [])]
        check(sorted(also) == ["rank-on-wrong-gpu"] * sum(1 for r in ranks if r["local_rank"] != 0),
              "%s: ranks-share-gpu's evidence %s, want one rank-on-wrong-gpu per rank but 0" % (what, also))


# ---- torchrun ------------------------------------------------------------------------------
def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def torchrun(h, python):
    # Debian 12's torch 1.13 on Python 3.11 fails at the default `--redirects 0 --tee 0` (Std.from_str
    # iterates an IntFlag, which no longer yields its 0 member: AttributeError 'NoneType' object has
    # no attribute 'get'); 1 (stdout) parses.  The logs go to the run's own folder.
    run = [python, "-m", "torch.distributed.run", "--redirects", "1", "--tee", "1",
           "--log_dir", os.path.join(h.tmp, "torchelastic")]
    bind = [h.gpumap, "bind"]
    rank = [python, RANK_PY]
    host0, hj0 = h.host("node0", "00")
    host1, hj1 = h.host("node1", "11")

    # 1. Two "nodes" of 4 ranks on loopback, gloo across all 8; node 1's job sees GPUs 4-7.
    d = h.new_run()
    port = free_port()
    common = ["--nnodes", "2", "--nproc_per_node", "4", "--master_addr", "127.0.0.1", "--master_port", str(port),
              "--max_restarts", "0", "--no_python"]
    agents = [h.start(run + common + ["--node_rank", "0", "--"] + bind + ["--"] + rank + [d, "--device", "zero",
                                                                                          "--gloo"],
                      h.env(host0, "0"), "torchrun-node0"),
              h.start(run + common + ["--node_rank", "1", "--"] + bind + ["--"] + rank + [d, "--device", "zero",
                                                                                          "--gloo"],
                      h.env(host1, "1", {"CUDA_VISIBLE_DEVICES": "4,5,6,7"}), "torchrun-node1")]
    ranks = h.reports(d, 8, agents)
    n0 = [r for r in ranks if r["node"] == "0"]
    n1 = [r for r in ranks if r["node"] == "1"]
    check(len(n0) == 4 and len(n1) == 4, "ranks per node: %d, %d" % (len(n0), len(n1)))
    for r in ranks:
        check(r["rank_variable"] == "LOCAL_RANK" and r["env"]["LOCAL_RANK"] == str(r["local_rank"]),
              "torchrun: rank %s has %s=%s" % (r["env"]["RANK"], r["rank_variable"], r["local_rank"]))
        check(r["env"]["WORLD_SIZE"] == "8", "torchrun: WORLD_SIZE=%s" % r["env"]["WORLD_SIZE"])
    check(sorted(r["local_rank"] for r in n0) == [0, 1, 2, 3], "node 0 local ranks")
    check(sorted(int(r["env"]["RANK"]) for r in n1) == [4, 5, 6, 7], "node 1 global ranks")
    expect_bound(h, n0, hj0, 0, False, "torchrun node 0")
    expect_bound(h, n1, hj1, 4, False, "torchrun node 1 (CUDA_VISIBLE_DEVICES=4,5,6,7)")
    gathered = ranks[0]["gathered"]
    check(sorted(g["rank"] for g in gathered) == list(range(8)), "gloo gathered %s" % gathered)
    check(len({(g["node"], g["uuid"]) for g in gathered}) == 8, "gloo: two ranks on one GPU: %s" % gathered)
    expect_clean_ps(h.ps("node0-ps1", "00", n0), n0, "torchrun node 0 ps")
    expect_clean_ps(h.ps("node1-ps1", "11", n1), n1, "torchrun node 1 ps")
    h.finish(d, agents)
    print("ok: torchrun --nnodes 2 --nproc_per_node 4 (gloo on 127.0.0.1:%d) through gpumap bind" % port)

    # 2. bind --keep-visible: every GPU, its own first; code on cuda:0 is right, and not flagged.
    d = h.new_run()
    agent = h.start(run + ["--standalone", "--nproc_per_node", "4", "--max_restarts", "0", "--no_python", "--"] +
                    bind + ["--keep-visible", "--"] + rank + [d, "--device", "zero"], h.env(host0), "torchrun-keep")
    ranks = h.reports(d, 4, [agent])
    expect_bound(h, ranks, hj0, 0, True, "torchrun bind --keep-visible")
    for r in ranks:
        check(r["device_count"] == 8, "keep-visible: rank %d sees %d GPUs" % (r["local_rank"], r["device_count"]))
    expect_clean_ps(h.ps("node0-ps2", "00", ranks), ranks, "torchrun --keep-visible ps")
    h.finish(d, [agent])
    print("ok: torchrun through gpumap bind --keep-visible: rotated lists, cuda:0 is each rank's own GPU")

    # 3. G2 §4.1: CUDA_VISIBLE_DEVICES=3,4,5,6, four ranks, code hard-codes cuda:0: all on GPU 3.
    d = h.new_run()
    agent = h.start(run + ["--standalone", "--nproc_per_node", "4", "--max_restarts", "0", "--no_python", "--"] +
                    rank + [d, "--device", "zero"], h.env(host0, "0", {"CUDA_VISIBLE_DEVICES": "3,4,5,6"}),
                    "torchrun-g2")
    ranks = h.reports(d, 4, [agent])
    check({r["uuid"] for r in ranks} == {hj0["gpus"][3]["uuid"]}, "G2 4.1: the ranks are not all on GPU 3")
    expect_caught(h.ps("node0-ps3", "00", ranks), ranks, True, "G2 4.1 under torchrun")
    h.finish(d, [agent])
    print("ok: G2 4.1 (cuda:0 hard-coded under CUDA_VISIBLE_DEVICES=3,4,5,6) caught by gpumap ps")

    # 4. gpumap bind outside the launcher has no local rank: exit 2, nothing started.
    d = h.new_run()
    res = subprocess.run(bind + ["--"] + run + ["--standalone", "--nproc_per_node", "4", "--no_python", "--"] + rank +
                         [d, "--device", "zero"], env=h.env(host0), capture_output=True, text=True, timeout=60)
    check(res.returncode == 2 and "no local rank" in res.stderr, "bind outside torchrun: %d %s" % (
        res.returncode, res.stderr))
    check(os.listdir(d) == [], "bind outside torchrun started something")
    print("ok: gpumap bind outside torchrun: exit 2 (no local rank), nothing started")


# ---- mpirun --------------------------------------------------------------------------------
def mpirun(h, python):
    mpi = ["mpirun", "--oversubscribe", "--allow-run-as-root", "--bind-to", "none", "-np", "4"]
    bind = [h.gpumap, "bind"]
    rank = [python, RANK_PY]
    host0, hj0 = h.host("node0", "00")

    # 1. Inside an sbatch script every rank inherits SLURM_LOCALID=0: Open MPI's local rank wins.
    d = h.new_run()
    p = h.start(mpi + bind + ["--"] + rank + [d, "--device", "zero"],
                h.env(host0, "0", {"SLURM_LOCALID": "0", "SLURM_JOB_ID": "4711"}), "mpirun")
    ranks = h.reports(d, 4, [p])
    for r in ranks:
        check(r["rank_variable"] == "OMPI_COMM_WORLD_LOCAL_RANK", "mpirun: %s" % r["rank_variable"])
    check(sorted(r["local_rank"] for r in ranks) == [0, 1, 2, 3], "mpirun local ranks")
    expect_bound(h, ranks, hj0, 0, False, "mpirun")
    expect_clean_ps(h.ps("node0-mpi1", "00", ranks), ranks, "mpirun ps")
    h.finish(d, [p])
    with open(os.path.join(h.tmp, "mpirun.log"), errors="replace") as f:
        log = f.read()
    check(log.count("using OMPI_COMM_WORLD_LOCAL_RANK (the innermost launcher's)") == 3,
          "mpirun: bind did not say which rank variable it used:\n" + log)
    print("ok: mpirun -np 4 through gpumap bind (OMPI_COMM_WORLD_LOCAL_RANK over an inherited SLURM_LOCALID=0)")

    # 2. bind --keep-visible, but the code uses cuda:$LOCAL_RANK: another rank's GPU, caught.
    d = h.new_run()
    p = h.start(mpi + bind + ["--keep-visible", "--"] + rank + [d, "--device", "local-rank"], h.env(host0),
                "mpirun-keep")
    ranks = h.reports(d, 4, [p])
    expect_bound_uuids = {r["local_rank"]: hj0["gpus"][(2 * r["local_rank"]) % 8]["uuid"] for r in ranks}
    for r in ranks:
        check(r["uuid"] == expect_bound_uuids[r["local_rank"]], "keep-visible + cuda:LOCAL_RANK: rank %d on %s" % (
            r["local_rank"], r["uuid"]))
    expect_caught(h.ps("node0-mpi2", "00", ranks), ranks, False, "mpirun --keep-visible with cuda:$LOCAL_RANK")
    h.finish(d, [p])
    print("ok: bind --keep-visible with code on cuda:$OMPI_COMM_WORLD_LOCAL_RANK caught (rank-on-wrong-gpu)")

    # 3. No bind, CUDA_VISIBLE_DEVICES=3,4,5,6, hard-coded cuda:0 (G2 4.1 under mpirun).
    d = h.new_run()
    p = h.start(mpi + rank + [d, "--device", "zero"], h.env(host0, "0", {"CUDA_VISIBLE_DEVICES": "3,4,5,6"}),
                "mpirun-g2")
    ranks = h.reports(d, 4, [p])
    expect_caught(h.ps("node0-mpi3", "00", ranks), ranks, True, "G2 4.1 under mpirun")
    h.finish(d, [p])
    print("ok: G2 4.1 under mpirun caught by gpumap ps")


def torch_python():
    for py in (sys.executable, "/usr/bin/python3"):
        find = "import importlib.util, sys; sys.exit(importlib.util.find_spec('torch') is None)"  # no torch import
        if py and os.path.exists(py) and subprocess.run([py, "-c", find], capture_output=True, timeout=60).returncode == 0:
            return py
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gpumap", required=True)
    ap.add_argument("--cuda-lib", required=True)
    ap.add_argument("--hosts", required=True)
    ap.add_argument("launcher", choices=["torchrun", "mpirun"])
    args = ap.parse_args()
    if args.launcher == "torchrun":
        python = torch_python()
        if not python:
            print("SKIP: no python3 with torch.distributed (Debian's python3-torch; scripts/deps.sh installs it)")
            return 77
    else:
        python = sys.executable
        if not shutil.which("mpirun"):
            print("SKIP: no mpirun (Debian's openmpi-bin; scripts/deps.sh installs it)")
            return 77
    h = Harness(args)
    start = time.monotonic()
    try:
        (torchrun if args.launcher == "torchrun" else mpirun)(h, python)
    except Failed as e:
        print("FAIL: %s" % e)
        return 1
    finally:
        h.stop_all()
        shutil.rmtree(h.tmp, ignore_errors=True)
    print("passed in %.1f s" % (time.monotonic() - start))
    return 0


if __name__ == "__main__":
    sys.exit(main())
