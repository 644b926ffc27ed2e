#!/usr/bin/env python3
"""Measurement, no verdict: a kernel that stores to global address 0 (PTX through libcuda, ctypes) beside a bystander torch process; prints the kernel-log records the driver wrote (raw /dev/kmsg) and what nvidia-smi says after.  Needs root (/dev/kmsg) and torch for the bystander.  usage: python3 tools/device/checks/xid_raw.py"""
import ctypes, os, sys, subprocess, time, json
ptx = b""".version 7.0
.target sm_50
.address_size 64
.visible .entry k() {
  .reg .b64 %rd<2>;
  .reg .b32 %r<2>;
  mov.u64 %rd1, 0;
  mov.u32 %r1, 1;
  st.global.u32 [%rd1], %r1;
  ret;
}
"""
if sys.argv[1:] == ["fault"]:
    cu = ctypes.CDLL("libcuda.so.1")
    def ck(name, rc):
        print(name, rc, flush=True)
    ck("cuInit", cu.cuInit(0))
    d = ctypes.c_int(); ck("cuDeviceGet", cu.cuDeviceGet(ctypes.byref(d), 0))
    ctx = ctypes.c_void_p(); ck("cuCtxCreate", cu.cuCtxCreate_v2(ctypes.byref(ctx), 0, d))
    mod = ctypes.c_void_p(); ck("cuModuleLoadData", cu.cuModuleLoadData(ctypes.byref(mod), ctypes.c_char_p(ptx + b"\0")))
    f = ctypes.c_void_p(); ck("cuModuleGetFunction", cu.cuModuleGetFunction(ctypes.byref(f), mod, b"k"))
    ck("cuLaunchKernel", cu.cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, None, None, None))
    ck("cuCtxSynchronize", cu.cuCtxSynchronize())
    time.sleep(2)
    sys.exit(0)
# bystander: torch process holding memory, busy-ish
by = subprocess.Popen([sys.executable, "-c", "import torch,time\na=torch.ones(1<<24,device='cuda')\nprint('bystander up',flush=True)\nt=time.time()\nwhile time.time()-t<12: a.mul_(1.0); torch.cuda.synchronize(); time.sleep(0.05)\nprint('bystander ok',float(a[0]),flush=True)"],
                      env=dict(os.environ, CUDA_VISIBLE_DEVICES="0"))
time.sleep(4)
t0 = time.time()
env = dict(os.environ, CUDA_VISIBLE_DEVICES="0", SLURM_JOB_ID="77", SLURM_PROCID="1", RANK="1", LOCAL_RANK="0")
p = subprocess.Popen([sys.executable, sys.argv[0], "fault"], env=env)
print("faulting pid", p.pid, flush=True)
p.wait()
print("fault exit", p.returncode, "after", round(time.time() - t0, 2), "s", flush=True)
by.wait()
print("bystander exit", by.returncode)
print("== /dev/kmsg raw (NVRM lines, last 40)")
fd = os.open("/dev/kmsg", os.O_RDONLY | os.O_NONBLOCK)
lines = []
while True:
    try:
        b = os.read(fd, 8192)
    except BlockingIOError:
        break
    except OSError as e:
        if e.errno == 32: continue  # EPIPE: overwritten records
        raise
    lines.append(b.decode(errors="replace"))
nv = [l for l in lines if "NVRM" in l or "nvidia" in l.lower()]
for l in nv[-40:]: print(repr(l))
print("== dmesg -T tail")
print(subprocess.run(["dmesg", "--time-format", "iso"], capture_output=True, text=True).stdout.splitlines()[-15:])
print("== nvidia-smi after")
print(subprocess.run(["nvidia-smi", "--query-gpu=index,uuid,pci.bus_id,ecc.errors.uncorrected.volatile.total,clocks_event_reasons.active", "--format=csv"], capture_output=True, text=True).stdout)
