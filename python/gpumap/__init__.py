"""gpumap: which physical GPU this program runs on, and making it the one you meant.

Put this at the top of a program, before anything starts CUDA::

    import gpumap
    gpus = gpumap.pin(gpus=1)            # pick a free GPU, lease it, set CUDA_VISIBLE_DEVICES
    import torch                          # cuda:0 is now the leased GPU

Standard library only: the work is done by libgpumap.so (ctypes), which never initialises
CUDA in this process.  GPUs are named physically everywhere: an int is an nvidia-smi index;
a string is a UUID (or a unique prefix), a MIG device UUID, or a PCI bus id.

The library is found in $GPUMAP_LIBRARY (a file), $GPUMAP_BUILD_DIR, the source checkout's
build/ folder, a copy bundled by `pip install`, or the system's library path.  The variables
gpumap itself reads (GPUMAP_SIMULATE, GPUMAP_LOCK_DIR, GPUMAP_CACHE_DIR, ...) are honoured
as the gpumap command honours them.  See docs/library.md.
"""

import os
import sys
import threading

__all__ = [
    "GpumapError", "NoDriverError", "CudaInitError", "MismatchError", "NotEnoughGpusError", "TooLateError",
    "NotVisibleError", "devices", "verify", "pin", "Pinned", "which", "max_memory", "check_device_map",
    "cuda_initialized", "library_version",
]


class GpumapError(Exception):
    """Every gpumap error.  .code is the gpumap exit code, .hint the fix, .details the rest."""

    def __init__(self, message, hint="", code=1, details=None):
        super().__init__(message + (f"\n  hint: {hint}" if hint else ""))
        self.message = message
        self.hint = hint
        self.code = code
        self.details = details or {}


class NoDriverError(GpumapError):
    """No NVIDIA driver library could be loaded or initialised (or libgpumap itself is missing)."""


class CudaInitError(GpumapError):
    """CUDA would fail to initialise in this environment; .cuda_error is the CUDA error name."""

    @property
    def cuda_error(self):
        return self.details.get("cuda_error")


class MismatchError(GpumapError):
    """The visible GPUs are not the expected ones; .differences in words, .fix the environment to set."""

    @property
    def differences(self):
        return self.details.get("differences", [])

    @property
    def fix(self):
        return self.details.get("fix") or {}


class NotEnoughGpusError(GpumapError):
    """Not enough GPUs qualify; .passed_over maps each GPU's nvidia-smi index to pick's reasons."""

    @property
    def passed_over(self):
        return {p["nvml_index"]: p["reasons"] for p in self.details.get("passed_over", [])}


class TooLateError(GpumapError):
    """CUDA is already initialised in this process: CUDA_VISIBLE_DEVICES would change nothing."""


class NotVisibleError(GpumapError):
    """A GPU or cuda ordinal that this process cannot see."""


_BY_CODE = {3: NoDriverError, 4: MismatchError, 5: CudaInitError, 6: NotEnoughGpusError, 8: TooLateError}
_API_VERSION = 1
_lock = threading.Lock()
_lib = None
_sessions = {}


def _library_candidates():
    env = os.environ.get("GPUMAP_LIBRARY")
    if env:  # an explicit file: that one or none
        yield env
        return
    here = os.path.dirname(os.path.abspath(__file__))
    build = os.environ.get("GPUMAP_BUILD_DIR")
    if build:
        yield os.path.join(build, "libgpumap.so.1")
    yield os.path.join(here, "_lib", "libgpumap.so.1")             # bundled by pip install
    yield os.path.normpath(os.path.join(here, "..", "..", "build", "libgpumap.so.1"))  # a source checkout
    yield os.path.normpath(os.path.join(here, "..", "..", "..", "libgpumap.so.1"))  # cmake --install: PREFIX/lib
    yield "libgpumap.so.1"                                           # the system's library path
    for prefix in ("/usr/local/lib", "/usr/lib/x86_64-linux-gnu", "/usr/lib", os.path.join(sys.prefix, "lib")):
        yield os.path.join(prefix, "libgpumap.so.1")


