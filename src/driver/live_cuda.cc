#include "driver/live_cuda.h"

#include <chrono>

#include "driver/cuda_api.h"
#include "driver/cuda_probe.h"
#include "driver/dynlib.h"

namespace gpumap {

std::optional<CudaProbe> read_live_cuda(const std::string& cuda_library) {
  auto t0 = std::chrono::steady_clock::now();
  std::unique_ptr<DynLib> lib = DynLib::if_loaded(cuda_library);
  if (!lib) return std::nullopt;
  using FnCount = CUresult(int*);
  auto count = lib->bind<FnCount>({"cuDeviceGetCount"}, false);
  int n = 0;
  // Before cuInit every driver call answers CUDA_ERROR_NOT_INITIALIZED (3); this one allocates nothing.
  if (!count || count(&n) != 0) return std::nullopt;
  CudaProbe p;
  p.devices = list_cuda_devices(*lib);
  p.elapsed_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  return p;
}

}  // namespace gpumap
