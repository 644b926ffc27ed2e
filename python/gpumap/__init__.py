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
gpumap itself reads (GPUMAP_SIMULATE, GPUMAP_LOCK_DIR, GPUMAP_CACHE_DIR, ...) are passed to the
library as they are, which honours them as the gpumap command does.  See docs/library.md.
"""

from __future__ import annotations

import os
import sys
import threading

TYPE_CHECKING = False
if TYPE_CHECKING:  # (annotations only: `typing` is not imported at run time, to keep `import gpumap` cheap)
    from typing import Any, Dict, Optional, Sequence, Union

    # A GPU named physically: an int is an nvidia-smi index; a str a UUID (or unique prefix), a MIG
    # device UUID or a PCI bus id.
    Gpu = Union[int, str]

__all__ = [
    "GpumapError", "ArgumentTypeError", "ArgumentValueError", "LibraryNotFoundError", "NoDriverError", "CudaInitError",
    "MismatchError",
    "NotEnoughGpusError", "TooLateError", "NotVisibleError", "devices", "DeviceList", "verify", "pin", "Pinned",
    "which", "max_memory", "check_max_memory", "check_device_map", "diagnose", "Diagnosis", "Finding", "line",
    "cuda_initialized", "library_version", "local_device", "ReKeyedWarning", "SetTooLateWarning",
    "framework_versions", "cuda_start_state", "cuda_start_failed",
]


def _one_line(text):
    """`text` on one line: its line breaks and runs of white space as single spaces."""
    return " ".join(str(text).split())


class GpumapError(Exception):
    """Every gpumap error.  str() is one line: the message, then the hint after "; hint: ".
    .message and .hint as the library gave them, .code the gpumap exit code, .details the rest (the
    library's whole answer: a MismatchError's .differences, a CudaInitError's .cuda_error, ...)."""

    def __init__(self, message, hint="", code=1, details=None):
        super().__init__(_one_line(message) + (f"; hint: {_one_line(hint)}" if hint else ""))
        self.message = message
        self.hint = hint
        self.code = code
        self.details = details or {}


class ArgumentTypeError(GpumapError, TypeError):
    """An argument of the wrong type (verify(None), max_memory([1])); code 2."""


class ArgumentValueError(GpumapError, ValueError):
    """An argument of the right type but a bad value (pin(gpus=0), a negative size); code 2."""


def _bad_type(what, value, expected):
    raise ArgumentTypeError(f"{what}: {value!r} is not {expected}", f"pass {expected}", 2)


def _bad_value(what, value, expected):
    raise ArgumentValueError(f"{what}: {value!r} is not {expected}", f"pass {expected}", 2)


class LibraryNotFoundError(GpumapError):
    """gpumap's own library (libgpumap.so.1) is not where this package looked: the package was
    used from a source checkout that has not built it, or installed without it.  Not the NVIDIA
    driver (that is NoDriverError).  .tried lists the places looked at; code 1."""

    @property
    def tried(self):
        return self.details.get("tried", [])


class NoDriverError(GpumapError):
    """No NVIDIA driver library could be loaded or initialised."""


class CudaInitError(GpumapError):
    """CUDA would fail to initialise in this environment; .cuda_error is the CUDA error name."""

    @property
    def cuda_error(self):
        return self.details.get("cuda_error")


class MismatchError(GpumapError):
    """The visible GPUs are not the expected ones.  str() is one line (the first difference, the
    others counted); .differences has every one in words (with UUIDs), .fix the environment to set,
    .findings the findings of the run (set-too-late once CUDA runs here), .source live/predicted."""

    @property
    def differences(self):
        return self.details.get("differences", [])

    @property
    def findings(self):
        return [Finding(f) for f in self.details.get("findings", [])]

    @property
    def source(self):
        return self.details.get("source")

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


def _after_fork_in_child():
    """A child made by fork() has only the forking thread: a lock another thread held at the
    fork would stay held forever there.  The library renews its own state (its driver threads)."""
    global _lock
    _lock = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


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
        raise LibraryNotFoundError(
            "gpumap's library libgpumap.so.1 was not found (tried: " + ", ".join(tried) + ")",
            "in a source checkout build it with scripts/run.sh (or: cmake --build build --target gpumap_shared); "
            "elsewhere pip install pygpumap, or set GPUMAP_LIBRARY to the file or GPUMAP_BUILD_DIR to the build folder",
            code=1, details={"tried": tried})
    P = ctypes.c_void_p
    S = ctypes.c_char_p
    out = ctypes.POINTER(ctypes.c_void_p)
    for name, args in (("gpumap_open", [S, out]), ("gpumap_devices", [P, out]), ("gpumap_verify", [P, S, out]),
                       ("gpumap_locate", [P, S, out]), ("gpumap_pin", [P, S, out]), ("gpumap_diagnose", [P, S, out]), ("gpumap_release", [ctypes.c_int]),
                       ("gpumap_close", [P]), ("gpumap_free", [P]), ("gpumap_cuda_initialized", []),
                       ("gpumap_api_version", [])):
        getattr(lib, name).argtypes = args
        getattr(lib, name).restype = None if name in ("gpumap_close", "gpumap_free") else ctypes.c_int
    lib.gpumap_last_error.restype = S
    lib.gpumap_version.restype = S
    lib.gpumap_environment_variables.restype = S
    lib.gpumap_environment_variables.argtypes = []
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


def _options(lib):
    """The session options: this process's values of the variables the library lists as gpumap's
    own settings (GPUMAP_SIMULATE, GPUMAP_CACHE_DIR, HOME, ...), raw: the library reads them as the
    gpumap command reads its environment."""
    global _seam_names
    if _seam_names is None:
        table = _json().loads(lib.gpumap_environment_variables().decode("utf-8"))
        _seam_names = [v["name"] for v in table if "seams" in v["read_by"]]
    env = {n: os.environ[n] for n in _seam_names if n in os.environ}
    return _json().dumps({"environment": env}, sort_keys=True)


_seam_names = None


def _session(lib):
    import ctypes

    key = _options(lib)
    s = _sessions.get(key)
    if s is None:
        handle = ctypes.c_void_p()
        rc = lib.gpumap_open(key.encode(), ctypes.byref(handle))
        if rc != 0:
            _raise_last(lib, rc)
        s = _sessions[key] = handle
    return s


def library_version() -> str:
    """The libgpumap release in use ("0.1.0")."""
    return _load().gpumap_version().decode()


class DeviceList(list):
    """devices()'s answer: a list of {cuda_ordinal, nvml_index, uuid, pci_bus_id, name, memory_total_mib,
    memory_used_mib, mig} (the objects of `gpumap map --json`'s cuda.devices), plus
    .source ("live": CUDA already runs in this process and the driver said so; "predicted": from
    the environment, before CUDA starts) and .findings (before CUDA starts: what `gpumap doctor` finds in
    this environment; once it runs: set-too-late when the environment now says otherwise)."""

    def __init__(self, rows, source, findings):
        super().__init__(rows)
        self.source = source
        self.findings = [Finding(f) for f in findings]


_warned = set()


class SetTooLateWarning(RuntimeWarning):
    """CUDA already runs in this process and its variables changed since it started: setting them
    now changes nothing.  str() is one line (what happened, and the fix when there is one); the
    whole finding is .finding (a Finding: .message with the GPUs CUDA uses and the ones the values
    now would give, .fix, .note)."""

    def __init__(self, finding):
        self.finding = Finding(finding)
        first = self.finding.message.split(". ")[0]
        super().__init__("gpumap: set-too-late: " + _one_line(first) +
                         (f"; fix: {_one_line(self.finding.fix)}" if self.finding.fix else
                          "; CUDA keeps the GPUs it started with (.finding says which)"))


def _warn_late(findings):
    """A set-too-late finding as a SetTooLateWarning (a RuntimeWarning), once per distinct message."""
    for f in findings:
        if f.get("id") == "set-too-late" and f["message"] not in _warned:
            _warned.add(f["message"])
            import warnings
            warnings.warn(SetTooLateWarning(f), stacklevel=3)


def devices() -> DeviceList:
    """This process's CUDA devices, cuda:0 first: [{cuda_ordinal, nvml_index, uuid, pci_bus_id, name, ...}],
    each the object `gpumap map --json` writes for it (a MIG device: its own name, memory and "mig").

    Once CUDA runs in this process (torch started it), the live driver's answer (.source == "live"):
    CUDA read CUDA_VISIBLE_DEVICES once, when it started, so a later os.environ change is not what
    it uses (a RuntimeWarning and .findings say so).  Before that, what `gpumap map --json` predicts
    for os.environ now (.source == "predicted").  [] under CUDA_VISIBLE_DEVICES=-1 or "" (CPU only, on
    purpose; also without an NVIDIA driver), not under "-1,0" (doctor: an error; CudaInitError here).
    Raises CudaInitError (with the reason and the fix) where CUDA would fail to initialise."""
    lib = _load()
    with _lock:
        _, data = _call(lib, lib.gpumap_devices, _session(lib))
    _add_state_findings(data)
    _warn_late(data.get("findings", []))
    return DeviceList(data["devices"], data.get("source", "predicted"), data.get("findings", []))


def verify(expect: Union[Gpu, Sequence[Gpu]], prefix: bool = False) -> None:
    """Returns None when cuda:0, cuda:1, ... are exactly `expect` (a GPU or a list of them);
    with prefix=True only the first len(expect) must match.  Once CUDA runs in this process the
    GPUs compared are the ones it really uses (live), not what os.environ says now.  Raises
    MismatchError naming each difference, with .fix the CUDA_VISIBLE_DEVICES value to set
    before CUDA starts (when CUDA already runs: on the relaunched command line, .hint says how)."""
    names = _gpu_names(expect, "verify(expect=...)")
    if not names:
        _bad_value("verify(expect=...)", expect, "at least one GPU")
    if not isinstance(prefix, bool):
        _bad_type("verify(prefix=...)", prefix, "True or False")
    lib = _load()
    req = _json().dumps({"expect": names, "prefix": prefix})
    with _lock:
        _call(lib, lib.gpumap_verify, _session(lib), req.encode())


_GPU_FORMS = "a GPU: an nvidia-smi index (int >= 0), or a UUID, unique UUID prefix, MIG UUID or PCI bus id (str)"


def _gpu_name(g, what="GPU"):
    if isinstance(g, bool) or not isinstance(g, (int, str)):
        _bad_type(what, g, _GPU_FORMS)
    if isinstance(g, int) and not 0 <= g < 2**31:
        _bad_value(what, g, _GPU_FORMS)
    if isinstance(g, str) and (not g.strip() or "\x00" in g):
        _bad_value(what, g, _GPU_FORMS)
    return g


def _gpu_names(gpus, what):
    """One GPU or a list/tuple of them -> a list of names."""
    if isinstance(gpus, (int, str)) and not isinstance(gpus, bool):
        return [_gpu_name(gpus, what)]
    if not isinstance(gpus, (list, tuple)):
        _bad_type(what, gpus, "a GPU or a list of GPUs")
    return [_gpu_name(g, what) for g in gpus]


def cuda_initialized() -> bool:
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


def pin(gpus: int = 1, min_free_mib: Optional[int] = None, max_util: Optional[int] = None,
        include: Optional[Union[Gpu, Sequence[Gpu]]] = None, exclude: Optional[Union[Gpu, Sequence[Gpu]]] = None,
        wait: Optional[float] = None, allow_busy: bool = False, allow_unknown: bool = False) -> Pinned:
    """Picks GPUs exactly as `gpumap pick` among those this process can see, leases them (the
    lock files `gpumap run` uses: no other gpumap gets them), and sets os.environ's
    CUDA_DEVICE_ORDER=PCI_BUS_ID and CUDA_VISIBLE_DEVICES=<their UUIDs>, so cuda:0.. are them.

    include/exclude: GPUs (or one GPU).  wait: seconds to wait for GPUs to qualify.  A GPU whose
    process list (or, with max_util, utilisation) the driver cannot read is never taken as idle
    unless allow_unknown=True.
    Returns a Pinned.  Raises TooLateError when CUDA already started here, NotEnoughGpusError
    (.passed_over says why for each GPU) when not enough qualify."""
    if cuda_initialized():
        raise TooLateError(
            "CUDA is already initialised in this process: CUDA_VISIBLE_DEVICES set now would change nothing",
            "call gpumap.pin() before anything starts CUDA (before torch.cuda is used, ideally at the top of the program)",
            8)

    _whole("pin(gpus=...)", gpus, 1, 4096)
    if min_free_mib is not None:
        _whole("pin(min_free_mib=...)", min_free_mib, 0, 2**40)
    if max_util is not None:
        _whole("pin(max_util=...)", max_util, 0, 100)
    if wait is not None:
        if isinstance(wait, bool) or not isinstance(wait, (int, float)):
            _bad_type("pin(wait=...)", wait, "a number of seconds")
        if not 0 <= wait <= 1e7:  # also NaN
            _bad_value("pin(wait=...)", wait, "a number of seconds from 0 to 10000000")
    for name, flag in (("allow_busy", allow_busy), ("allow_unknown", allow_unknown)):
        if not isinstance(flag, bool):
            _bad_type(f"pin({name}=...)", flag, "True or False")
    req = {"gpus": gpus, "min_free_mib": min_free_mib, "max_util": max_util,
           "include": [] if include is None else _gpu_names(include, "pin(include=...)"),
           "exclude": [] if exclude is None else _gpu_names(exclude, "pin(exclude=...)"),
           "allow_busy": allow_busy, "allow_unknown": allow_unknown, "wait": wait, "command": _display_argv()}
    lib = _load()
    with _lock:
        data = _pin_interruptibly(lib, req)
    os.environ.update(data["environment"])
    return Pinned(data)


def _pin_interruptibly(lib, req):
    """gpumap_pin, stoppable by a signal while it waits.  Python runs a signal's handler (Ctrl-C's
    KeyboardInterrupt) only between bytecodes, never during a ctypes call, so in the main thread
    the library gets the read end of a pipe that signal.set_wakeup_fd writes each signal to: the
    library stops waiting, the handler runs as the call returns.  A handler that returns without
    raising (a SIGCHLD handler, say) lets the wait go on for the time left."""
    import time

    wait = req.get("wait") or 0
    if wait <= 0 or threading.current_thread() is not threading.main_thread():
        return _call(lib, lib.gpumap_pin, _session(lib), _json().dumps(req).encode())[1]
    import signal

    deadline = time.monotonic() + wait
    r, w = os.pipe()
    try:
        os.set_blocking(r, False)
        os.set_blocking(w, False)
        try:
            previous = signal.set_wakeup_fd(w, warn_on_full_buffer=False)
        except ValueError:  # not the main interpreter's main thread after all
            return _call(lib, lib.gpumap_pin, _session(lib), _json().dumps(req).encode())[1]
        try:
            while True:
                rc, data = _call(lib, lib.gpumap_pin, _session(lib), _json().dumps(dict(req, interrupt_fd=r)).encode(),
                                 ok=(0, 1))
                if rc == 0:
                    return data
                info = _json().loads(lib.gpumap_last_error().decode("utf-8", "replace") or "{}")
                arrived = _drain(r)
                if previous >= 0 and arrived:  # the signals belong to whoever set that descriptor too
                    try:
                        os.write(previous, arrived)
                    except OSError:
                        pass
                if not info.get("interrupted"):
                    _raise_last(lib, rc)
                # The handler has run (it raises here, as the call returned, if it raises at all).
                left = deadline - time.monotonic()
                req = dict(req, wait=max(left, 0))
                if left <= 0:
                    return _call(lib, lib.gpumap_pin, _session(lib), _json().dumps(req).encode())[1]
        finally:
            signal.set_wakeup_fd(previous)
    finally:
        os.close(r)
        os.close(w)


def _drain(fd):
    out = b""
    while True:
        try:
            chunk = os.read(fd, 512)
        except BlockingIOError:
            return out
        if not chunk:
            return out
        out += chunk


def _whole(what, value, lo, hi):
    if isinstance(value, bool) or not isinstance(value, int):
        _bad_type(what, value, f"a whole number from {lo} to {hi}")
    if not lo <= value <= hi:
        _bad_value(what, value, f"a whole number from {lo} to {hi}")


def _display_argv():
    """sys.argv for the lease record (display only): bytes that are not UTF-8 (surrogate-escaped by
    Python) become U+FFFD instead of failing the call."""
    argv = [a for a in (getattr(sys, "argv", None) or []) if isinstance(a, str)] or [sys.executable or "python"]
    return [a.encode("utf-8", "surrogateescape").decode("utf-8", "replace") for a in argv]


def _locate(gpus, whole=False):
    lib = _load()
    with _lock:
        _, data = _call(lib, lib.gpumap_locate, _session(lib), _json().dumps(gpus).encode())
    return data if whole else data["gpus"]


def which(gpus: Union[Gpu, Sequence[Gpu]]) -> Dict[str, str]:
    """{"CUDA_VISIBLE_DEVICES": value} that makes exactly these GPUs (one, or a list, named
    physically) cuda:0, cuda:1, ... in that order (`gpumap which`'s UUID form: it survives
    reboots and containers).  For a child process's environment, or os.environ before CUDA starts."""
    names = _gpu_names(gpus, "which(gpus=...)")
    if not names:
        raise ArgumentValueError("which() needs at least one GPU", "e.g. gpumap.which([2, 3])", 2)
    data = _locate(names, whole=True)
    seen = {}
    for name, loc in zip(names, data["gpus"]):
        if loc["uuid"] in seen:
            raise GpumapError(f"GPU {name!r} and {seen[loc['uuid']]!r} are the same GPU ({loc['uuid']}): "
                              "a repeated GPU makes cuInit fail", "name each GPU once", 2)
        seen[loc["uuid"]] = name
    return data["environment"]


_NOT_GPUS = ("cpu", "disk", "meta", "mps")
_SIZE_UNITS = {"": 1, "B": 1, "KB": 10**3, "MB": 10**6, "GB": 10**9, "TB": 10**12,
               "KIB": 2**10, "MIB": 2**20, "GIB": 2**30, "TIB": 2**40}
_MAX_SIZE = 2**50  # 1 PiB: no GPU or host has more; a larger size is a unit mistake


def _check_size(key, size):
    """A max_memory value as accelerate reads it: bytes (int) or "70GiB"/"80GB"; refuses negative and
    absurd sizes."""
    what = f"max_memory[{key!r}]"
    if isinstance(size, bool) or not isinstance(size, (int, str)):
        _bad_type(what, size, 'a size: bytes (int) or a string like "70GiB"')
    if isinstance(size, int):
        n = size
    else:
        text = size.strip().upper()
        num = text.rstrip("BKMGTI")
        unit = text[len(num):]
        num = num.strip()
        if unit not in _SIZE_UNITS or not num or not all(c in "0123456789." for c in num) or num.count(".") > 1 \
                or num == ".":
            _bad_value(what, size, 'a size: bytes (int) or a number with B, KB, MB, GB, TB, KiB, MiB, GiB or TiB')
        n = float(num) * _SIZE_UNITS[unit]
    if not 0 <= n <= _MAX_SIZE:
        _bad_value(what, size, "a size from 0 to 1 PiB")
    return size


def _size_bytes(size):
    """A size _check_size accepted, in bytes."""
    if isinstance(size, int):
        return size
    text = size.strip().upper()
    num = text.rstrip("BKMGTI")
    return float(num.strip()) * _SIZE_UNITS[text[len(num):]]


class ReKeyedWarning(UserWarning):
    """max_memory() gave back a dict whose GPU keys are other numbers than the ones passed in: the
    nvidia-smi index a budget was meant for is another cuda:N in this process."""


def _check_budget(what, size, device):
    """ArgumentValueError when `size` is more than the GPU `device` (a devices() entry) has."""
    mib = device.get("memory_total_mib")
    if mib is None or _size_bytes(size) <= mib * 2**20:
        return
    raise ArgumentValueError(
        f"{what} = {size!r} is more than cuda:{device.get('cuda_ordinal')} has ({mib} MiB: {device.get('name')}, "
        f"nvidia-smi GPU {device.get('nvml_index')}, {device.get('uuid')})",
        f"accelerate plans layers into memory the GPU does not have and fails with out of memory while loading; "
        f"give at most {mib * 2**20 // 2**30}GiB (leave room for activations)", 2)


def _is_device_text(value):
    """A str or a torch.device (which prints as "cuda:1"): sent to the library as its text."""
    return isinstance(value, str) or type(value).__name__ == "device"


def _check_devices(items):
    """The library's reading of device_map values and max_memory keys (gpumap_check_devices: the
    rule is src/env/device_value.h's, the range check session/self.h's): items are dicts
    {"value": int or text, "role", "what", "where", "shown"}; returns each one's cuda ordinal or
    None (cpu/disk/meta/mps, a physical key).  Raises ArgumentValueError for a value that is no
    device and a "cuda:N" max_memory key (accelerate refuses it), NotVisibleError for an ordinal
    this process does not have."""
    import ctypes

    if not items:
        return []
    lib = _load()
    fn = getattr(lib, "gpumap_check_devices", None)
    if fn is None:
        raise GpumapError("this libgpumap has no gpumap_check_devices (it is older than this package)",
                          "install matching versions of the library and the Python package")
    fn.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.POINTER(ctypes.c_void_p)]
    fn.restype = ctypes.c_int
    request = _json().dumps({"items": items}).encode()
    with _lock:
        rc, data = _call(lib, fn, _session(lib), request, ok=(0, 2))
    if rc == 2:
        info = _json().loads(lib.gpumap_last_error().decode("utf-8", "replace") or "{}")
        cls = NotVisibleError if info.get("kind") == "not-visible" else ArgumentValueError
        raise cls(info.get("message", "not a device"), info.get("hint", ""), 2,
                  {"ordinal": info["ordinal"]} if "ordinal" in info else info)
    return data["cuda_ordinals"]


