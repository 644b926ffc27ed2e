# Sourced by the bench/ scripts.  bench_host (ps_bench.sh, metrics_bench.sh): a simulated 8-GPU
# host whose process lists hold TOTAL entries, REAL of them live `sleep` processes with 4 different
# CUDA_VISIBLE_DEVICES/CUDA_DEVICE_ORDER settings (so /proc/PID/environ is really read and
# resolved), the rest made-up pids that show as exited.
# bench_host TMP TOTAL REAL: writes TMP/host.json; the sleepers' pids are appended to the array `pids`.
bench_host() {
  local tmp=$1 total=$2 real=$3 i
  local envs=("CUDA_VISIBLE_DEVICES=1,0" "CUDA_VISIBLE_DEVICES=3" "CUDA_DEVICE_ORDER=PCI_BUS_ID" "HOME=/")
  : >"$tmp/pids"
  for ((i = 0; i < real; i++)); do
    env -i "${envs[i % 4]}" /bin/sleep 600 & pids+=($!)
    echo $! >>"$tmp/pids"
  done
  python3 - "$total" "$tmp/pids" "$tmp/host.json" <<'PY'
import json, sys
total, pidfile, out = int(sys.argv[1]), sys.argv[2], sys.argv[3]
real = [int(l) for l in open(pidfile) if l.strip()]
fake = [4_000_000 - i for i in range(total - len(real))]  # above pid_max: no such process
pids = real + fake
gpus = []
for g in range(8):
    gpus.append({"name": "NVIDIA H200", "uuid": "GPU-%08x-0000-4000-8000-%012x" % (0x5eed0000 + g, g),
                 "pci_bus_id": "00000000:%02x:00.0" % (0x18 + g * 0x10), "compute_capability": "9.0",
                 "memory_total_mib": 143771, "memory_used_mib": 0,
                 "processes": [{"pid": p, "used_memory_mib": 256} for p in pids[g::8]]})
json.dump({"driver_version": "580.159.04", "cuda_driver_version": 13000, "gpus": gpus}, open(out, "w"))
PY
}

# spread_host SRC OUT PID...: the host file SRC with its process lists replaced by PID... spread over
# its GPUs in turn (the i-th on GPU i % count), 512 MiB each; written to OUT.
spread_host() {
  python3 - "$@" <<'PY'
import json, sys
src, out, pids = sys.argv[1], sys.argv[2], [int(p) for p in sys.argv[3:]]
h = json.load(open(src))
for g in h["gpus"]:
    g["processes"] = []
for i, p in enumerate(pids):
    h["gpus"][i % len(h["gpus"])]["processes"].append({"pid": p, "used_memory_mib": 512})
json.dump(h, open(out, "w"))
PY
}
