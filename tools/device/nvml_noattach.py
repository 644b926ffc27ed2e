"""Issue 9 timing: does nvmlInitWithFlags(NVML_INIT_FLAG_NO_ATTACH) make the identity queries
(handle, UUID, PCI bus id, name, minor number, MIG mode) cheaper, and do they still answer?
Run in a fresh process per mode: python3 nvml_noattach.py 0|2.  Measurements only."""
import ctypes, sys, time

flags = int(sys.argv[1])
t0 = time.perf_counter()
l = ctypes.CDLL("libnvidia-ml.so.1")
rc = l.nvmlInitWithFlags(ctypes.c_uint(flags))
t1 = time.perf_counter()
n = ctypes.c_uint()
l.nvmlDeviceGetCount_v2(ctypes.byref(n))
out = [f"flags={flags} init rc={rc} {1e3*(t1-t0):.2f} ms, count {n.value}"]
buf = ctypes.create_string_buffer(96)
class Pci(ctypes.Structure):
    _fields_ = [("busIdLegacy", ctypes.c_char * 16), ("domain", ctypes.c_uint), ("bus", ctypes.c_uint),
                ("device", ctypes.c_uint), ("pciDeviceId", ctypes.c_uint), ("pciSubSystemId", ctypes.c_uint),
                ("busId", ctypes.c_char * 32)]
for i in range(n.value):
    h = ctypes.c_void_p()
    t = time.perf_counter(); rc = l.nvmlDeviceGetHandleByIndex_v2(i, ctypes.byref(h)); th = 1e3 * (time.perf_counter() - t)
    t = time.perf_counter()
    r_uuid = l.nvmlDeviceGetUUID(h, buf, 96); uuid = buf.value.decode()
    p = Pci(); r_pci = l.nvmlDeviceGetPciInfo_v3(h, ctypes.byref(p))
    r_name = l.nvmlDeviceGetName(h, buf, 96); name = buf.value.decode()
    m = ctypes.c_uint(); r_min = l.nvmlDeviceGetMinorNumber(h, ctypes.byref(m))
    cur, pend = ctypes.c_uint(), ctypes.c_uint(); r_mig = l.nvmlDeviceGetMigMode(h, ctypes.byref(cur), ctypes.byref(pend))
    tq = 1e3 * (time.perf_counter() - t)
    out.append(f"  gpu {i}: handle rc={rc} {th:.2f} ms; uuid rc={r_uuid} {uuid}; pci rc={r_pci} {p.busId.decode()}; "
               f"name rc={r_name} {name}; minor rc={r_min} {m.value}; mig rc={r_mig} {cur.value}; queries {tq:.2f} ms")
t = time.perf_counter(); total = 1e3 * (t - t0)
out.append(f"  total {total:.2f} ms")
print("\n".join(out))