def _load():
    global _lib
    if _lib is not None:
        return _lib
    import ctypes

    tried = []
    for path in _library_candidates():
        if os.sep in path and not os.path.exists(path):
            tried.append(path)
            continue
        try:
            lib = ctypes.CDLL(path)
        except OSError as e:
            tried.append(f"{path} ({e})")
            continue
        break
    else:
        raise NoDriverError(
            "libgpumap.so.1 was not found (tried: " + ", ".join(tried) + ")",
            "build it (scripts/test.sh, or cmake --build build), or set GPUMAP_BUILD_DIR to the build folder",
            code=3)
    P = ctypes.c_void_p
    S = ctypes.c_char_p
    out = ctypes.POINTER(ctypes.c_void_p)
    for name, args in (("gpumap_open", [S, out]), ("gpumap_devices", [P, out]), ("gpumap_verify", [P, S, out]),
                       ("gpumap_locate", [P, S, out]), ("gpumap_pin", [P, S, out]), ("gpumap_release", [ctypes.c_int]),
                       ("gpumap_close", [P]), ("gpumap_free", [P]), ("gpumap_cuda_initialized", []),
                       ("gpumap_api_version", [])):
        getattr(lib, name).argtypes = args
        getattr(lib, name).restype = None if name in ("gpumap_close", "gpumap_free") else ctypes.c_int
    lib.gpumap_last_error.restype = S
    lib.gpumap_version.restype = S
    if lib.gpumap_api_version() != _API_VERSION:
        raise GpumapError(f"libgpumap ({path}) speaks API version {lib.gpumap_api_version()}, this package {_API_VERSION}",
                          "install matching versions of the library and the Python package")
    _lib = lib
    return lib


def _json():
    import json
    return json


def _raise_last(lib, rc):
    text = lib.gpumap_last_error().decode("utf-8", "replace")
    info = _json().loads(text) if text else {}
    cls = _BY_CODE.get(rc, GpumapError)
    raise cls(info.get("message", f"gpumap call failed ({rc})"), info.get("hint", ""), rc, info)


def _call(lib, fn, *args, ok=(0,)):
    """Calls fn(*args, &result); returns (rc, parsed result or None); raises unless rc in ok."""
    import ctypes

    result = ctypes.c_void_p()
    rc = fn(*args, ctypes.byref(result))
    data = None
    if result.value:
        data = _json().loads(ctypes.string_at(result.value).decode("utf-8"))
        lib.gpumap_free(result)
    if rc not in ok:
        _raise_last(lib, rc)
    return rc, data


def _options():
    """The session options from this process's environment, as the gpumap command reads them."""
    env = os.environ
    cache = env.get("GPUMAP_CACHE_DIR") or (env.get("XDG_CACHE_HOME") and env["XDG_CACHE_HOME"] + "/gpumap") or (
        env.get("HOME") and env["HOME"] + "/.cache/gpumap") or ""
    opts = {"simulate": env.get("GPUMAP_SIMULATE") or None, "lock_dir": env.get("GPUMAP_LOCK_DIR") or None,
            "cache_dir": cache or None, "hosts_dir": env.get("GPUMAP_HOSTS_DIR") or None,
            "sim_lib_dir": env.get("GPUMAP_SIM_LIBDIR") or None, "driver_timeout": env.get("GPUMAP_DRIVER_TIMEOUT") or None}
    return _json().dumps({k: v for k, v in opts.items() if v is not None}, sort_keys=True)


def _session(lib):
    import ctypes

    key = _options()
    s = _sessions.get(key)
    if s is None:
        handle = ctypes.c_void_p()
        rc = lib.gpumap_open(key.encode(), ctypes.byref(handle))
        if rc != 0:
            _raise_last(lib, rc)
        s = _sessions[key] = handle
    return s


def library_version():
    """The libgpumap release in use ("0.1.0")."""
    return _load().gpumap_version().decode()


