#!/usr/bin/env python3
"""`gpumap top` beside nvitop on a GPU host, side by side with ratios.  A benchmark program: it
asserts nothing.  Each viewer runs in a pseudo-terminal of 132x40 at a 1 s refresh while a busy
torch process runs on GPU 0 (a matmul loop: SM near 100 %); measured per viewer:

  first frame   time from exec to the first screen that shows the torch process's PID
  CPU           CPU time of the viewer as a share of one core over --seconds (default 20)
  RSS           resident memory at the end and its peak (VmHWM), from /proc
  utilisation   whether the torch process's SM % appears on screen (not a dash/N/A)

Then, on the same host: `gpumap list` against `nvidia-smi --query-gpu` for the same nine fields,
and `import gpumap; gpumap.devices()` against a bare interpreter (best of --runs each).

usage: bench/top_vs_nvitop.py [--gpumap build/gpumap] [--nvitop .dev/nvitop] [--seconds 20] [--runs 15]
(--nvitop: a source folder of nvitop put on PYTHONPATH, or `installed` for an installed one;
nvitop needs nvidia-ml-py and psutil.)  Creates no CUDA context of its own: the torch process is
the only one."""
import argparse, fcntl, os, pty, re, select, signal, statistics, struct, subprocess, sys, termios, time

ap = argparse.ArgumentParser()
ap.add_argument("--gpumap", default="build/gpumap")
ap.add_argument("--nvitop", default=".dev/nvitop")
ap.add_argument("--seconds", type=float, default=20)
ap.add_argument("--runs", type=int, default=15)
a = ap.parse_args()
gpumap = os.path.abspath(a.gpumap)
tick = os.sysconf("SC_CLK_TCK")


def cpu_s(pid):
    f = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) / tick


def status_kib(pid, key):
    for line in open(f"/proc/{pid}/status"):
        if line.startswith(key + ":"):
            return int(line.split()[1])
    return 0


def tree_pids(pid):  # the viewer and its children (nvitop runs in the python it was started by)
    out = [pid]
    try:
        for t in os.listdir(f"/proc/{pid}/task"):
            for c in open(f"/proc/{pid}/task/{t}/children").read().split():
                out += tree_pids(int(c))
    except OSError:
        pass
    return out


def sm_cell(text, pid):
    """The SM % a viewer's one-frame text shows for `pid`: the value under the header word SM% (or
    nvitop's %SM), matched by column position (rows may hold cells with no header, as nvitop's type
    letter), None when there is no such column or row."""
    lines = [l.replace("\u2502", " ").replace("|", " ") for l in text.splitlines()]
    head = next((l for l in lines if re.search(r"(^|\s)PID(\s|$)", l) and re.search(r"(^|\s)(SM%|%SM)(\s|$)", l)), None)
    row = next((l for l in lines if re.search(rf"(^|\s){pid}(\s|$)", l) and l is not head), None)
    if head is None or row is None:
        return None
    m = re.search(r"(SM%|%SM)", head)
    lo, hi = m.start() - 3, m.end() + 3
    best = None
    for t in re.finditer(r"\S+", row):
        if not re.fullmatch(r"\d+(\.\d+)?%?|N/A|-", t.group(0)):
            continue
        overlap = min(hi, t.end()) - max(lo, t.start())
        if overlap > 0 and (best is None or overlap > best[0]):
            best = (overlap, t.group(0))
    return best[1] if best else None


ANSI = re.compile(rb"\x1b\[[0-9;?]*[A-Za-z]|\x1b[()][A-Za-z0-9]|\x1b[=>]")


