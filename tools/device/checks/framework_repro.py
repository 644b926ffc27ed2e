#!/usr/bin/env python3
"""Issue 35 on the GPU host: each framework-layer finding reproduced with the real torch,
accelerate and transformers and a tiny model built from a config (no download).  Each scenario
runs in its own short-lived child with exactly its environment (a context and a few MiB of GPU
memory at most), prints one JSON line; with GPUMAP=path, `gpumap map --json` runs under the
same environment first: `gpumap map --json`'s torch object and findings are recorded beside the framework's behaviour.

usage (repo root, on the GPU host): python3 tools/device/checks/framework_repro.py  (GPUMAP=build/gpumap)
writes $OUT/framework-repro.log
"""
import json
import os
import subprocess
import sys
import tempfile

OUT = os.environ.get("OUT") or tempfile.mkdtemp(prefix="framework-repro-")
LOG = open(os.path.join(OUT, "framework-repro.log"), "a")
GPUMAP = os.environ.get("GPUMAP")


def log(*a):
    s = " ".join(str(x) for x in a)
    print(s, flush=True)
    LOG.write(s + "\n")
    LOG.flush()


CHILD = r'''
import json, os, sys
r = {}
def attempt(name, f):
    try:
        r[name] = f()
    except BaseException as e:
        r[name] = {"raises": type(e).__name__ + ": " + str(e)[:400]}
scenario = os.environ["FV_SCENARIO"]
import torch
if scenario == "trap":
    # pytorch#159641: flash-attention and others call this at import; the count is then fixed.
    attempt("getDeviceCount_at_import", torch._C._cuda_getDeviceCount)
    os.environ["CUDA_VISIBLE_DEVICES"] = os.environ["FV_THEN"]
from transformers import LlamaConfig, LlamaForCausalLM
cfg = LlamaConfig(vocab_size=128, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                  num_attention_heads=4, num_key_value_heads=4, max_position_embeddings=64)
attempt("device_count", torch.cuda.device_count)
attempt("is_available", torch.cuda.is_available)
def tiny_to_cuda():
    m = LlamaForCausalLM(cfg).to("cuda")
    out = m(torch.tensor([[1, 2, 3]], device="cuda")).logits.shape
    return {"device": str(next(m.parameters()).device), "uuid": "GPU-" + str(torch.cuda.get_device_properties(torch.cuda.current_device()).uuid), "logits": list(out)}
attempt("tiny_model_to_cuda", tiny_to_cuda)
def auto_map():
    from accelerate import init_empty_weights, infer_auto_device_map
    with init_empty_weights():
        m = LlamaForCausalLM(cfg)
    mm = json.loads(os.environ.get("FV_MAX_MEMORY", "null"))
    if mm is not None:
        mm = {(int(k) if k.isdigit() else k): v for k, v in mm.items()}
    dm = infer_auto_device_map(m, max_memory=mm)
    return {str(k): (v if isinstance(v, (int, str)) else repr(v)) for k, v in dm.items()}
attempt("infer_auto_device_map", auto_map)
def from_config_auto():
    from transformers import AutoModelForCausalLM
    m = AutoModelForCausalLM.from_config(cfg)
    return str(next(m.parameters()).device)
if scenario == "nvml_lookup":
    def nvml():
        import pynvml as n
        n.nvmlInit()
        key = os.environ["CUDA_VISIBLE_DEVICES"].split(",")[0]
        h = n.nvmlDeviceGetHandleByUUID(key)   # what vLLM's platform code does with the value
        return n.nvmlDeviceGetUUID(h)
    attempt("nvmlDeviceGetHandleByUUID_of_the_value", nvml)
if scenario == "max_memory":
    def get_max():
        from accelerate.utils import get_max_memory
        return {str(k): v for k, v in get_max_memory().items()}
    attempt("get_max_memory", get_max)
print("FVJSON" + json.dumps(r))
'''