def _device_item(value, role, what, where=""):
    """One item for _check_devices; the argument's type is checked here (a bool is no ordinal)."""
    if isinstance(value, bool) or not (isinstance(value, int) or _is_device_text(value)):
        _bad_type(what, value, "a device: an int (cuda ordinal), 'cuda:N', 'cpu' or 'disk'")
    return {"value": value if isinstance(value, int) else str(value), "role": role, "what": what,
            "where": where, "shown": repr(value)}


def _mapping_arg(value, what):
    if not hasattr(value, "items"):
        _bad_type(what, value, "a dict")
    return value


def max_memory(sizes: Dict[Any, Any]) -> Dict[Any, Any]:
    """{GPU: size, ...} with GPUs named physically (int: nvidia-smi index) -> the dict keyed by
    CUDA ordinal that transformers/accelerate expect (max_memory=...).  "cpu"/"disk" keys pass
    through.  Raises NotVisibleError for a GPU this process cannot see (live once CUDA runs here),
    ArgumentValueError for a "cuda:N" key (accelerate refuses it) or a budget larger than the GPU.
    Where a GPU's nvidia-smi index is another number than its cuda ordinal here, the keys of the
    answer differ from the ones passed in: a ReKeyedWarning says which became which, so the
    answer, not the dict passed in, goes to accelerate."""
    _mapping_arg(sizes, "max_memory(sizes)")
    out = {}
    _check_devices([{"value": str(k), "role": "physical_key", "what": f"max_memory key {k!r}", "shown": repr(k)}
                    for k in sizes if _is_device_text(k)])
    gpus = [k for k in sizes if not (isinstance(k, str) and k in _NOT_GPUS)]
    for k in sizes:
        _check_size(k, sizes[k])
    located = _locate([_gpu_name(k, "max_memory key") for k in gpus]) if gpus else []
    visible = {d.get("uuid"): d for d in devices()} if gpus else {}
    moved = []
    for key, loc in zip(gpus, located):
        if loc["cuda_ordinal"] is None:
            raise NotVisibleError(
                f"GPU {key!r} (nvidia-smi GPU {loc['nvml_index']}, {loc['uuid']}) is not visible to this process",
                "make it visible before CUDA starts: gpumap.pin(include=...) or CUDA_VISIBLE_DEVICES "
                "(`gpumap which` prints the value)", 2, {"uuid": loc["uuid"]})
        if loc["uuid"] in visible:
            _check_budget(f"max_memory[{key!r}]", sizes[key], visible[loc["uuid"]])
        out[loc["cuda_ordinal"]] = sizes[key]
        if isinstance(key, int) and not isinstance(key, bool) and key != loc["cuda_ordinal"]:
            moved.append(f"{key!r} -> {loc['cuda_ordinal']} ({sizes[key]!r}, {loc['uuid']})")
    for key in sizes:
        if isinstance(key, str) and key in _NOT_GPUS:
            out[key] = sizes[key]
    if moved:
        import warnings
        warnings.warn("gpumap.max_memory: the budgets are keyed by this process's CUDA ordinals, which are not the "
                      "nvidia-smi indices passed in: " + ", ".join(moved) + f"; pass {out!r} to accelerate, "
                      "not the dict you gave", ReKeyedWarning, stacklevel=2)
    return out