def devices():
    """This process's CUDA devices, cuda:0 first: [{cuda_ordinal, nvml_index, uuid, pci_bus_id, name}].

    What `gpumap map --json` says for this environment.  Raises CudaInitError (with the reason
    and the fix) where CUDA would fail to initialise."""
    lib = _load()
    with _lock:
        _, data = _call(lib, lib.gpumap_devices, _session(lib))
    return data["devices"]


def verify(expect, prefix=False):
    """Returns None when cuda:0, cuda:1, ... are exactly `expect` (a GPU or a list of them);
    with prefix=True only the first len(expect) must match.  Raises MismatchError naming each
    difference, with .fix the CUDA_VISIBLE_DEVICES value to set before CUDA starts."""
    if isinstance(expect, (int, str)):
        expect = [expect]
    lib = _load()
    req = _json().dumps({"expect": [_gpu_name(g) for g in expect], "prefix": bool(prefix)})
    with _lock:
        _call(lib, lib.gpumap_verify, _session(lib), req.encode())


def _gpu_name(g):
    if isinstance(g, bool) or not isinstance(g, (int, str)):
        raise GpumapError(f"{g!r} is not a GPU",
                          "name a GPU by nvidia-smi index (int), UUID or prefix, MIG UUID, or PCI bus id (str)", 2)
    return g


def cuda_initialized():
    """True when CUDA is already initialised in this process (torch.cuda, or the driver library)."""
    torch = sys.modules.get("torch")
    if torch is not None:
        try:
            if torch.cuda.is_initialized():
                return True
        except Exception:  # a torch without CUDA support
            pass
    return bool(_load().gpumap_cuda_initialized())


class Pinned:
    """GPUs leased by pin(): .devices (as devices() now lists them), .uuids, .environment (what
    pin set), .lease_dir.  The lease ends at .release() or when this process exits."""

    def __init__(self, data):
        self._lease = data["lease"]
        self.devices = data["devices"]
        self.environment = data["environment"]
        self.lease_dir = data["lease_dir"]
        self.uuids = self.environment["CUDA_VISIBLE_DEVICES"].split(",")

    def release(self):
        """Ends the lease now (a second call does nothing).  The environment stays as pin set it."""
        if self._lease is None:
            return
        lib = _load()
        with _lock:
            rc = lib.gpumap_release(self._lease)
        self._lease = None
        if rc != 0:
            _raise_last(lib, rc)

    @property
    def held(self):
        return self._lease is not None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.release()

    def __repr__(self):
        state = "held" if self.held else "released"
        return f"<gpumap.Pinned {','.join(self.uuids)} ({state})>"


def pin(gpus=1, min_free_mib=None, max_util=None, include=None, exclude=None, wait=None, allow_busy=False):
    """Picks GPUs exactly as `gpumap pick` among those this process can see, leases them (the
    lock files `gpumap run` uses: no other gpumap gets them), and sets os.environ's
    CUDA_DEVICE_ORDER=PCI_BUS_ID and CUDA_VISIBLE_DEVICES=<their UUIDs>, so cuda:0.. are them.

    include/exclude: GPUs (or one GPU).  wait: seconds to wait for GPUs to qualify.
    Returns a Pinned.  Raises TooLateError when CUDA already started here, NotEnoughGpusError
    (.passed_over says why for each GPU) when not enough qualify."""
    if cuda_initialized():
        raise TooLateError(
            "CUDA is already initialised in this process: CUDA_VISIBLE_DEVICES set now would change nothing",
            "call gpumap.pin() before anything starts CUDA (before torch.cuda is used, ideally at the top of the program)",
            8)

    def names(v):
        if v is None:
            return []
        return [_gpu_name(g) for g in ([v] if isinstance(v, (int, str)) else v)]

    req = {"gpus": gpus, "min_free_mib": min_free_mib, "max_util": max_util, "include": names(include),
           "exclude": names(exclude), "allow_busy": bool(allow_busy), "wait": wait, "command": sys.argv[:] or None}
    if req["command"] is None or not all(isinstance(a, str) for a in req["command"]):
        req["command"] = [sys.executable]
    lib = _load()
    with _lock:
        _, data = _call(lib, lib.gpumap_pin, _session(lib), _json().dumps(req).encode())
    os.environ.update(data["environment"])
    return Pinned(data)