def run_viewer(argv, env_extra, marker):
    env = dict(os.environ, TERM="xterm-256color", LANG="C.UTF-8", COLUMNS="132", LINES="40", **env_extra)
    pid, fd = pty.fork()
    if pid == 0:
        os.execvpe(argv[0], argv, env)
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 132, 0, 0))
    start, buf, first = time.monotonic(), b"", None
    while time.monotonic() - start < 15 and first is None:
        r, _, _ = select.select([fd], [], [], 0.02)
        if r:
            try:
                buf += os.read(fd, 1 << 16)
            except OSError:
                break
            if marker in ANSI.sub(b"", buf):
                first = time.monotonic() - start
    # Steady state: CPU over the window, reading the terminal so the viewer never blocks.
    c0 = sum(cpu_s(p) for p in tree_pids(pid))
    t0, tail = time.monotonic(), b""
    while time.monotonic() - t0 < a.seconds:
        r, _, _ = select.select([fd], [], [], 0.1)
        if r:
            try:
                tail = (tail + os.read(fd, 1 << 16))[-200000:]
            except OSError:
                break
    pids = tree_pids(pid)
    c1 = sum(cpu_s(p) for p in pids)
    rss = sum(status_kib(p, "VmRSS") for p in pids) / 1024
    hwm = sum(status_kib(p, "VmHWM") for p in pids) / 1024
    os.write(fd, b"q")
    end = time.monotonic() + 5
    while time.monotonic() < end:
        done, _ = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        try:
            os.read(fd, 1 << 16)
        except OSError:
            pass
        time.sleep(0.05)
    else:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    os.close(fd)
    text = ANSI.sub(b"", tail).decode("utf-8", "replace")
    return {"first_ms": None if first is None else 1000 * first, "cpu_pct": 100 * (c1 - c0) / a.seconds,
            "rss_mib": rss, "hwm_mib": hwm, "screen": text}


def best_ms(argv, env=None, runs=a.runs):
    ts = []
    for _ in range(runs):
        t = time.perf_counter()
        subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
        ts.append(1000 * (time.perf_counter() - t))
    return min(ts), statistics.median(ts)


busy = subprocess.Popen([sys.executable, "-c", """
import torch, sys
a = torch.randn(8192, 8192, device="cuda:0"); torch.cuda.synchronize()
print("ready", flush=True)
while True:
    for _ in range(50): a = (a @ a).clamp_(-1, 1)
    torch.cuda.synchronize()
"""], stdout=subprocess.PIPE, text=True, env=dict(os.environ, CUDA_VISIBLE_DEVICES="0"))
try:
    busy.stdout.readline()
    time.sleep(2)
    marker = str(busy.pid).encode()
    print(f"== a busy torch matmul on GPU 0: pid {busy.pid}; viewers at 132x40, 1 s refresh, {a.seconds:.0f} s each")
    print(subprocess.run(["nvidia-smi", "--query-gpu=index,name,driver_version,utilization.gpu", "--format=csv,noheader"],
                         capture_output=True, text=True).stdout.strip())
    rows = {"gpumap top": run_viewer([gpumap, "top", "--interval", "1"], {}, marker)}
    nv_env = {} if a.nvitop == "installed" else {"PYTHONPATH": os.path.abspath(a.nvitop)}
    probe = subprocess.run([sys.executable, "-c", "import nvitop"], env=dict(os.environ, **nv_env), capture_output=True)
    if probe.returncode == 0:
        rows["nvitop"] = run_viewer([sys.executable, "-m", "nvitop", "--interval", "1"], nv_env, marker)
    else:
        print("nvitop: cannot be imported here:", probe.stderr.decode().strip().splitlines()[-1:])
    # The busy process's row in each viewer's one-frame text form (a curses screen is cursor moves).
    once = {"gpumap top": ([gpumap, "top", "--once"], {}), "nvitop": ([sys.executable, "-m", "nvitop", "--once"], nv_env)}
    for name, r in rows.items():
        argv, extra = once[name]
        text = subprocess.run(argv, capture_output=True, text=True, env=dict(os.environ, COLUMNS="132", **extra)).stdout
        sm = sm_cell(text, busy.pid)
        r["util_shown"] = f"{sm}" if sm is not None else "no SM column"
        r["line"] = next((l for l in text.splitlines() if re.search(rf"\b{busy.pid}\b", l)), "").strip()[:130]
    print(f"\n{'':14s} {'first frame':>12s} {'CPU (1 core)':>13s} {'RSS':>9s} {'peak RSS':>9s}  busy SM% on its row")
    for name, r in rows.items():
        ff = "none" if r["first_ms"] is None else f"{r['first_ms']:.1f} ms"
        print(f"{name:14s} {ff:>12s} {r['cpu_pct']:12.2f}% {r['rss_mib']:7.1f} MiB {r['hwm_mib']:6.1f} MiB  {r['util_shown']}")
    if "nvitop" in rows and rows["gpumap top"]["first_ms"] and rows["nvitop"]["first_ms"]:
        g, n = rows["gpumap top"], rows["nvitop"]
        print(f"{'ratio nvitop/gpumap':20s} first frame {n['first_ms'] / g['first_ms']:.1f}x, "
              f"CPU {n['cpu_pct'] / max(g['cpu_pct'], 0.01):.1f}x, RSS {n['rss_mib'] / max(g['rss_mib'], 0.1):.1f}x")
    for name, r in rows.items():
        print(f"{name} row of the busy process: {r['line']}")