_DISPATCH = ("auto", "balanced", "balanced_low_0", "sequential")


def check_device_map(device_map):
    """For each key of a device_map (transformers/accelerate, or model.hf_device_map): the
    physical GPU its value lands on, as a devices() entry ("cpu"/"disk" stay as they are).
    A string device_map ("cuda:1", "cpu", or "auto"/"balanced"/"sequential", which spread over
    every visible GPU) gives {"": what it lands on}.  Answers from the live driver once CUDA runs
    here.  Raises NotVisibleError for values that are not visible cuda ordinals here."""
    if isinstance(device_map, str) or type(device_map).__name__ == "device":
        if str(device_map) in _DISPATCH:
            return {"": list(devices())}
        device_map = {"": device_map}
    elif isinstance(device_map, int) and not isinstance(device_map, bool):
        device_map = {"": device_map}
    _mapping_arg(device_map, "check_device_map(device_map)")
    ordinals = _check_devices([_device_item(value, "value", f"device_map[{key!r}]", f"device_map[{key!r}] = {value!r}")
                               for key, value in device_map.items()])
    visible = devices()
    out = {}
    for (key, value), ordinal in zip(device_map.items(), ordinals):
        out[key] = str(value) if ordinal is None else visible[ordinal]
    return out


def check_max_memory(max_memory):
    """An existing max_memory dict keyed by CUDA ordinal ({0: "70GiB", "cpu": "200GiB"}): each GPU
    key -> the physical GPU it limits (a devices() entry); "cpu"/"disk" stay as they are.  Raises
    NotVisibleError for a key that is not a cuda ordinal here ("cuda:4 does not exist ... nvidia-smi
    GPU 4 is cuda:0 here: use 0"), ArgumentValueError for a size accelerate would misread, a
    "cuda:N" key (accelerate refuses it: the int N) and a budget larger than the GPU it names."""
    _mapping_arg(max_memory, "check_max_memory(max_memory)")
    for key, size in max_memory.items():
        _check_size(key, size)
    ordinals = _check_devices([_device_item(key, "key", f"max_memory key {key!r}") for key in max_memory])
    visible = devices()
    out = {}
    for key, ordinal in zip(max_memory, ordinals):
        if ordinal is None:
            out[key] = key
            continue
        _check_budget(f"max_memory[{key!r}]", max_memory[key], visible[ordinal])
        out[key] = visible[ordinal]
    return out


