"""The driver's answer to one environment, for the tools/device/*.py measurement scripts: builds
tools/difftest/difftest_probe.c (cuInit and device queries only: no context, no GPU memory) once
and runs it under a CUDA_VISIBLE_DEVICES / CUDA_DEVICE_ORDER.  $CUDA_LIB picks the library
(default: the real libcuda.so.1; build/sim/libcuda.so.1 tries a script anywhere).
Outcomes: ("error", NAME), ("devices", [UUID...]), ("signal", N), ("timeout", SECONDS), ("exit", CODE)."""
import os, subprocess, tempfile, threading

_probe = None
_lock = threading.Lock()  # the scripts probe from many threads: one build, finished before any run


def _build():
    global _probe
    with _lock:
        if _probe is None:
            path = os.path.join(tempfile.mkdtemp(prefix="gpumap-cuinit-probe-"), "difftest_probe")
            subprocess.run(["cc", "-O2", "-o", path, "tools/difftest/difftest_probe.c", "-ldl"], check=True)
            _probe = path
    return _probe


def outcome(cvd, cdo=None, timeout=10):
    """cvd, cdo: str or bytes, or None for unset."""
    probe = _build()
    enc = lambda v: v if isinstance(v, bytes) else v.encode("utf-8", "surrogateescape")
    env = {k.encode(): v.encode() for k, v in os.environ.items() if k not in ("CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER")}
    if cvd is not None:
        env[b"CUDA_VISIBLE_DEVICES"] = enc(cvd)
    if cdo is not None:
        env[b"CUDA_DEVICE_ORDER"] = enc(cdo)
    args = [probe] + ([os.environ["CUDA_LIB"]] if os.environ.get("CUDA_LIB") else [])
    try:
        r = subprocess.run(args, env=env, capture_output=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return ("timeout", timeout)
    if r.returncode < 0:
        return ("signal", -r.returncode)
    if r.returncode != 0:
        return ("exit", r.returncode)
    lines = r.stdout.decode(errors="replace").split("\n")
    if lines[0].startswith("error"):
        return ("error", lines[0].split()[1])
    return ("devices", [l.split()[1] for l in lines if l.startswith("uuid ")])


def label(o):
    """An outcome as the scripts print it: CUDA_ERROR_..., "count N", SIGNAL_11, TIMEOUT_10s, EXIT_3."""
    kind, v = o
    return {"error": lambda: v, "devices": lambda: "count %d" % len(v), "signal": lambda: "SIGNAL_%d" % v,
            "timeout": lambda: "TIMEOUT_%ds" % v, "exit": lambda: "EXIT_%d" % v}[kind]()
