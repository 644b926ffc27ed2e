"""`python -m gpumap [COMMAND ...]`: the gpumap command for this environment (`doctor` when no
command is given), so that `python -m gpumap` inside a virtual environment, a notebook's terminal or
a job script answers for the interpreter's own CUDA_VISIBLE_DEVICES and launcher variables.

It runs the gpumap binary bundled in the wheel (pip install pygpumap), else the one next to the
library this package loads (a source checkout's build/), else `gpumap` on PATH.  Its exit code is
gpumap's (docs/cli.md)."""

import os
import shutil
import sys
from typing import List, Optional


def _binary() -> Optional[str]:
    here = os.path.dirname(os.path.abspath(__file__))
    candidates = [os.path.join(here, "_lib", "gpumap")]
    build = os.environ.get("GPUMAP_BUILD_DIR")
    if build:
        candidates.append(os.path.join(build, "gpumap"))
    candidates.append(os.path.normpath(os.path.join(here, "..", "..", "build", "gpumap")))  # a source checkout
    for c in candidates:
        if os.path.isfile(c) and os.access(c, os.X_OK):
            return c
    return shutil.which("gpumap")


def main(argv: Optional[List[str]] = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv) or ["doctor"]
    exe = _binary()
    if exe is None:
        sys.stderr.write("gpumap: the gpumap command was not found (not bundled with this package, not in a build/ "
                         "folder, not on PATH)\n  hint: pip install pygpumap (its wheel carries it), or install the "
                         "gpumap package or tarball (docs/install.md)\n")
        return 1
    sys.stdout.flush()
    os.execv(exe, ["gpumap"] + args)
    return 127  # (not reached)


if __name__ == "__main__":
    sys.exit(main())
