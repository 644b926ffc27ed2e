// GPU faults as plain values: an Xid line of the NVIDIA kernel driver (NVRM) and the fault
// counters NVML keeps per GPU.  The kernel-log parser (formats/kernel_log.h) and the NVML reader
// (driver/fault_counters.h) fill them; session/health.h ties them to processes.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/pci.h"

namespace gpumap {

/// One `NVRM: Xid (PCI:0000:00:06): 31, pid=4179, name=python3, ...` line of the kernel log.
struct KernelXid {
  uint64_t seq = 0;                      // the /dev/kmsg record's sequence number (0: plain text)
  std::optional<uint64_t> usec;          // when, in microseconds since boot (kmsg, or dmesg's [s.us])
  std::string pci;                       // the GPU as the driver wrote it: "0000:00:06"
  std::optional<PciAddress> address;     // parsed (domain, bus, device; function 0)
  uint32_t xid = 0;
  std::optional<uint32_t> pid;           // nullopt: the line names none (or pid='<unknown>')
  std::optional<std::string> process_name;  // name=...; nullopt when none or <unknown>
  std::string detail;                    // the rest of the line, after the pid and name
  std::string message;                   // the whole message from "NVRM: " (cut at kMaxKernelLineBytes)
};

/// `NVRM: GPU at PCI:0000:2b:00: GPU-0b11d014-...`: which UUID a PCI address of the log is.
struct KernelGpuLine {
  std::string pci;
  std::optional<PciAddress> address;
  std::string uuid;
};

/// What the kernel log said about NVIDIA GPUs.
struct KernelLog {
  std::vector<KernelXid> xids;      // in log order
  std::vector<KernelGpuLine> gpus;  // in log order (the last for an address wins)
  size_t lines = 0;                 // lines (records) read
};

inline constexpr size_t kMaxKernelLineBytes = 1024;
/// At most this many Xid lines are kept (the newest); a driver looping on one Xid writes thousands.
inline constexpr size_t kMaxKernelXids = 4096;

/// NVML's clock-event (throttle) reasons, nvmlClocksEventReasons / nvmlClocksThrottleReasons bits.
inline constexpr uint64_t kClockEventGpuIdle = 0x1;
inline constexpr uint64_t kClockEventApplicationsClocks = 0x2;
inline constexpr uint64_t kClockEventSwPowerCap = 0x4;
inline constexpr uint64_t kClockEventHwSlowdown = 0x8;
inline constexpr uint64_t kClockEventSyncBoost = 0x10;
inline constexpr uint64_t kClockEventSwThermal = 0x20;
inline constexpr uint64_t kClockEventHwThermal = 0x40;
inline constexpr uint64_t kClockEventHwPowerBrake = 0x80;
inline constexpr uint64_t kClockEventDisplayClock = 0x100;
/// The reasons that mean the hardware slowed the GPU down (not an idle GPU or a set limit).
inline constexpr uint64_t kClockEventHardware = kClockEventHwSlowdown | kClockEventHwThermal | kClockEventHwPowerBrake;

/// The names of the bits set in `reasons` ("hw_slowdown", "hw_thermal_slowdown", ...), low bit first;
/// an unknown bit as "0x200".
std::vector<std::string> clock_event_names(uint64_t reasons);
/// The bit of one of those names; nullopt for a name it does not know.
std::optional<uint64_t> clock_event_bit(std::string_view name);

/// One GPU's fault counters as NVML reports them (each nullopt: not supported or not readable).
struct GpuFaultCounters {
  uint32_t nvml_index = 0;
  std::string uuid;
  bool lost = false;  // a call answered NVML_ERROR_GPU_IS_LOST
  std::optional<uint64_t> ecc_corrected_volatile, ecc_uncorrected_volatile;
  std::optional<uint64_t> ecc_corrected_aggregate, ecc_uncorrected_aggregate;
  std::optional<uint32_t> retired_pages_sbe, retired_pages_dbe;  // pages retired for each cause
  std::optional<bool> retired_pages_pending;
  std::optional<uint32_t> remapped_rows_correctable, remapped_rows_uncorrectable;
  std::optional<bool> remapped_rows_pending, remapped_rows_failed;
  std::optional<uint64_t> clock_event_reasons;  // the bits above
  std::optional<uint32_t> pcie_replay_count;
  std::vector<std::string> notes;  // calls that failed, in words
};

}  // namespace gpumap