def _local_device_answer():
    """libgpumap's gpumap_local_device for os.environ now: {device, cuda_ordinal, local_rank
    ({variable, value} or None), why, source, visible}.  The rule and the launcher variables live
    in the library (src/env/launcher.h), where `gpumap bind` and `gpumap explain` read them too."""
    import ctypes

    lib = _load()
    fn = getattr(lib, "gpumap_local_device", None)
    if fn is None:
        raise GpumapError("this libgpumap has no gpumap_local_device (it is older than this package)",
                          "install matching versions of the library and the Python package")
    fn.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p)]
    fn.restype = ctypes.c_int
    with _lock:
        rc, data = _call(lib, fn, _session(lib), ok=(0, 2))
    if rc == 2:  # a rank variable that is not a whole number: a bad value, not a failed call
        info = _json().loads(lib.gpumap_last_error().decode("utf-8", "replace") or "{}")
        raise ArgumentValueError(info.get("message", "not a local rank"), info.get("hint", ""), 2, info)
    return data


def local_device():
    """The torch.device string this process (one rank of torchrun, MPI or srun, or a lone process)
    should use: "cuda:0" when `gpumap bind` narrowed it (GPUMAP_BOUND), when it sees one GPU, or
    when Slurm bound GPUs per task (fewer visible than SLURM_GPUS_ON_NODE); else "cuda:<local
    rank>" from LOCAL_RANK, OMPI_COMM_WORLD_LOCAL_RANK, MPI_LOCALRANKID, MV2_COMM_WORLD_LOCAL_RANK,
    PMI_LOCAL_RANK or SLURM_LOCALID (the first set); "cuda:0" with no rank variable.  Counts the
    GPUs as devices() does (live once CUDA runs here).  The rule is the library's
    (gpumap_local_device), the one `gpumap bind` and `gpumap explain` follow.  Raises
    NotEnoughGpusError when this process sees no GPU or fewer than its local rank needs,
    ArgumentValueError for a rank variable that is not a whole number, CudaInitError where CUDA
    would fail to initialise."""
    return _local_device_answer()["device"]