def uuid_of_gpu0():
    s = subprocess.run(["nvidia-smi", "--query-gpu=uuid", "--format=csv,noheader"], capture_output=True, text=True).stdout
    return s.split()[0]


def scenario(name, env_over, extra=None):
    lines = []
    log = lines.append  # noqa: F811 (collected, printed in order by main)
    env = {k: v for k, v in os.environ.items() if k not in ("CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER")}
    env.update(env_over)
    env["FV_SCENARIO"] = name
    env.update(extra or {})
    shown = {k: v for k, v in env_over.items()}
    if GPUMAP:
        g = subprocess.run([GPUMAP, "map", "--json"], env={k: v for k, v in env.items() if not k.startswith("FV_")},
                           capture_output=True, text=True, timeout=120)
        try:
            j = json.loads(g.stdout)
            log("   gpumap map: cuda %s, torch %s" % ([d["uuid"] for d in j["cuda"]["devices"]], json.dumps(j.get("torch"))))
            for f in j.get("findings", []):
                log("     finding %s (%s): %s | fix: %s" % (f.get("id"), f.get("severity"), f.get("message", "")[:200], f.get("fix")))
        except Exception:
            log("   gpumap map exit %d: %s" % (g.returncode, (g.stdout + g.stderr)[-400:]))
    p = subprocess.run([sys.executable, "-c", CHILD], env=env, capture_output=True, text=True, timeout=180)
    res = None
    for line in p.stdout.splitlines():
        if line.startswith("FVJSON"):
            res = json.loads(line[6:])
    log("== %s %s\n   %s" % (name, json.dumps(shown), json.dumps(res) if res else "child exit %d: %s" % (p.returncode, p.stderr[-600:])))
    return lines


def main():
    u = uuid_of_gpu0()
    h = u[4:].replace("-", "")
    log("== framework findings on", u)
    cases = [
        ("nvml_lookup", {"CUDA_VISIBLE_DEVICES": "GPU-" + h[:8]}, None),
        ("nvml_lookup", {"CUDA_VISIBLE_DEVICES": u}, None),
        ("count_differs_upper", {"CUDA_VISIBLE_DEVICES": u.upper()}, None),
        ("count_differs_nodash", {"CUDA_VISIBLE_DEVICES": "GPU-" + h}, None),
        ("count_differs_nvml_check", {"CUDA_VISIBLE_DEVICES": u.upper(), "PYTORCH_NVML_BASED_CUDA_CHECK": "1"}, None),
        ("count_differs_raises", {"CUDA_VISIBLE_DEVICES": "0,-"}, None),
        ("ray_empty", {"CUDA_VISIBLE_DEVICES": "", "RAY_ADDRESS": "127.0.0.1:6379", "RAY_NODE_ID": "x"}, None),
        ("trap", {"CUDA_VISIBLE_DEVICES": "0"}, {"FV_THEN": ""}),
        ("trap", {"CUDA_VISIBLE_DEVICES": ""}, {"FV_THEN": "0"}),
        ("max_memory", {"CUDA_VISIBLE_DEVICES": "0"}, {"FV_MAX_MEMORY": json.dumps({"cuda:0": "1GiB", "cpu": "1GiB"})}),
        ("max_memory", {"CUDA_VISIBLE_DEVICES": "0"}, {"FV_MAX_MEMORY": json.dumps({"0": "100000GiB", "cpu": "1GiB"})}),
        ("max_memory", {"CUDA_VISIBLE_DEVICES": "0"}, {"FV_MAX_MEMORY": json.dumps({"0": "10GiB", "1": "70GiB"})}),
        ("max_memory", {"CUDA_VISIBLE_DEVICES": "0"}, {"FV_MAX_MEMORY": json.dumps({"0": "1KiB", "cpu": "10GiB"})}),
    ]
    import concurrent.futures as cf
    with cf.ThreadPoolExecutor(int(os.environ.get("JOBS", "8"))) as pool:
        for lines in pool.map(lambda c: scenario(*c), cases):
            for line in lines:
                log(line)


if __name__ == "__main__":
    main()
