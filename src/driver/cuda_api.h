// The part of the CUDA driver API that gpumap calls: cuInit and device queries only.
// Never a context, never memory.  Declared from the documented ABI (cuda.h, CUDA 13).
#pragma once

extern "C" {
typedef int CUresult;
typedef int CUdevice;
typedef struct {
  unsigned char bytes[16];
} CUuuid;
}

namespace gpumap {
constexpr int kCuAttrComputeCapabilityMajor = 75;
constexpr int kCuAttrComputeCapabilityMinor = 76;
constexpr int kCuAttrMultiprocessorCount = 16;
/// "CUDA_ERROR_NO_DEVICE" for 100, ...; used when cuGetErrorName is missing.
const char* cuda_result_name(int code);
}  // namespace gpumap
