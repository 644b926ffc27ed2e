#include "driver/live_cuda.h"

#include <chrono>
#include <exception>
#include <memory>

#include "driver/cuda_api.h"
#include "driver/cuda_probe.h"
#include "driver/driver_source.h"
#include "driver/driver_thread.h"
#include "driver/dynlib.h"

namespace gpumap {
namespace {

/// What a job on the CUDA driver thread hands back; owned by the job too, so an abandoned one
/// (a hung query) writes into memory that still exists.
struct LiveAnswer {
  std::optional<CudaProbe> probe;
  std::exception_ptr error;
};

/// The loaded-and-initialised check and, unless `count_only`, the device list.
void read_live(const std::string& cuda_library, bool count_only, LiveAnswer& a) {
  try {
    auto t0 = std::chrono::steady_clock::now();
    std::unique_ptr<DynLib> lib = DynLib::if_loaded(cuda_library);
    if (!lib) return;
    using FnCount = CUresult(int*);
    auto count = lib->bind<FnCount>({"cuDeviceGetCount"}, false);
    int n = 0;
    // Before cuInit every driver call answers CUDA_ERROR_NOT_INITIALIZED (3); this one allocates nothing.
    if (!count || count(&n) != 0) return;
    CudaProbe p;
    if (!count_only) p.devices = list_cuda_devices(*lib);
    p.elapsed_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    a.probe = std::move(p);
  } catch (...) {
    a.error = std::current_exception();
  }
}

std::optional<CudaProbe> read_bounded(double timeout_s, const std::string& cuda_library, bool count_only) {
  if (timeout_s <= 0) {
    LiveAnswer a;
    read_live(cuda_library, count_only, a);
    if (a.error) std::rethrow_exception(a.error);
    return std::move(a.probe);
  }
  auto a = std::make_shared<LiveAnswer>();
  bool answered = run_on_driver_thread(
      DriverLane::kCuda, [a, cuda_library, count_only] { read_live(cuda_library, count_only, *a); },
      std::chrono::duration<double>(timeout_s));
  if (!answered)
    throw driver_timeout_error(timeout_s, "the CUDA driver running in this process (" + cuda_library + ")",
                               count_only ? "a hung cuDeviceGetCount" : "a hung CUDA device query");
  if (a->error) std::rethrow_exception(a->error);
  return std::move(a->probe);
}

}  // namespace

std::optional<CudaProbe> read_live_cuda(double timeout_s, const std::string& cuda_library) {
  return read_bounded(timeout_s, cuda_library, false);
}

bool live_cuda_started(double timeout_s, const std::string& cuda_library) {
  return read_bounded(timeout_s, cuda_library, true).has_value();
}

}  // namespace gpumap