class Finding:
    """One trap: .id (docs/findings.md), .severity ("error", "warning", "info"), .message, .fix
    (a line to paste, or ""), .note (other advice, or "")."""

    def __init__(self, data):
        self.id = data.get("id", "")
        self.severity = data.get("severity", "info")
        self.message = data.get("message", "")
        self.fix = data.get("fix", "")
        self.note = data.get("note", "")

    def to_dict(self):
        return {"id": self.id, "severity": self.severity, "message": self.message, "fix": self.fix, "note": self.note}

    def __repr__(self):
        return f"<gpumap.Finding {self.severity} {self.id}>"


class Diagnosis:
    """diagnose()'s report: .findings, .devices, .source ("live"/"predicted"), .ok (no error),
    .renumbering ("cuda:0 = nvidia-smi GPU 3, cuda:1 = GPU 5" when cuda:N is not nvidia-smi's GPU N,
    else None), .data (the whole dict, for logging: to_dict()), str() a report like `gpumap doctor`'s."""

    def __init__(self, data):
        self.data = data
        self.findings = [Finding(f) for f in data.get("findings", [])]
        self.devices = data.get("devices", [])
        self.source = data.get("source", "predicted")
        self.ok = bool(data.get("ok", True))
        self.renumbering = data.get("renumbering")

    def to_dict(self):
        return self.data

    def __str__(self):
        d = self.data
        out = [f"gpumap diagnose (pid {d.get('pid')}): CUDA {'runs in this process (live)' if self.source == 'live' else 'has not started (predicted from the environment)'}"]
        now, start = d["environment"]["now"] or {}, d["environment"]["start"]
        out.append("1. Variables: " + (", ".join(f"{k}={v}" for k, v in now.items()) or "none set") +
                   ("" if start is None else "; at start: " + (", ".join(f"{k}={v}" for k, v in start.items()) or "none set")))
        if d.get("cuda_error"):
            out.append(f"2. CUDA would fail: {d['cuda_error']['name']} ({d['cuda_error']['reason']}); "
                       f"{d['host_gpu_count']} GPU(s) on this host")
        else:
            out.append(f"2. CUDA sees {d['cuda_device_count']} of the {d['host_gpu_count']} GPU(s) on this host"
                       + (f"; renumbered: {self.renumbering}" if self.renumbering else ""))
        for dev in self.devices:
            out.append(f"   cuda:{dev['cuda_ordinal']} = nvidia-smi GPU {dev['nvml_index']} {dev['uuid']} {dev.get('name') or ''}".rstrip())
        model = d.get("model")
        if model:
            parts = [f"{dev}: {n}" for dev, n in sorted(model.get("tensor_devices", {}).items())]
            out.append("3. Model tensors: " + (", ".join(parts) or "none"))
            if model.get("hf_device_map_devices"):
                out.append("   hf_device_map: " + ", ".join(f"{k}: {v} module(s)" for k, v in model["hf_device_map_devices"].items()))
        else:
            out.append("3. Model: not given (diagnose(model))")
        if not d.get("memory_known"):
            out.append("4. This process's GPU memory: unknown (NVML's process lists could not be read or joined)")
        elif d["memory"]:
            out.append("4. This process's GPU memory: " + ", ".join(
                f"{m['used_memory_mib']} MiB on nvidia-smi GPU {m['nvml_index']}"
                + (f" (cuda:{m['cuda_ordinal']})" if m.get("cuda_ordinal") is not None else " (not visible)")
                for m in d["memory"]))
        else:
            out.append("4. This process's GPU memory: none")
        if self.findings:
            out.append("5. Findings:")
            for f in self.findings:
                out.append(f"  [{f.severity}] {f.id}: {f.message}")
                if f.fix:
                    out.append(f"      fix: {f.fix}")
                if f.note:
                    out.append(f"      note: {f.note}")
        else:
            out.append("5. Findings: none")
        return "\n".join(out)

    def __repr__(self):
        return f"<gpumap.Diagnosis {self.source} ok={self.ok} findings={[f.id for f in self.findings]}>"


