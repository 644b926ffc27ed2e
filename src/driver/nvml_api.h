// The part of NVML that gpumap calls, declared here from NVML's documented ABI
// (nvml.h, NVML_API_VERSION 13; struct layouts checked against driver 580's header).
// Shared by the real-driver reader and the fake library, so both agree on layouts.
#pragma once
#include <cstdint>

extern "C" {

typedef int nvmlReturn_t;
typedef struct nvmlDevice_st* nvmlDevice_t;

enum : int {
  NVML_SUCCESS = 0,
  NVML_ERROR_UNINITIALIZED = 1,
  NVML_ERROR_INVALID_ARGUMENT = 2,
  NVML_ERROR_NOT_SUPPORTED = 3,
  NVML_ERROR_NO_PERMISSION = 4,
  NVML_ERROR_NOT_FOUND = 6,
  NVML_ERROR_INSUFFICIENT_SIZE = 7,
  NVML_ERROR_DRIVER_NOT_LOADED = 9,
  NVML_ERROR_LIBRARY_NOT_FOUND = 12,
  NVML_ERROR_FUNCTION_NOT_FOUND = 13,
  NVML_ERROR_GPU_IS_LOST = 15,
  NVML_ERROR_LIB_RM_VERSION_MISMATCH = 18,
  NVML_ERROR_ARGUMENT_VERSION_MISMATCH = 25,
  NVML_ERROR_UNKNOWN = 999,
};

typedef struct {
  char busIdLegacy[16];
  unsigned int domain;
  unsigned int bus;
  unsigned int device;
  unsigned int pciDeviceId;
  unsigned int pciSubSystemId;
  char busId[32];
} nvmlPciInfo_t;

typedef struct {
  unsigned long long total;
  unsigned long long free;
  unsigned long long used;
} nvmlMemory_t;

typedef struct {
  unsigned int version;  // sizeof(nvmlMemory_v2_t) | (2 << 24)
  unsigned long long total;
  unsigned long long reserved;
  unsigned long long free;
  unsigned long long used;
} nvmlMemory_v2_t;

typedef struct {
  unsigned int gpu;
  unsigned int memory;
} nvmlUtilization_t;

// Used by nvmlDevice*RunningProcesses (unversioned).
typedef struct {
  unsigned int pid;
  unsigned long long usedGpuMemory;
} nvmlProcessInfo_v1_t;

// Used by the _v2 and _v3 process calls (nvml.h: nvmlProcessInfo_t == nvmlProcessInfo_v2_t).
typedef struct {
  unsigned int pid;
  unsigned long long usedGpuMemory;
  unsigned int gpuInstanceId;
  unsigned int computeInstanceId;
} nvmlProcessInfo_v2_t;

// nvmlDeviceGetProcessUtilization's sample (nvml.h nvmlProcessUtilizationSample_t).
typedef struct {
  unsigned int pid;
  unsigned long long timeStamp;  // CPU timestamp, microseconds
  unsigned int smUtil;
  unsigned int memUtil;
  unsigned int encUtil;
  unsigned int decUtil;
} nvmlProcessUtilizationSample_t;

// Its successor's (R550+, nvmlDeviceGetProcessesUtilizationInfo): nvmlProcessUtilizationInfo_v1_t
// and the versioned container nvmlProcessesUtilizationInfo_v1_t.
typedef struct {
  unsigned long long timeStamp;
  unsigned int pid;
  unsigned int smUtil;
  unsigned int memUtil;
  unsigned int encUtil;
  unsigned int decUtil;
  unsigned int jpgUtil;
  unsigned int ofaUtil;
} nvmlProcessUtilizationInfo_v1_t;

typedef struct {
  unsigned int version;              // sizeof | (1 << 24): kNvmlProcessesUtilizationInfoV1
  unsigned int processSamplesCount;  // in: the array's room; out: samples (or the room needed)
  unsigned long long lastSeenTimeStamp;
  nvmlProcessUtilizationInfo_v1_t* procUtilArray;
} nvmlProcessesUtilizationInfo_v1_t;

static_assert(sizeof(nvmlProcessUtilizationInfo_v1_t) == 40, "nvml.h: 36 bytes padded to 40");
static_assert(sizeof(nvmlProcessesUtilizationInfo_v1_t) == 24, "nvml.h: nvmlProcessesUtilizationInfo_v1 is 0x01000018");

// Every NVML call gpumap binds, each named once, newest version first:
//
//   X(member, need, return type, (parameters), symbol, older symbols...)
//
// `member` is the reader's name for the call (driver/nvml_reader.cc makes a function pointer of
// each); `need` is `required` (a library without any of the symbols is refused), `optional`
// (nullptr when absent) or `fallback_for(member)` (optional, and looked up only when that
// earlier member bound nothing: the process lists' unversioned call, whose struct differs).
// The versions of a call share its signature (nvml.h; enums written as int).  Each symbol gets a
// prototype from this list below; the reader's pointer types are decltype of those prototypes, and
// the fake library (src/fake/fake_nvml.cc) defines the same names against them, so a wrong
// signature does not compile (libnvidia-container checks its NVML calls with __typeof__ alike).
// The order is the binding order, which `list --json`'s nvml_symbols shows.
#define GPUMAP_NVML_CALLS(X)                                                                                      \
  X(init, required, nvmlReturn_t, (void), nvmlInit_v2, nvmlInit)                                                   \
  X(shutdown, required, nvmlReturn_t, (void), nvmlShutdown)                                                        \
  X(error_string, optional, const char*, (nvmlReturn_t result), nvmlErrorString)                                   \
  X(driver_version, optional, nvmlReturn_t, (char* version, unsigned int length), nvmlSystemGetDriverVersion)      \
  X(cuda_version, optional, nvmlReturn_t, (int* cudaDriverVersion), nvmlSystemGetCudaDriverVersion_v2,             \
    nvmlSystemGetCudaDriverVersion)                                                                                \
  X(count, required, nvmlReturn_t, (unsigned int* deviceCount), nvmlDeviceGetCount_v2, nvmlDeviceGetCount)         \
  X(handle, required, nvmlReturn_t, (unsigned int index, nvmlDevice_t* device), nvmlDeviceGetHandleByIndex_v2,     \
    nvmlDeviceGetHandleByIndex)                                                                                    \
  X(name, required, nvmlReturn_t, (nvmlDevice_t device, char* name, unsigned int length), nvmlDeviceGetName)       \
  X(uuid, required, nvmlReturn_t, (nvmlDevice_t device, char* uuid, unsigned int length), nvmlDeviceGetUUID)       \
  X(pci, required, nvmlReturn_t, (nvmlDevice_t device, nvmlPciInfo_t* pci), nvmlDeviceGetPciInfo_v3,               \
    nvmlDeviceGetPciInfo_v2, nvmlDeviceGetPciInfo)                                                                 \
  X(minor, optional, nvmlReturn_t, (nvmlDevice_t device, unsigned int* minorNumber), nvmlDeviceGetMinorNumber)     \
  X(mem2, optional, nvmlReturn_t, (nvmlDevice_t device, nvmlMemory_v2_t* memory), nvmlDeviceGetMemoryInfo_v2)      \
  X(mem, optional, nvmlReturn_t, (nvmlDevice_t device, nvmlMemory_t* memory), nvmlDeviceGetMemoryInfo)             \
  X(util, optional, nvmlReturn_t, (nvmlDevice_t device, nvmlUtilization_t* utilization),                           \
    nvmlDeviceGetUtilizationRates)                                                                                 \
  X(cc, optional, nvmlReturn_t, (nvmlDevice_t device, int* major, int* minor), nvmlDeviceGetCudaComputeCapability) \
  X(mig_mode, optional, nvmlReturn_t, (nvmlDevice_t device, unsigned int* currentMode, unsigned int* pendingMode), \
    nvmlDeviceGetMigMode)                                                                                          \
  X(mig_max, optional, nvmlReturn_t, (nvmlDevice_t device, unsigned int* count), nvmlDeviceGetMaxMigDeviceCount)   \
  X(mig_handle, optional, nvmlReturn_t, (nvmlDevice_t device, unsigned int index, nvmlDevice_t* migDevice),        \
    nvmlDeviceGetMigDeviceHandleByIndex)                                                                           \
  X(gi_id, optional, nvmlReturn_t, (nvmlDevice_t device, unsigned int* id), nvmlDeviceGetGpuInstanceId)            \
  X(ci_id, optional, nvmlReturn_t, (nvmlDevice_t device, unsigned int* id), nvmlDeviceGetComputeInstanceId)        \
  X(compute, optional, nvmlReturn_t, (nvmlDevice_t device, unsigned int* infoCount, nvmlProcessInfo_v2_t* infos),  \
    nvmlDeviceGetComputeRunningProcesses_v3, nvmlDeviceGetComputeRunningProcesses_v2)                              \
  X(compute_v1, fallback_for(compute), nvmlReturn_t,                                                               \
    (nvmlDevice_t device, unsigned int* infoCount, nvmlProcessInfo_v1_t* infos), nvmlDeviceGetComputeRunningProcesses) \
  X(graphics, optional, nvmlReturn_t, (nvmlDevice_t device, unsigned int* infoCount, nvmlProcessInfo_v2_t* infos), \
    nvmlDeviceGetGraphicsRunningProcesses_v3, nvmlDeviceGetGraphicsRunningProcesses_v2)                            \
  X(graphics_v1, fallback_for(graphics), nvmlReturn_t,                                                             \
    (nvmlDevice_t device, unsigned int* infoCount, nvmlProcessInfo_v1_t* infos), nvmlDeviceGetGraphicsRunningProcesses) \
  X(affinity, optional, nvmlReturn_t, (nvmlDevice_t device, unsigned int cpuSetSize, unsigned long* cpuSet),       \
    nvmlDeviceGetCpuAffinity)                                                                                      \
  X(link_state, optional, nvmlReturn_t, (nvmlDevice_t device, unsigned int link, int* isActive),                   \
    nvmlDeviceGetNvLinkState)                                                                                      \
  X(link_pci, optional, nvmlReturn_t, (nvmlDevice_t device, unsigned int link, nvmlPciInfo_t* pci),                \
    nvmlDeviceGetNvLinkRemotePciInfo_v2, nvmlDeviceGetNvLinkRemotePciInfo)                                         \
  X(link_type, optional, nvmlReturn_t, (nvmlDevice_t device, unsigned int link, int* pNvLinkDeviceType),           \
    nvmlDeviceGetNvLinkRemoteDeviceType)                                                                           \
  X(p2p, optional, nvmlReturn_t, (nvmlDevice_t device1, nvmlDevice_t device2, int p2pIndex, int* p2pStatus),      \
    nvmlDeviceGetP2PStatus)                                                                                        \
  X(temperature, optional, nvmlReturn_t, (nvmlDevice_t device, int sensorType, unsigned int* temp),                \
    nvmlDeviceGetTemperature)                                                                                      \
  X(power_usage, optional, nvmlReturn_t, (nvmlDevice_t device, unsigned int* power), nvmlDeviceGetPowerUsage)      \
  X(power_limit, optional, nvmlReturn_t, (nvmlDevice_t device, unsigned int* limit),                               \
    nvmlDeviceGetPowerManagementLimit)                                                                             \
  X(enforced_power_limit, optional, nvmlReturn_t, (nvmlDevice_t device, unsigned int* limit),                      \
    nvmlDeviceGetEnforcedPowerLimit)                                                                               \
  X(clock, optional, nvmlReturn_t, (nvmlDevice_t device, int type, unsigned int* clock), nvmlDeviceGetClockInfo)   \
  X(fan, optional, nvmlReturn_t, (nvmlDevice_t device, unsigned int* speed), nvmlDeviceGetFanSpeed)                \
  X(pstate, optional, nvmlReturn_t, (nvmlDevice_t device, int* pState), nvmlDeviceGetPerformanceState)             \
  X(ecc, optional, nvmlReturn_t,                                                                                   \
    (nvmlDevice_t device, int errorType, int counterType, unsigned long long* eccCounts),                        \
    nvmlDeviceGetTotalEccErrors)                                                                                   \
  X(process_util_info, optional, nvmlReturn_t, (nvmlDevice_t device, nvmlProcessesUtilizationInfo_v1_t* info),    \
    nvmlDeviceGetProcessesUtilizationInfo)                                                                         \
  X(process_util, optional, nvmlReturn_t,                                                                          \
    (nvmlDevice_t device, nvmlProcessUtilizationSample_t* utilization, unsigned int* processSamplesCount,        \
     unsigned long long lastSeenTimeStamp),                                                                        \
    nvmlDeviceGetProcessUtilization)                                                                               \
  X(clock_events, optional, nvmlReturn_t, (nvmlDevice_t device, unsigned long long* clocksEventReasons),           \
    nvmlDeviceGetCurrentClocksEventReasons, nvmlDeviceGetCurrentClocksThrottleReasons)                             \
  X(remapped_rows, optional, nvmlReturn_t,                                                                         \
    (nvmlDevice_t device, unsigned int* corrRows, unsigned int* uncRows, unsigned int* isPending,                \
     unsigned int* failureOccurred),                                                                               \
    nvmlDeviceGetRemappedRows)                                                                                     \
  X(retired_pages, optional, nvmlReturn_t,                                                                         \
    (nvmlDevice_t device, int cause, unsigned int* pageCount, unsigned long long* addresses),                    \
    nvmlDeviceGetRetiredPages)                                                                                     \
  X(retired_pending, optional, nvmlReturn_t, (nvmlDevice_t device, int* isPending),                                \
    nvmlDeviceGetRetiredPagesPendingStatus)                                                                        \
  X(pcie_replay, optional, nvmlReturn_t, (nvmlDevice_t device, unsigned int* value), nvmlDeviceGetPcieReplayCounter)

// Helpers for the list: the symbols of an entry (one to three), one by one.
#define GPUMAP_NVML_PICK_(a, b, c, chosen, ...) chosen
#define GPUMAP_NVML_EACH(F, ret, params, ...) \
  GPUMAP_NVML_PICK_(__VA_ARGS__, GPUMAP_NVML_EACH3_, GPUMAP_NVML_EACH2_, GPUMAP_NVML_EACH1_, unused)(F, ret, params, __VA_ARGS__)
#define GPUMAP_NVML_EACH1_(F, ret, params, a) F(ret, params, a)
#define GPUMAP_NVML_EACH2_(F, ret, params, a, b) F(ret, params, a) F(ret, params, b)
#define GPUMAP_NVML_EACH3_(F, ret, params, a, b, c) F(ret, params, a) F(ret, params, b) F(ret, params, c)
/// The newest symbol of an entry, whose prototype gives the call's type.
#define GPUMAP_NVML_NEWEST(...) GPUMAP_NVML_NEWEST_(__VA_ARGS__, unused)
#define GPUMAP_NVML_NEWEST_(a, ...) a
/// The symbols of an entry as string literals, newest first: "nvmlInit_v2", "nvmlInit".
#define GPUMAP_NVML_NAMES(...) \
  GPUMAP_NVML_PICK_(__VA_ARGS__, GPUMAP_NVML_NAMES3_, GPUMAP_NVML_NAMES2_, GPUMAP_NVML_NAMES1_, unused)(__VA_ARGS__)
#define GPUMAP_NVML_NAMES1_(a) #a
#define GPUMAP_NVML_NAMES2_(a, b) #a, #b
#define GPUMAP_NVML_NAMES3_(a, b, c) #a, #b, #c

#define GPUMAP_NVML_PROTOTYPE_(ret, params, symbol) ret symbol params;
#define GPUMAP_NVML_DECLARE_(member, need, ret, params, ...) GPUMAP_NVML_EACH(GPUMAP_NVML_PROTOTYPE_, ret, params, __VA_ARGS__)
GPUMAP_NVML_CALLS(GPUMAP_NVML_DECLARE_)
#undef GPUMAP_NVML_DECLARE_
#undef GPUMAP_NVML_PROTOTYPE_

}  // extern "C"

