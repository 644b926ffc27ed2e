"""A PEP 517 build backend for the gpumap package, standard library only (so that
`pip install ./python` works offline, with build isolation).  It writes one wheel: the
package, plus libgpumap.so.1, gpumap-probe, the simulated hosts and the fake driver
libraries from the build folder when there is one."""

import base64
import hashlib
import os
import sysconfig
import zipfile

NAME = "gpumap"     # the import name
DIST = "pygpumap"   # the distribution's name (pip install pygpumap): "gpumap" was taken in the package index
VERSION = "0.1.0"
HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # python/


def _build_dir():
    for d in (os.environ.get("GPUMAP_BUILD_DIR"), os.path.join(HERE, "..", "build")):
        if d and os.path.isfile(os.path.join(d, "libgpumap.so.1")):
            return d
    return None


def _files():
    """(path in the wheel, file on disk) pairs."""
    pkg = os.path.join(HERE, NAME)
    out = [(f"{NAME}/{n}", os.path.join(pkg, n)) for n in sorted(os.listdir(pkg)) if n.endswith(".py") or n == "py.typed"]
    build = _build_dir()
    if build:
        out.append((f"{NAME}/_lib/libgpumap.so.1", os.path.join(build, "libgpumap.so.1")))
        out.append((f"{NAME}/_lib/gpumap-probe", os.path.join(build, "gpumap-probe")))
        if os.path.isfile(os.path.join(build, "gpumap")):  # the command, for `python -m gpumap` and `gpumap`
            out.append((f"{NAME}/_lib/gpumap", os.path.join(build, "gpumap")))
        for sub in ("sim", "hosts"):
            for n in sorted(os.listdir(os.path.join(build, sub))):
                out.append((f"{NAME}/_lib/{sub}/{n}", os.path.join(build, sub, n)))
    return out, build is not None


def _metadata():
    return (f"Metadata-Version: 2.1\nName: {DIST}\nVersion: {VERSION}\n"
            "Summary: Which physical GPU this program runs on, and making it the one you meant\n"
            "License: Apache-2.0\n"
            "Classifier: License :: OSI Approved :: Apache Software License\n"
            "Classifier: Operating System :: POSIX :: Linux\n"
            "Classifier: Typing :: Typed\n"
            "Requires-Python: >=3.8\n")


def _tag(binary):
    """py3-none-PLATFORM.  A wheel with the library is tagged for the machine that built it
    (linux_x86_64: what a local build needs is that machine's glibc), or with
    $GPUMAP_WHEEL_PLATFORM, which scripts/release.sh sets to manylinux_2_31_x86_64 for the portable
    library it has checked against that floor."""
    if not binary:
        return "py3-none-any"
    plat = os.environ.get("GPUMAP_WHEEL_PLATFORM") or sysconfig.get_platform().replace("-", "_").replace(".", "_")
    return f"py3-none-{plat}"


def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    info = f"{DIST}-{VERSION}.dist-info"
    os.makedirs(os.path.join(metadata_directory, info), exist_ok=True)
    with open(os.path.join(metadata_directory, info, "METADATA"), "w") as f:
        f.write(_metadata())
    return info


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    files, binary = _files()
    if not binary and os.environ.get("GPUMAP_PURE_WHEEL") != "1":
        # A wheel without libgpumap would install and then fail at the first call.
        raise RuntimeError(
            "gpumap: no built libgpumap.so.1 found (looked in $GPUMAP_BUILD_DIR and " + os.path.join(HERE, "..", "build") +
            "). Build it first (scripts/test.sh, or cmake -S . -B build && cmake --build build), or set "
            "GPUMAP_BUILD_DIR to the build folder; for a wheel that uses an installed libgpumap.so.1 "
            "(cmake --install, the Debian package), set GPUMAP_PURE_WHEEL=1")
    tag = _tag(binary)
    name = f"{DIST}-{VERSION}-{tag}.whl"
    info = f"{DIST}-{VERSION}.dist-info"
    record = []

    def add(z, arcname, data, mode=0o644):
        zi = zipfile.ZipInfo(arcname, date_time=(2026, 1, 1, 0, 0, 0))
        zi.external_attr = (0o100000 | mode) << 16
        zi.compress_type = zipfile.ZIP_DEFLATED
        z.writestr(zi, data)
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.append(f"{arcname},sha256={digest},{len(data)}")

    with zipfile.ZipFile(os.path.join(wheel_directory, name), "w") as z:
        for arcname, path in files:
            with open(path, "rb") as f:
                add(z, arcname, f.read(), 0o755 if os.access(path, os.X_OK) and not path.endswith(".py") else 0o644)
        add(z, f"{info}/METADATA", _metadata().encode())
        wheel = f"Wheel-Version: 1.0\nGenerator: gpumap_build\nRoot-Is-Purelib: {'false' if binary else 'true'}\nTag: {tag}\n"
        add(z, f"{info}/WHEEL", wheel.encode())
        if any(a == f"{NAME}/_lib/gpumap" for a, _ in files):
            add(z, f"{info}/entry_points.txt", f"[console_scripts]\ngpumap = {NAME}.__main__:main\n".encode())
        record.append(f"{info}/RECORD,,")
        z.writestr(f"{info}/RECORD", "\n".join(record) + "\n")
    return name


def build_sdist(sdist_directory, config_settings=None):
    import tarfile

    name = f"{DIST}-{VERSION}"
    with tarfile.open(os.path.join(sdist_directory, name + ".tar.gz"), "w:gz") as t:
        for rel in ("pyproject.toml", "_build/gpumap_build.py") + tuple(
                f"{NAME}/{n}" for n in sorted(os.listdir(os.path.join(HERE, NAME))) if n.endswith(".py") or n == "py.typed"):
            t.add(os.path.join(HERE, rel), f"{name}/{rel}")
        info = tarfile.TarInfo(f"{name}/PKG-INFO")
        data = _metadata().encode()
        info.size = len(data)
        import io
        t.addfile(info, io.BytesIO(data))
    return name + ".tar.gz"
