"""A stand-in rank for tests/launchers/launchers_test.py, started by torchrun or mpirun (through
`gpumap bind` or not).  It asks the CUDA driver it is given (the simulated libcuda.so.1 of the
build, serving $GPUMAP_SIMULATE) which physical GPU its chosen cuda:N is, optionally joins a gloo
process group (torch.distributed, on loopback) and gathers every rank's answer, writes one JSON
report, then stays alive until the harness creates the file `go` (so `gpumap ps` can see it).

usage: rank.py REPORT_DIR --device zero|local-rank [--gloo]
  --device zero        the rank works on cuda:0 (what `gpumap bind` asks for)
  --device local-rank  the rank works on cuda:$LOCAL_RANK (or the MPI local rank)
Stdlib only, except torch.distributed for --gloo."""
import ctypes
import json
import os
import sys
import time


def local_rank():
    for name in ("LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_RANK"):
        if name in os.environ:
            return name, int(os.environ[name])
    raise SystemExit("rank.py: no local rank in the environment")


def cuda_uuid(ordinal):
    """(device count, UUID of cuda:ordinal or None) from the driver: cuInit, cuDeviceGet, cuDeviceGetUuid."""
    os.environ["GPUMAP_FAKE_HOST"] = os.environ["GPUMAP_SIMULATE"]  # the simulated driver's host file
    lib = ctypes.CDLL(os.environ["RANK_CUDA_LIB"])
    if lib.cuInit(0) != 0:
        return 0, None
    n = ctypes.c_int(0)
    lib.cuDeviceGetCount(ctypes.byref(n))
    if ordinal >= n.value:
        return n.value, None
    dev = ctypes.c_int(0)
    raw = (ctypes.c_ubyte * 16)()
    if lib.cuDeviceGet(ctypes.byref(dev), ordinal) != 0 or lib.cuDeviceGetUuid(raw, dev) != 0:
        return n.value, None
    h = bytes(raw).hex()
    return n.value, "GPU-%s-%s-%s-%s-%s" % (h[:8], h[8:12], h[12:16], h[16:20], h[20:])


def main():
    out_dir, mode = sys.argv[1], sys.argv[sys.argv.index("--device") + 1]
    variable, rank = local_rank()
    ordinal = 0 if mode == "zero" else rank
    count, uuid = cuda_uuid(ordinal)
    report = {
        "pid": os.getpid(),
        "node": os.environ.get("RANK_NODE", "0"),
        "rank_variable": variable,
        "local_rank": rank,
        "env": {k: os.environ.get(k) for k in ("CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER", "GPUMAP_BOUND",
                                                "GPUMAP_BOUND_OWN", "LOCAL_RANK", "RANK", "WORLD_SIZE",
                                                "OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_RANK")},
        "cpus": sorted(os.sched_getaffinity(0)),
        "ordinal": ordinal,
        "device_count": count,
        "uuid": uuid,
    }
    if "--gloo" in sys.argv:
        import torch.distributed as dist
        import datetime
        # env:// from torchrun: MASTER_ADDR, MASTER_PORT, RANK, WORLD_SIZE.  A short timeout: a peer that
        # died (a failed test) must not keep this one waiting for gloo's default 30 minutes.
        dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=120))
        everyone = [None] * dist.get_world_size()
        dist.all_gather_object(everyone, {"rank": dist.get_rank(), "node": report["node"], "uuid": uuid})
        report["gathered"] = everyone
        dist.barrier()
        dist.destroy_process_group()
    tmp = os.path.join(out_dir, ".rank-%d.json" % os.getpid())
    with open(tmp, "w") as f:
        json.dump(report, f)
    os.rename(tmp, os.path.join(out_dir, "rank-%d.json" % os.getpid()))
    # Until the harness says go, or gave up (its folder is gone), or 240 s.
    deadline = time.monotonic() + 240
    while not os.path.exists(os.path.join(out_dir, "go")) and os.path.isdir(out_dir) and time.monotonic() < deadline:
        time.sleep(0.05)


if __name__ == "__main__":
    main()