def _locate(gpus, whole=False):
    lib = _load()
    with _lock:
        _, data = _call(lib, lib.gpumap_locate, _session(lib), _json().dumps(gpus).encode())
    return data if whole else data["gpus"]


def which(gpus):
    """{"CUDA_VISIBLE_DEVICES": value} that makes exactly these GPUs (one, or a list, named
    physically) cuda:0, cuda:1, ... in that order (`gpumap which`'s UUID form: it survives
    reboots and containers).  For a child process's environment, or os.environ before CUDA starts."""
    names = [_gpu_name(g) for g in ([gpus] if isinstance(gpus, (int, str)) else gpus)]
    if not names:
        raise GpumapError("which() needs at least one GPU", "e.g. gpumap.which([2, 3])", 2)
    data = _locate(names, whole=True)
    seen = {}
    for name, loc in zip(names, data["gpus"]):
        if loc["uuid"] in seen:
            raise GpumapError(f"GPU {name!r} and {seen[loc['uuid']]!r} are the same GPU ({loc['uuid']}): "
                              "a repeated GPU makes cuInit fail", "name each GPU once", 2)
        seen[loc["uuid"]] = name
    return data["environment"]


_NOT_GPUS = ("cpu", "disk", "meta", "mps")


def max_memory(sizes):
    """{GPU: size, ...} with GPUs named physically (int: nvidia-smi index) -> the dict keyed by
    CUDA ordinal that transformers/accelerate expect (max_memory=...).  "cpu"/"disk" keys pass
    through.  Raises NotVisibleError for a GPU this process cannot see."""
    out = {}
    gpus = [k for k in sizes if not (isinstance(k, str) and k in _NOT_GPUS)]
    located = _locate([_gpu_name(k) for k in gpus])
    for key, loc in zip(gpus, located):
        if loc["cuda_ordinal"] is None:
            raise NotVisibleError(
                f"GPU {key!r} (nvidia-smi GPU {loc['nvml_index']}, {loc['uuid']}) is not visible to this process",
                "make it visible before CUDA starts: gpumap.pin(include=...) or CUDA_VISIBLE_DEVICES "
                "(`gpumap which` prints the value)", 2, {"uuid": loc["uuid"]})
        out[loc["cuda_ordinal"]] = sizes[key]
    for key in sizes:
        if isinstance(key, str) and key in _NOT_GPUS:
            out[key] = sizes[key]
    return out


def _ordinal_of(value):
    """A device_map value's cuda ordinal, or None for cpu/disk/meta."""
    if isinstance(value, bool):
        raise GpumapError(f"device {value!r} is not a device", "use an int (cuda ordinal), 'cuda:N', 'cpu' or 'disk'", 2)
    if isinstance(value, int):
        return value
    text = str(value)  # torch.device prints as "cuda:1"
    if text in _NOT_GPUS:
        return None
    if text == "cuda":
        return 0
    if text.startswith("cuda:") and text[5:].isdigit():
        return int(text[5:])
    raise GpumapError(f"device {value!r} is not a device", "use an int (cuda ordinal), 'cuda:N', 'cpu' or 'disk'", 2)


def check_device_map(device_map):
    """For each key of a device_map (transformers/accelerate, or model.hf_device_map): the
    physical GPU its value lands on, as a devices() entry ("cpu"/"disk" stay as they are).
    Raises NotVisibleError for values that are not visible cuda ordinals here."""
    visible = devices()
    out = {}
    for key, value in device_map.items():
        ordinal = _ordinal_of(value)
        if ordinal is None:
            out[key] = str(value)
            continue
        if not 0 <= ordinal < len(visible):
            raise NotVisibleError(
                f"device_map[{key!r}] = {value!r}: cuda:{ordinal} does not exist here "
                f"(this process sees {len(visible)} GPU{'s' if len(visible) != 1 else ''})",
                "device_map values are CUDA ordinals of this process: build them with gpumap.max_memory() "
                "or from gpumap.devices()", 2, {"key": key})
        out[key] = visible[ordinal]
    return out