namespace gpumap {
constexpr unsigned long long kNvmlValueNotAvailable = ~0ull;
constexpr unsigned int kNvmlMemoryV2Version =
    static_cast<unsigned int>(sizeof(nvmlMemory_v2_t)) | (2u << 24);
constexpr unsigned int kNvmlMaxNvLinks = 18;
constexpr int kNvLinkRemoteGpu = 0;      // nvmlIntNvLinkDeviceType_t NVML_NVLINK_DEVICE_TYPE_GPU
constexpr int kNvLinkRemoteSwitch = 2;   // NVML_NVLINK_DEVICE_TYPE_SWITCH
constexpr int kNvmlP2pCapsNvlink = 2;    // NVML_P2P_CAPS_INDEX_NVLINK
constexpr int kNvmlP2pStatusOk = 0;      // NVML_P2P_STATUS_OK
constexpr int kNvmlP2pStatusNotSupported = 5;
constexpr int kNvmlTemperatureGpu = 0;    // nvmlTemperatureSensors_t NVML_TEMPERATURE_GPU
constexpr int kNvmlClockSm = 1;           // nvmlClockType_t NVML_CLOCK_SM
constexpr int kNvmlClockMem = 2;          // NVML_CLOCK_MEM
constexpr int kNvmlPstateUnknown = 32;    // nvmlPstates_t NVML_PSTATE_UNKNOWN
constexpr int kNvmlEccCorrected = 0;      // nvmlMemoryErrorType_t NVML_MEMORY_ERROR_TYPE_CORRECTED
constexpr int kNvmlEccUncorrected = 1;    // NVML_MEMORY_ERROR_TYPE_UNCORRECTED
constexpr int kNvmlEccVolatile = 0;       // nvmlEccCounterType_t NVML_VOLATILE_ECC
constexpr int kNvmlEccAggregate = 1;      // NVML_AGGREGATE_ECC
constexpr int kNvmlRetiredSbe = 0;        // nvmlPageRetirementCause_t NVML_PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS
constexpr int kNvmlRetiredDbe = 1;        // NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR
constexpr unsigned int kNvmlProcessesUtilizationInfoV1 =
    static_cast<unsigned int>(sizeof(nvmlProcessesUtilizationInfo_v1_t)) | (1u << 24);
/// "NVML_ERROR_NOT_SUPPORTED" for 3, ...; "NVML_ERROR_(unlisted)" for codes it does not know.
const char* nvml_error_name(int code);
}  // namespace gpumap