def _model_facts(model):
    """Where a model's tensors are, duck-typed (.parameters(), .buffers(), .hf_device_map):
    torch is never imported here."""
    counts = {}
    for name in ("parameters", "buffers"):
        fn = getattr(model, name, None)
        if callable(fn):
            for t in fn():
                dev = str(getattr(t, "device", "unknown"))
                counts[dev] = counts.get(dev, 0) + 1
    hf = getattr(model, "hf_device_map", None)
    if hf is not None and not hasattr(hf, "items"):
        hf = None
    return counts, ({str(k): str(v) for k, v in hf.items()} if hf is not None else None)


def _current_device():
    """torch.cuda.current_device() when torch already runs CUDA here (never starts it)."""
    torch = sys.modules.get("torch")
    try:
        if torch is not None and torch.cuda.is_initialized():
            return int(torch.cuda.current_device())
    except Exception:
        pass
    return None


def diagnose(model: Any = None, max_memory: Optional[Dict[Any, Any]] = None) -> Diagnosis:
    """The five-step check of "my model is on the wrong GPU" in one call (docs/library.md):
    (1) CUDA's variables now and at start, (2) how many GPUs CUDA sees of how many exist, (3) with a
    model (anything with .parameters()/.buffers(), and .hf_device_map if accelerate placed it): the
    devices its tensors are on, as physical GPUs, and modules offloaded to cpu/disk, (4) this
    process's memory per physical GPU from NVML, (5) findings with fixes (set-too-late,
    stray-context, local-rank-device-mismatch, offloaded-modules, and the environment's own traps
    before CUDA starts).  Returns a Diagnosis; never starts CUDA or imports torch."""
    req = {"current_device": _current_device(), "frameworks": framework_versions()}
    tensor_devices, hf = ({}, None) if model is None else _model_facts(model)
    if model is not None:
        req["tensor_devices"] = tensor_devices
        req["hf_device_map"] = hf
    if max_memory is not None:
        _mapping_arg(max_memory, "diagnose(max_memory=...)")
        req["max_memory"] = {str(k): str(v) for k, v in max_memory.items()}
    lib = _load()
    with _lock:
        _, data = _call(lib, lib.gpumap_diagnose, _session(lib), _json().dumps(req).encode())
    _add_state_findings(data)
    if model is not None:
        per = {}
        for v in (hf or {}).values():
            per[v] = per.get(v, 0) + 1
        data["model"] = {"tensor_devices": tensor_devices, "hf_device_map_devices": per}
    return Diagnosis(data)


