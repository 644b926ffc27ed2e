"""On a GPU host with the real torch and transformers: the library answers live once CUDA runs
(issue 19 point 7).  Prints one PASS/FAIL line per check and timings; exits 1 on a failure.
usage: GPUMAP_BUILD_DIR=build PYTHONPATH=python python3 tools/device/checks/live_truth.py"""
import json
import os
import subprocess
import sys
import tempfile
import time

results = []


def check(name, ok, detail=""):
    results.append(ok)
    print(("PASS " if ok else "FAIL ") + name + (f"  [{detail}]" if detail else ""), flush=True)


def nvml_memory(pid):
    import pynvml
    pynvml.nvmlInit()
    out = {}
    for i in range(pynvml.nvmlDeviceGetCount()):
        h = pynvml.nvmlDeviceGetHandleByIndex(i)
        for p in pynvml.nvmlDeviceGetComputeRunningProcesses(h):
            if p.pid == pid:
                out[i] = (p.usedGpuMemory or 0) // 2**20
    return out


def scenario_late():
    """torch starts CUDA with CUDA_VISIBLE_DEVICES unset; the program then sets a late value."""
    import gpumap
    t = time.perf_counter(); gpumap.devices(); first = (time.perf_counter() - t) * 1e3
    t = time.perf_counter(); pre = gpumap.devices(); predicted_ms = (time.perf_counter() - t) * 1e3
    check("before CUDA: predicted", pre.source == "predicted", pre.source)
    import torch
    x = torch.ones(1024, device="cuda:0")
    real_uuid = "GPU-" + str(torch.cuda.get_device_properties(0).uuid)
    before = nvml_memory(os.getpid())
    os.environ["CUDA_VISIBLE_DEVICES"] = "GPU-deadbeef"
    t = time.perf_counter(); d = gpumap.devices(); live_ms = (time.perf_counter() - t) * 1e3
    check("devices() live after a late CUDA_VISIBLE_DEVICES", d.source == "live" and len(d) == torch.cuda.device_count()
          and d[0]["uuid"].lower() == real_uuid.lower(), f"{[x['uuid'] for x in d]} torch {real_uuid}")
    check("devices() carries set-too-late", [f.id for f in d.findings] == ["set-too-late"], str([f.id for f in d.findings]))
    try:
        gpumap.verify(d[0]["nvml_index"], prefix=True)
        check("verify(the GPU torch uses) passes live", True)
    except gpumap.GpumapError as e:
        check("verify(the GPU torch uses) passes live", False, str(e))
    cdm = gpumap.check_device_map({"layer": 0})
    check("check_device_map live", cdm["layer"]["uuid"].lower() == real_uuid.lower())
    t = time.perf_counter(); diag = gpumap.diagnose(); diag_ms = (time.perf_counter() - t) * 1e3
    late = [f for f in diag.findings if f.id == "set-too-late"]
    check("diagnose() names set-too-late", len(late) == 1, late[0].message[:160] if late else "")
    check("diagnose() sees this process's memory", diag.data["memory_known"] and any(
        m["uuid"].lower() == real_uuid.lower() for m in diag.data["memory"]), json.dumps(diag.data["memory"]))
    after = nvml_memory(os.getpid())
    check("no new context or memory from gpumap", before == after, f"{before} -> {after}")
    times = []
    for _ in range(20):
        t = time.perf_counter(); gpumap.devices(); times.append((time.perf_counter() - t) * 1e3)
    dtimes = []
    for _ in range(10):
        t = time.perf_counter(); gpumap.diagnose(); dtimes.append((time.perf_counter() - t) * 1e3)
    print(f"TIME first devices() {first:.2f} ms; predicted {predicted_ms:.2f} ms; first live {live_ms:.2f} ms; "
          f"live median {sorted(times)[10]:.2f} ms; diagnose() first {diag_ms:.2f} ms, median {sorted(dtimes)[5]:.2f} ms")
    print("REPORT\n" + str(diag))
    return late[0].fix if late else ""


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "late":
        print("FIX " + scenario_late())
        return
    if len(sys.argv) > 1 and sys.argv[1] == "clean":
        import gpumap
        import torch
        torch.ones(1, device="cuda:0")
        os.environ["CUDA_VISIBLE_DEVICES"] = "0"
        d = gpumap.diagnose()
        print("CLEAN", [f.id for f in d.findings if f.severity != "info"], d.source)
        return
    if len(sys.argv) > 1 and sys.argv[1] == "model":
        scenario_model()
        return
    here = os.path.abspath(__file__)
    env = {k: v for k, v in os.environ.items() if k != "CUDA_VISIBLE_DEVICES"}
    r = subprocess.run([sys.executable, here, "late"], env=env, capture_output=True, text=True, timeout=300)
    print(r.stdout + r.stderr[-2000:])
    fix = [l[4:] for l in r.stdout.splitlines() if l.startswith("FIX ")]
    check("late scenario ran", r.returncode == 0 and bool(fix), f"rc {r.returncode}")
    # "GPU-deadbeef" names no GPU: there is nothing to paste (the late value is the mistake).  On one
    # GPU every valid late value names the same GPU, so a pasteable relaunch fix cannot arise here.
    check("a late value naming no GPU gives no fix to paste", fix == [""], str(fix))
    # The variable on the launch line, and the same value set again late: nothing to report.
    r = subprocess.run([sys.executable, here, "clean"], env=dict(env, CUDA_VISIBLE_DEVICES="0"), capture_output=True,
                       text=True, timeout=300)
    print(r.stdout + r.stderr[-2000:])
    check("launch-line variable, same value late: no set-too-late", r.returncode == 0 and "CLEAN []" in r.stdout)
    r = subprocess.run([sys.executable, here, "model"], env=env, capture_output=True, text=True, timeout=300)
    print(r.stdout + r.stderr[-3000:])
    results.append(r.returncode == 0)
    print(f"{sum(results)} passed, {len(results) - sum(results)} failed")
    sys.exit(0 if all(results) else 1)


