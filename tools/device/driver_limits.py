"""Measures two driver rules the differential test (tools/device/difftest.sh) turned up on
driver 580.159.04: how long a CUDA_VISIBLE_DEVICES / CUDA_DEVICE_ORDER value may be before cuInit
ignores it, and how many characters of a UUID entry it reads.  Each question is a bisection or a
list of probes of the minimal cuInit probe (tools/difftest/difftest_probe.c: no context, no memory).
usage: python3 tools/device/driver_limits.py PROBE   (prints one line per measurement, JSON last)"""
import concurrent.futures as cf
import json
import os
import subprocess
import sys

PROBE = sys.argv[1]
out = {}


def probe(cvd=None, cdo=None, extra=None):
    env = {k: v for k, v in os.environ.items() if k not in ("CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER")}
    if cvd is not None:
        env["CUDA_VISIBLE_DEVICES"] = cvd
    if cdo is not None:
        env["CUDA_DEVICE_ORDER"] = cdo
    env.update(extra or {})
    r = subprocess.run([PROBE], env=env, capture_output=True, text=True, timeout=60)
    lines = r.stdout.split("\n")
    if lines[0].startswith("error"):
        return lines[0].split()[1]
    return "count " + lines[0].split()[1] if lines[0].startswith("count") else "?" + r.stdout[:40]


def first_ignored(make, lo, hi, ignored):
    """The smallest n in [lo, hi] with ignored(probe(make(n))), by bisection (monotone)."""
    while lo < hi:
        mid = (lo + hi) // 2
        if ignored(make(mid)):
            hi = mid
        else:
            lo = mid + 1
    return lo


uuid = None
r = subprocess.run(["nvidia-smi", "--query-gpu=uuid", "--format=csv,noheader"], capture_output=True, text=True)
uuid = r.stdout.split()[0]
hexd = uuid[4:].replace("-", "")
base = probe()
print("baseline", base)

# 1. CUDA_VISIBLE_DEVICES length: "000...01" names index 1 (no such GPU: CUDA_ERROR_NO_DEVICE) unless ignored.
n = first_ignored(lambda n: "0" * (n - 1) + "1", 2, 20000, lambda v: probe(cvd=v) == base)
print(f"CVD: a value of {n - 1} characters is read, {n} is ignored ({probe(cvd='0' * (n - 2) + '1')} / {probe(cvd='0' * (n - 1) + '1')})")
out["cvd_first_ignored_length"] = n
# the same with commas (many entries) and with a multi-byte character: bytes or characters?
out["cvd_commas_at_limit"] = [probe(cvd="1" + "," * (n - 2)), probe(cvd="1" + "," * (n - 1))]
out["cvd_utf8_at_limit"] = [probe(cvd="\u00e9" * ((n - 1) // 2)), probe(cvd="1" + "\u00e9" * (n // 2))]
print("CVD commas at n-1 / n:", out["cvd_commas_at_limit"], "; 2-byte chars:", out["cvd_utf8_at_limit"])
# does the limit move with the variable's name length or the environment's size?
out["cvd_limit_with_big_env"] = first_ignored(lambda n: "0" * (n - 1) + "1", 2, 20000,
                                              lambda v: probe(cvd=v, extra={"GPUMAP_PAD": "x" * 50000}) == base)
print("CVD limit with 50 kB more environment:", out["cvd_limit_with_big_env"])

# 2. CUDA_DEVICE_ORDER length: "X" * n is invalid (CUDA_ERROR_INVALID_DEVICE) unless ignored.
m = first_ignored(lambda n: "X" * n, 1, 20000, lambda v: probe(cdo=v) == base)
print(f"CDO: a value of {m - 1} characters is read, {m} is ignored")
out["cdo_first_ignored_length"] = m
out["cdo_pci_padded"] = [probe(cdo="PCI_BUS_ID" + " " * (m - 11)), probe(cdo="PCI_BUS_ID" + "X" * (m - 10))]

# 3. UUID entries: how many characters after "GPU-" are read (dashes included), how many hex digits.
cases = {
    "dash_after_prefix_full": "GPU--" + uuid[4:],
    "dash_after_prefix_wrong_last": "GPU--" + uuid[4:-1] + ("0" if uuid[-1] != "0" else "1"),
    "two_dashes_after_prefix_wrong_last_two": "GPU---" + uuid[4:-2] + "zz",
    "no_dashes_then_junk": "GPU-" + hexd + "zz",
    "no_dashes_31_then_junk": "GPU-" + hexd[:31] + "z",
    "36_dashes_then_hex": "GPU-" + "-" * 36 + hexd,
    "35_dashes_then_hex": "GPU-" + "-" * 35 + hexd,
    "doubled_dashes_28hex_newline": "GPU-" + "--".join([hexd[:8], hexd[8:12], hexd[12:16], hexd[16:20], hexd[20:28]]) + "\n",
    "doubled_dashes_full": "GPU-" + "--".join([hexd[:8], hexd[8:12], hexd[12:16], hexd[16:20], hexd[20:]]),
    "junk_at_37th": "GPU-" + uuid[4:] + "z",
    "junk_at_36th_with_dash_shift": "GPU--" + uuid[4:-1] + "z",
    "mig_prefix_dash": "MIG--" + uuid[4:],
}
for k, v in cases.items():
    out["uuid_" + k] = probe(cvd=v)
    print(f"UUID {k}: {v!r} -> {out['uuid_' + k]}")
# the window: k dashes after "GPU-", then the hex digits, then junk: found for k <= ?
for k in range(0, 40, 4):
    v = "GPU-" + "-" * k + hexd[: max(0, 36 - k)] + "zz"
    print(f"UUID window: {k} dashes + {max(0, 36 - k)} hex + zz -> {probe(cvd=v)}")
print(json.dumps(out))
