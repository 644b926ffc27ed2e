#include "driver/cuda_probe.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstring>
#include <iterator>
#include <sstream>

#include "driver/cuda_api.h"
#include "driver/dynlib.h"
#include "model/error.h"
#include "os/subprocess.h"

namespace gpumap {

void answer_probe(const std::string& cuda_library) {
  // The answer goes out on a channel of its own: stdout as it was at start, kept on a private
  // descriptor.  Descriptor 1 then points at stderr, so whatever the driver library prints
  // cannot pose as (or corrupt) the answer.
  std::fflush(stdout);
  int answer = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
  if (answer < 0 || dup2(STDERR_FILENO, STDOUT_FILENO) < 0)
    throw Error(kExitError, "probe: cannot set up the answer channel");
  std::string text = serialize_probe(probe_in_process(cuda_library));
  std::fflush(stdout);
  for (size_t off = 0; off < text.size();) {
    ssize_t n = write(answer, text.data() + off, text.size() - off);
    if (n <= 0) throw Error(kExitError, "probe: cannot write the answer");
    off += static_cast<size_t>(n);
  }
  close(answer);
}

std::vector<CudaDevice> list_cuda_devices(DynLib& lib) {
  using FnCount = CUresult(int*);
  using FnGet = CUresult(CUdevice*, int);
  using FnUuid = CUresult(CUuuid*, CUdevice);
  using FnStr = CUresult(char*, int, CUdevice);
  auto count = lib.bind<FnCount>({"cuDeviceGetCount"}, true);
  auto get = lib.bind<FnGet>({"cuDeviceGet"}, true);
  auto uuid = lib.bind<FnUuid>({"cuDeviceGetUuid_v2", "cuDeviceGetUuid"}, true);
  auto pci = lib.bind<FnStr>({"cuDeviceGetPCIBusId"}, true);
  auto name = lib.bind<FnStr>({"cuDeviceGetName"}, true);
  // A device whose ordinal or UUID the driver would not give is not left out (the list would
  // then be another process's, and a fix written from it wrong; issue 34 point 8): the whole
  // answer is an error naming the call.  Name and PCI bus id are descriptive (gpumap names a
  // device from NVML by its UUID): a failure leaves them empty.
  auto failed = [&](const char* call, const std::string& what, CUresult rc) {
    return Error(kExitNoDriver,
                 "the CUDA driver (" + lib.name() + ") failed " + call + what + ": " + cuda_result_name(rc) + " (" +
                     std::to_string(rc) + ")",
                 "its device list cannot be read, so gpumap gives none rather than a wrong one: check `nvidia-smi` "
                 "and the kernel log (dmesg) for Xid errors");
  };
  std::vector<CudaDevice> out;
  int n = 0;
  if (CUresult rc = count(&n); rc != 0) throw failed("cuDeviceGetCount", "", rc);
  n = std::clamp(n, 0, static_cast<int>(kMaxCudaDevices));  // a broken driver's count is not a loop bound
  for (int i = 0; i < n; ++i) {
    CUdevice d;
    CudaDevice dev;
    std::string which = " for cuda:" + std::to_string(i) + " (of " + std::to_string(n) + ")";
    if (CUresult rc = get(&d, i); rc != 0) throw failed("cuDeviceGet", which, rc);
    CUuuid u{};
    char buf[256] = {};
    if (CUresult rc = uuid(&u, d); rc != 0) throw failed("cuDeviceGetUuid", which, rc);
    std::string hex;
    char b[3];
    for (int k = 0; k < 16; ++k) {
      std::snprintf(b, sizeof b, "%02x", u.bytes[k]);
      hex += b;
      if (k == 3 || k == 5 || k == 7 || k == 9) hex += '-';
    }
    dev.uuid = "GPU-" + hex;
    // A driver may fill the buffer without a terminator: read at most its size.
    auto text_of = [&] { return std::string(buf, strnlen(buf, sizeof buf)); };
    if (pci(buf, sizeof buf, d) == 0) dev.pci_bus_id = text_of();
    std::fill(std::begin(buf), std::end(buf), '\0');
    if (name(buf, sizeof buf, d) == 0) dev.name = text_of();
    out.push_back(dev);
  }
  return out;
}

CudaProbe probe_in_process(const std::string& cuda_library) {
  using FnInit = CUresult(unsigned);
  using FnErr = CUresult(CUresult, const char**);
  auto t0 = std::chrono::steady_clock::now();
  DynLib lib(cuda_library);
  auto init = lib.bind<FnInit>({"cuInit"}, true);
  auto errname = lib.bind<FnErr>({"cuGetErrorName"}, false);
  CudaProbe p;
  CUresult rc = init(0);
  if (rc != 0) {
    const char* n = nullptr;
    if (!errname || errname(rc, &n) != 0 || !n) n = cuda_result_name(rc);
    p.error = n;
    p.error_code = rc;
  } else {
    p.devices = list_cuda_devices(lib);
  }
  p.elapsed_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  return p;
}

std::string serialize_probe(const CudaProbe& p) {
  std::ostringstream o;
  o << "gpumap-probe\t1\n";
  if (!p.error.empty()) o << "error\t" << p.error << "\t" << p.error_code << "\n";
  for (const CudaDevice& d : p.devices) o << "device\t" << d.uuid << "\t" << d.pci_bus_id << "\t" << d.name << "\n";
  o << "elapsed_ms\t" << p.elapsed_ms << "\n";
  o << "end\n";  // a cut-short answer lacks it
  return o.str();
}

CudaProbe parse_probe(const std::string& text) {
  CudaProbe p;
  std::istringstream in(text);
  std::string line;
  bool header = false, end = false;
  auto nonsense = [&](const std::string& why) {
    return Error(kExitError, "the CUDA probe child answered nonsense (" + why + "): " + text.substr(0, 200));
  };
  while (std::getline(in, line)) {
    if (end) throw nonsense("text after the end");
    std::vector<std::string> f;
    std::string cur;
    for (char c : line) {
      if (c == '\t') {
        f.push_back(cur);
        cur.clear();
      } else {
        cur.push_back(c);
      }
    }
    f.push_back(cur);
    if (f[0] == "gpumap-probe") {
      if (header) throw nonsense("two headers");
      header = true;
    } else if (!header) {
      throw nonsense("text before the header");
    } else if (f[0] == "end") {
      end = true;
    } else if (f[0] == "error" && f.size() >= 3) {
      p.error = f[1];
      p.error_code = std::atoi(f[2].c_str());
    } else if (f[0] == "device" && f.size() >= 4) {
      if (p.devices.size() >= kMaxCudaDevices) throw nonsense("more than " + std::to_string(kMaxCudaDevices) + " devices");
      p.devices.push_back({f[1], f[2], f[3]});
    } else if (f[0] == "elapsed_ms" && f.size() >= 2) {
      p.elapsed_ms = std::atof(f[1].c_str());
    }
  }
  if (!header) throw Error(kExitError, "the CUDA probe child gave no answer: " + text.substr(0, 200));
  if (!end) throw nonsense("cut short");
  return p;
}

namespace {
DriverSource bounded(DriverSource src, double bound) {  // for the message: the bound that ran out
  src.driver_timeout_s = bound;
  return src;
}
}  // namespace

CudaProbe probe_cuda(const DriverSource& src, const Environment& env_in) {
  Environment env = env_in;
  // The child asks exactly the driver this process uses: the library is on its command line and a
  // simulated host in GPUMAP_FAKE_HOST; a GPUMAP_SIMULATE in the environment in question (one that
  // --simulate overrode) must not send it to another host.
  env.unset("GPUMAP_SIMULATE");
  if (src.simulated) env.set("GPUMAP_FAKE_HOST", src.host_file);
  if (src.probe_command.empty())
    throw Error(kExitError, "cannot ask the CUDA driver: no probe program is configured (Seams::probe_command)");
  std::vector<std::string> argv = src.probe_command;
  argv.insert(argv.end(), {"--cuda-lib", src.cuda_library});
  // The same bound as reading NVML (GPUMAP_DRIVER_TIMEOUT): a hung cuInit must not hang gpumap.
  double bound = src.probe_timeout_s >= 0 ? src.probe_timeout_s : src.driver_timeout_s;
  int timeout_ms = bound > 0 ? static_cast<int>(std::min(bound, 86400.0) * 1000) : INT_MAX;
  ProcResult r = run_capture(argv, env.to_strings(), std::max(timeout_ms, 1));
  if (!r.spawn_error.empty()) throw Error(kExitError, "cannot start the CUDA probe: " + r.spawn_error);
  if (r.timed_out)
    throw driver_timeout_error(bounded(src, bound), "the CUDA driver (" + src.cuda_library + ")",
                               "a hung cuInit in the probe child, which was killed");
  // The child died of a crash inside the driver (a long first MIG- entry does this to cuInit):
  // that is the driver's answer for this environment, not a failure to ask it.
  if (r.exit_code == 128 + SIGSEGV || r.exit_code == 128 + SIGBUS || r.exit_code == 128 + SIGABRT ||
      r.exit_code == 128 + SIGILL) {
    CudaProbe p;
    p.error = "DRIVER_CRASH";
    p.error_code = -(r.exit_code - 128);  // minus the signal: no CUresult came back
    return p;
  }
  if (r.exit_code != 0)
    throw Error(r.exit_code == kExitNoDriver ? kExitNoDriver : kExitError,
                "the CUDA probe failed: " + (r.err.empty() ? "exit " + std::to_string(r.exit_code) : r.err));
  return parse_probe(r.out);
}

}  // namespace gpumap