def scenario_model():
    import gpumap
    import torch
    from transformers import AutoModelForCausalLM, GPT2Config
    cfg = GPT2Config(n_layer=4, n_embd=64, n_head=2, vocab_size=1000, n_positions=64)
    with tempfile.TemporaryDirectory() as d:
        AutoModelForCausalLM.from_config(cfg).save_pretrained(d)
        m = AutoModelForCausalLM.from_pretrained(d, device_map={"": 0})
        diag = gpumap.diagnose(m)
        td = diag.data["model"]["tensor_devices"]
        check("diagnose(model on cuda:0): its tensors on the physical GPU", set(td) == {"cuda:0"} and diag.devices[0]["uuid"]
              .lower() == ("GPU-" + str(torch.cuda.get_device_properties(0).uuid)).lower(), json.dumps(td))
        check("no finding above info for a model where it belongs", [f.id for f in diag.findings if f.severity != "info"] == [],
              str([f.id for f in diag.findings]))
        mixed = None
        for size in ("1MiB", "600KiB", "400KiB", "300KiB", "200KiB"):
            mm = {0: size, "cpu": "1GiB"}
            m2 = AutoModelForCausalLM.from_pretrained(d, device_map="auto", max_memory=mm)
            hf = getattr(m2, "hf_device_map", None)
            print(f"max_memory {mm}: hf_device_map {hf}")
            if hf and any(v == "cpu" for v in hf.values()) and any(v == 0 for v in hf.values()):
                mixed = (m2, mm)
                break
        if mixed:
            diag = gpumap.diagnose(mixed[0], max_memory=mixed[1])
            off = [f for f in diag.findings if f.id == "offloaded-modules"]
            check("diagnose(model with offload) names the offloaded modules", len(off) == 1, off[0].message if off else "")
            check("check_device_map(hf_device_map) live", all(v == "cpu" or v["cuda_ordinal"] == 0 for v in
                                                              gpumap.check_device_map(mixed[0].hf_device_map).values()))
            print("REPORT\n" + str(diag))
        else:
            check("a max_memory that splits the model between GPU and CPU was found", False)
        m3 = AutoModelForCausalLM.from_pretrained(d, device_map="auto", max_memory={0: "1KiB", "cpu": "1GiB"})
        diag = gpumap.diagnose(m3)
        check("diagnose(model all on cpu) says model-on-cpu", "model-on-cpu" in [f.id for f in diag.findings],
              str([f.id for f in diag.findings]))
    print(f"{sum(results)} passed, {len(results) - sum(results)} failed")
    sys.exit(0 if all(results) else 1)


if __name__ == "__main__":
    main()
