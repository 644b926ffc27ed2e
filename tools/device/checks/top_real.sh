#!/usr/bin/env bash
# `gpumap top` against the real driver (issue 31): one frame (--once) with a real torch process on
# the GPU, its own cuda:N in the table, the interactive view's start-up time in a pseudo-terminal
# (first frame drawn) beside nvidia-smi's and nvitop's where installed, and its CPU use left open
# for 20 s.  No GPU setting is changed; the only CUDA context is the torch process listed.
# usage: tools/device/checks/top_real.sh BUILD_DIR   (writes $OUT/top_real.log and $OUT/top_once*.txt)
source "$(dirname "$0")/common.sh" top_real "${1:-${BUILD:-build}}"
date -u; nvidia-smi -L; head -1 /proc/driver/nvidia/version; "$G" --version
"$G" top --once > "$OUT/top_once_idle.txt"; echo "top --once exit $?"
cat "$OUT/top_once_idle.txt"
# A real GPU process: torch on cuda:0 (GPU 0 here), 64 MiB, with LOCAL_RANK=0, sleeping 60 s.
CUDA_VISIBLE_DEVICES=0 LOCAL_RANK=0 python3 -c '
import torch, time
x = torch.empty(64 << 20, dtype=torch.uint8, device="cuda:0"); x.fill_(1); torch.cuda.synchronize()
print("torch ready", flush=True); time.sleep(60)' > "$OUT/torch.out" 2>&1 & tp=$!
for _ in $(seq 200); do grep -q "torch ready" "$OUT/torch.out" && break; sleep 0.1; done
sleep 1
COLUMNS=132 "$G" top --once > "$OUT/top_once_torch.txt"; echo "top --once exit $?"
cat "$OUT/top_once_torch.txt"
check "the torch process is in top's table with its own cuda:0" \
  "grep -E '^ *$tp +[^ ]+ +0 cuda:0 ' '$OUT/top_once_torch.txt' >/dev/null"
check "top --once has no escape codes into a file" "! grep -q \$'\\033' '$OUT/top_once_torch.txt'"
# The interactive view in a pseudo-terminal: time to the first frame with a GPU line, keys, quit.
python3 - "$G" "$tp" <<'PY'
import os, pty, select, sys, time, subprocess, shutil
g, tp = sys.argv[1], sys.argv[2]
def first_frame(argv, marker, env_extra=None):
    env = dict(os.environ, TERM="xterm-256color", LANG="C.UTF-8", COLUMNS="132", LINES="40")
    env.update(env_extra or {})
    pid, fd = pty.fork()
    if pid == 0:
        os.execvpe(argv[0], argv, env)
    start = time.monotonic(); buf = b""; t = None
    while time.monotonic() - start < 10:
        r, _, _ = select.select([fd], [], [], 0.05)
        if r:
            try: buf += os.read(fd, 65536)
            except OSError: break
            if marker in buf and t is None:
                t = time.monotonic() - start
                break
    return pid, fd, t, buf
import fcntl, termios, struct
pid, fd, t, buf = first_frame([g, "top"], tp.encode())
fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 132, 0, 0))
print("top: first frame with the torch process after %.1f ms" % (1000 * t) if t else "FAIL: top drew no frame with the torch process")
# left open 20 s: CPU time
def cpu(p):
    f = open("/proc/%d/stat" % p).read().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK")
c0 = cpu(pid); time.sleep(20); c1 = cpu(pid)
print("top: %.2f%% of one core over 20 s at a 1 s refresh (1 GPU, 1 process)" % (100 * (c1 - c0) / 20))
os.write(fd, b"h"); time.sleep(0.3); os.write(fd, b"q")
deadline = time.monotonic() + 5
while time.monotonic() < deadline:
    done, status = os.waitpid(pid, os.WNOHANG)
    if done: break
    try: os.read(fd, 65536)
    except OSError: pass
    time.sleep(0.05)
print("top: exit status after h, q: %s" % (os.waitstatus_to_exitcode(status) if done else "still running (FAIL)"))
if not done: os.kill(pid, 9)
# The same start-up measure for the others, where installed.
def wall(argv, n=5):
    ts = []
    for _ in range(n):
        s = time.monotonic(); subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL); ts.append(time.monotonic() - s)
    return 1000 * sorted(ts)[n // 2]
print("top --once: %.1f ms (median of 5)" % wall([g, "top", "--once"]))
print("nvidia-smi: %.1f ms (median of 5)" % wall(["nvidia-smi"]))
for name, argv in (("nvitop --once", [sys.executable, "-m", "nvitop", "--once"]), ("nvtop", None)):
    if name.startswith("nvitop"):
        if subprocess.run([sys.executable, "-c", "import nvitop"], capture_output=True).returncode == 0:
            print("%s: %.1f ms (median of 5)" % (name, wall(argv)))
        else:
            print("%s: not installed here" % name)
    elif shutil.which("nvtop"):
        print("nvtop: installed (interactive only; not timed)")
    else:
        print("nvtop: not installed here")
PY
kill "$tp" 2>/dev/null; wait "$tp" 2>/dev/null
echo "failures: $fails"