def line() -> str:
    """One line for a program's start-up log, like `gpumap map --line`: rank and node (Slurm),
    cuda:N -> nvidia-smi index and UUID, live or predicted, and the findings' ids."""
    try:
        devs = devices()
    except GpumapError as e:
        return f"gpumap: {e.message}"
    env = os.environ
    who = "".join(f" {w} {env[k]}" for w, k in (("rank", "SLURM_PROCID"), ("on", "SLURMD_NODENAME")) if k in env) \
        or (f" rank {env['RANK']}" if "RANK" in env else "")
    out = "gpumap:" + who + (":" if who else "")
    if devs:
        out += ",".join(f" cuda:{d['cuda_ordinal']} = nvidia-smi {d['nvml_index'] if d['nvml_index'] is not None else '?'} "
                        f"{d['uuid']}" for d in devs)
    else:
        out += " no GPU"
    ids = [f.id for f in devs.findings if f.severity != "info"]
    out += f" ({devs.source}); {len(ids)} finding(s)" + (": " + ", ".join(ids) if ids else "")
    return out


# --- State and versions (issue 52 item 5): what this process already did, read without starting
# anything: a CUDA start that failed, the frameworks already imported.  Nothing here imports a
# module, loads a library or calls cuInit.

_FRAMEWORKS = ("torch", "vllm", "transformers", "accelerate", "deepspeed", "ray", "jax", "tensorflow", "cupy")


def framework_versions() -> Dict[str, str]:
    """The versions of the frameworks this process has already imported ({"torch": "2.5.1", ...}),
    read from sys.modules[name].__version__; a framework not imported is left out (never imported
    here)."""
    out = {}
    for name in _FRAMEWORKS:
        mod = sys.modules.get(name)
        v = getattr(mod, "__version__", None) if mod is not None else None
        if v is not None:
            out[name] = str(v)
    return out