finally:
    busy.kill()
    busy.wait()

fields = "index,name,uuid,pci.bus_id,memory.used,memory.total,utilization.gpu,compute_cap,mig.mode.current"
print(f"\n== the same nine fields ({fields}), best and median of {a.runs} runs")
base = best_ms(["nvidia-smi", f"--query-gpu={fields}", "--format=csv"])
for name, argv in (("nvidia-smi --query-gpu", None), ("gpumap list", [gpumap, "list"]),
                   ("gpumap list --query-gpu", [gpumap, "list", f"--query-gpu={fields}", "--format=csv"])):
    b, m = base if argv is None else best_ms(argv)
    print(f"{name:26s} best {b:6.1f} ms  median {m:6.1f} ms  ratio {b / base[0]:.2f}x")
print(f"\n== Python: import gpumap; gpumap.devices() over a bare interpreter, best of {a.runs}")
check = subprocess.run([sys.executable, "-c", "import gpumap; print(gpumap.__file__, len(gpumap.devices()))"],
                       capture_output=True, text=True)
if check.returncode != 0:
    print("import gpumap; devices() fails here (PYTHONPATH=python and GPUMAP_BUILD_DIR, or the wheel):",
          (check.stderr.strip().splitlines() or [""])[-1])
else:
    # As installed: pip (and a Debian package) byte-compile the package when they install it, so
    # the import reads gpumap's .pyc.  A source checkout under PYTHONDONTWRITEBYTECODE=1 compiles
    # __init__.py on every import instead (about 10 ms on the H100 host): printed apart.
    import tempfile
    pyc = tempfile.mkdtemp(prefix="gpumap-pyc.")
    installed = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    installed["PYTHONPYCACHEPREFIX"] = pyc
    uncompiled = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    for env in (installed, uncompiled):
        best_ms([sys.executable, "-c", "import gpumap"], env=env, runs=3)  # (page cache; the .pyc written)
        bare = best_ms([sys.executable, "-c", "pass"], env=env)[0]
        imp = best_ms([sys.executable, "-c", "import gpumap"], env=env)[0]
        dev = best_ms([sys.executable, "-c", "import gpumap; gpumap.devices()"], env=env)[0]
        how = "as installed (.pyc)" if env is installed else "not byte-compiled"
        print(f"{check.stdout.strip()} {how}: bare {bare:.1f} ms; import gpumap +{imp - bare:.1f} ms; "
              f"import + devices() +{dev - bare:.1f} ms")
    import shutil
    shutil.rmtree(pyc, ignore_errors=True)
