// What each common Xid means and whom it points at, as a table with its source: NVIDIA's Xid
// catalogue (https://docs.nvidia.com/deploy/xid-errors/, "Analyzing Xid Errors with the Xid
// Catalog": the mnemonic, the description and the resolution buckets RESTART_APP, RESET_GPU,
// RESTART_BM, WORKFLOW_..., CONTACT_SUPPORT; read 2026-12-07) and the dynamic page retirement
// guide (Xid 48, 63, 64).  The words are ours; the catalogue has the full list.  Pure.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "model/finding.h"

namespace gpumap {

/// Who an Xid points at: the "is it the job or the card?" answer, as far as the catalogue tells.
enum class XidCause {
  kApplication,  // the program did something wrong (an illegal address): the job, not the card
  kDriver,       // the driver or its firmware (GSP): update the driver, reset the GPU
  kHardware,     // the GPU's memory or its chips: drain, reset, and if it repeats, service
  kInterconnect, // PCIe or NVLink: the bus, the riser, the links
  kThermalPower, // heat or power: cooling, power delivery
  kInfo,         // an event that reports, not a fault (a page retired, a recovery action)
};
const char* xid_cause_name(XidCause c);  // "application", "driver", "hardware", "interconnect", "thermal-power", "info"

struct XidRule {
  uint32_t xid;
  const char* mnemonic;  // the catalogue's, e.g. "ROBUST_CHANNEL_GR_EXCEPTION"; "" where not checked against it
  const char* meaning;   // in words
  XidCause cause;
  Severity severity;     // warning: the job was hit, the GPU is fine; error: the GPU needs care
  const char* action;    // what to do
};

/// The table, ordered by Xid.
const std::vector<XidRule>& xid_rules();
/// The row of `xid`, or the row for an Xid the table does not know (mnemonic "", cause driver,
/// severity warning, action: look it up in the catalogue).
XidRule xid_rule(uint32_t xid);
/// Where the table comes from (for --help and docs).
inline constexpr const char* kXidSource = "NVIDIA Xid catalogue, https://docs.nvidia.com/deploy/xid-errors/";

}  // namespace gpumap