def _read_text(path):
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError:
        return None


def _libcuda_in_maps(maps_text):
    """Whether /proc/PID/maps text shows the CUDA driver library (libcuda.so*) mapped."""
    for line in maps_text.splitlines():
        path = line.split(None, 5)[5] if len(line.split(None, 5)) == 6 else ""
        if path.rsplit("/", 1)[-1].startswith("libcuda.so"):
            return True
    return False


def _torch_cuda_state():
    """torch.cuda's cached state, when torch is imported (never imported here): _initialized, the
    device count torch cached (only once initialised, torch 2.1+), whether this is a bad fork."""
    tc = sys.modules.get("torch.cuda")
    if tc is None:
        return None
    state = {"version": getattr(sys.modules.get("torch"), "__version__", None),
             "initialized": bool(getattr(tc, "_initialized", False)),
             "cached_device_count": getattr(tc, "_cached_device_count", None)}
    try:
        state["bad_fork"] = bool(tc._is_in_bad_fork())
    except Exception:  # a torch without CUDA support, or a version without the check
        state["bad_fork"] = None
    return state


def cuda_start_state() -> Dict[str, Any]:
    """What this process's CUDA start did, as far as it can be read without starting CUDA:
    {"libcuda_loaded": libcuda.so is mapped (/proc/self/maps), "initialized": CUDA runs here
    (the driver's own answer, no cuInit), "start": CUDA_VISIBLE_DEVICES at start (/proc/self/environ;
    None: unset), "now": the same now (os.environ), "torch": torch.cuda's cached state or None}."""
    maps = _read_text("/proc/self/maps")
    environ = _read_text("/proc/self/environ")
    start = None
    if environ is not None:
        for item in environ.split(b"\0"):
            if item.startswith(b"CUDA_VISIBLE_DEVICES="):
                start = item[len(b"CUDA_VISIBLE_DEVICES="):].decode("utf-8", "surrogateescape")
                break
    loaded = maps is not None and _libcuda_in_maps(maps.decode("utf-8", "replace"))
    return {"libcuda_loaded": loaded,
            "initialized": bool(_load().gpumap_cuda_initialized()) if loaded else False,
            "start_known": environ is not None,
            "start": start, "now": os.environ.get("CUDA_VISIBLE_DEVICES"),
            "torch": _torch_cuda_state(),
            "under_ray": any(k.startswith("RAY_") for k in os.environ)}


def _cuda_start_failed_finding(state, argv):
    """cuda-start-failed from cuda_start_state()'s answer (pure): the CUDA driver library is loaded
    but not initialised, so cuInit ran here and failed (a CUDA-enabled torch loads it only when it
    first asks for devices; docs/framework-rules.md), and CUDA_VISIBLE_DEVICES changed since the
    process started.  The driver keeps a failed start for the life of the process."""
    if not state["libcuda_loaded"] or state["initialized"] or not state.get("start_known", True):
        return None
    start, now = state["start"], state["now"]
    if start == now:
        return None
    t = state.get("torch")
    torch_words = ""
    if t is not None:
        torch_words = (" torch.cuda is not initialised (torch.cuda._initialized is False) and its C++ device count "
                       "was fixed at 0 then, so torch.cuda.is_available() stays False and .cuda() raises \"No CUDA "
                       "GPUs are available\"; torch.cuda.device_count() may read the new value and say otherwise.")
    q = lambda v: "unset" if v is None else f'"{v}"'
    message = (f"CUDA already failed to start in this process: the driver library is loaded but not initialised, so cuInit "
               f"ran with CUDA_VISIBLE_DEVICES {q(start)} (at start) and failed; it is {q(now)} now, which changes "
               f"nothing: a failed start stays failed for the life of the process, and no GPU will appear.{torch_words} "
               f"What gpumap predicts from the variable now does not apply to this process.")
    import shlex
    fix = ""
    if now is not None:
        fix = f"CUDA_VISIBLE_DEVICES={shlex.quote(now)} " + " ".join(shlex.quote(a) for a in argv)
    note = ("set the variable before the process starts (the fix relaunches with it), or before anything touches "
            "torch.cuda or CUDA; remove the late assignment")
    if state.get("under_ray"):
        note = ("under Ray, ask Ray for the GPU instead of setting the variable: @ray.remote(num_gpus=1) or "
                ".options(num_gpus=1); Ray gave this worker CUDA_VISIBLE_DEVICES=\"\" because it asked for none, and "
                "sets it before the worker starts when it asks for one")
    return {"id": "cuda-start-failed", "severity": "error", "message": message, "fix": fix, "note": note}


def cuda_start_failed() -> Optional["Finding"]:
    """The cuda-start-failed finding when CUDA's start already failed in this process and
    CUDA_VISIBLE_DEVICES changed since (docs/findings.md), else None.  Starts nothing."""
    f = _cuda_start_failed_finding(cuda_start_state(), _display_argv())
    return Finding(f) if f else None


def _add_state_findings(data):
    """Puts cuda-start-failed first in a devices()/diagnose() answer: the prediction beside it does
    not apply to this process."""
    f = _cuda_start_failed_finding(cuda_start_state(), _display_argv())
    if f:
        data.setdefault("findings", []).insert(0, f)
        data["ok"] = False
        import warnings
        if f["message"] not in _warned:
            _warned.add(f["message"])
            warnings.warn("gpumap: " + f["message"] + (f"\n  fix: {f['fix']}" if f["fix"] else ""), RuntimeWarning, stacklevel=3)
    return data
