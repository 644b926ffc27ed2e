#include "findings/xid_table.h"

#include <algorithm>

namespace gpumap {

const char* xid_cause_name(XidCause c) {
  switch (c) {
    case XidCause::kApplication: return "application";
    case XidCause::kDriver: return "driver";
    case XidCause::kHardware: return "hardware";
    case XidCause::kInterconnect: return "interconnect";
    case XidCause::kThermalPower: return "thermal-power";
    case XidCause::kInfo: return "info";
  }
  return "driver";
}

const std::vector<XidRule>& xid_rules() {
  using C = XidCause;
  constexpr Severity W = Severity::kWarning, E = Severity::kError, I = Severity::kInfo;
  // Source: NVIDIA Xid catalogue (xid_table.h).  Severity: warning when the catalogue's immediate
  // action is to restart the application (the GPU keeps working), error when the GPU needs a reset,
  // the node a reboot, or the card service.
  static const std::vector<XidRule> table = {
      {8, "ROBUST_CHANNEL_FIFO_ERROR_IDLE_TIMEOUT", "the GPU stopped processing (a channel timed out)", C::kDriver, W,
       "restart the application; if it repeats on this GPU under other jobs, reset the GPU"},
      {13, "ROBUST_CHANNEL_GR_EXCEPTION", "graphics engine exception: a kernel hit an illegal instruction, an "
       "out-of-range address or a trap", C::kApplication, W,
       "the program's own fault: run it under compute-sanitizer; if it repeats under other jobs on this GPU, reset it"},
      {31, "ROBUST_CHANNEL_FIFO_ERROR_MMU_ERR_FLT", "GPU memory page fault: a kernel touched an address it had not "
       "mapped (CUDA_ERROR_ILLEGAL_ADDRESS in the program)", C::kApplication, W,
       "the program's own fault: run it under compute-sanitizer --tool memcheck; the GPU keeps working"},
      {32, "", "invalid or corrupted push buffer stream (the command stream was damaged on "
       "the way: system memory or PCIe)", C::kInterconnect, E,
       "check the host's memory and the PCIe link; reset the GPU if it repeats"},
      {38, "", "driver firmware error", C::kDriver, E,
       "update the driver; reset the GPU"},
      {43, "ROBUST_CHANNEL_RESETCHANNEL_VERIF_ERROR", "the GPU stopped processing the program's work (its "
       "channel was reset after a fault of that program)", C::kApplication, W,
       "the program's own fault (see the Xid before it); restart it; the GPU keeps working"},
      {45, "ROBUST_CHANNEL_PREEMPTIVE_REMOVAL", "the driver cleaned up a channel: the program ended or was killed, "
       "or an earlier Xid tore its context down", C::kInfo, I,
       "nothing by itself; look at the Xid before it"},
      {48, "", "double-bit (uncorrectable) ECC error in GPU memory", C::kHardware, E,
       "drain the GPU, reset it (the page is retired or the row remapped); if it repeats, service the card"},
      {61, "", "internal micro-controller breakpoint or warning", C::kDriver, E,
       "reset the GPU; update the driver; contact support if it repeats"},
      {62, "", "internal micro-controller halt", C::kDriver, E,
       "reset the GPU; update the driver; contact support if it repeats"},
      {63, "", "a page was retired or a row marked for remapping after an ECC "
       "error (takes effect at the next reset)", C::kHardware, W,
       "reset the GPU when it is idle so the remapping takes effect"},
      {64, "", "a page could not be retired or a row not "
       "remapped", C::kHardware, E,
       "drain the GPU and have the card serviced (its spare rows are spent)"},
      {68, "", "video decoder exception", C::kDriver, W,
       "restart the application; update the driver if it repeats"},
      {69, "", "graphics engine class error (a bad command from the program or the driver)",
       C::kApplication, W, "restart the application; update the driver if it repeats"},
      {74, "", "NVLink error (a link failed or had too many errors)", C::kInterconnect, E,
       "drain the GPU, reset it (or the node's NVSwitch fabric); if it repeats, check the links and the board"},
      {79, "", "the GPU has fallen off the bus: it no longer answers on PCIe",
       C::kInterconnect, E,
       "drain the node and reboot it; check power delivery, cooling and the card's seating; service if it repeats"},
      {92, "", "high single-bit ECC error rate", C::kHardware, W,
       "watch the ECC counters; service the card if they keep rising"},
      {94, "", "contained uncorrectable ECC error: only the programs using that memory were "
       "stopped", C::kHardware, W,
       "restart the application hit; reset the GPU when it is idle so the row is remapped"},
      {95, "", "uncontained uncorrectable ECC error: every program on the GPU is affected",
       C::kHardware, E, "drain the GPU and reset it; service the card if it repeats"},
      {109, "", "context switch timeout", C::kDriver, W,
       "restart the application; reset the GPU if it repeats"},
      {119, "", "the GPU's firmware (GSP) did not answer the driver", C::kDriver, E,
       "reset the GPU (or reboot the node); update the driver; contact support if it repeats"},
      {120, "", "error in the GPU's firmware (GSP)", C::kDriver, E,
       "reset the GPU; update the driver; contact support if it repeats"},
      {140, "", "unrecovered ECC error", C::kHardware, E,
       "drain the GPU and reset it; service the card if it repeats"},
      {154, "", "the driver names the recovery the GPU needs (reset, reboot or drain)",
       C::kInfo, E, "do what the line says: nvidia-smi -q shows the GPU's recovery action"},
  };
  return table;
}

XidRule xid_rule(uint32_t xid) {
  const auto& t = xid_rules();
  auto it = std::lower_bound(t.begin(), t.end(), xid, [](const XidRule& r, uint32_t x) { return r.xid < x; });
  if (it != t.end() && it->xid == xid) return *it;
  return {xid, "", "an Xid this gpumap does not describe", XidCause::kDriver, Severity::kWarning,
          "look it up in NVIDIA's Xid catalogue (https://docs.nvidia.com/deploy/xid-errors/)"};
}

}  // namespace gpumap
