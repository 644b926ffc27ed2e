// The JSON of the library's answers about its calling process (answer/self_answer.h): what
// libgpumap.so's functions return and put in their last error (docs/library.md).
#pragma once
#include "answer/self_answer.h"
#include "formats/json.h"

namespace gpumap {

/// {"code", "message", "hint"}, and "cuda_error" when CUDA would fail.
Json refusal_json(const Refusal& r);

/// devices(): {devices, source, order_source, order_note, findings}.
Json devices_answer_json(const DevicesAnswer& a);
/// verify(): {ok, source, expected, actual, differences, fix, findings}; its refusal's error
/// object adds source, differences, fix and findings to refusal_json.
Json verify_answer_json(const VerifyAnswer& a);
Json verify_refusal_json(const VerifyAnswer& a);
/// locate(): {gpus: [{spec, uuid, nvml_index, cuda_ordinal}], source, environment, findings}.
Json locate_answer_json(const LocateAnswer& a);
/// diagnose(): {ok, source, pid, environment {now, start}, devices, cuda_error, cuda_device_count,
/// host_gpu_count, memory, memory_known, unlisted_gpus, findings}.
Json diagnosis_json(const Diagnosis& d);
/// pin(): {lease, lease_dir, devices, environment} (`lease`: the caller's handle for it).
Json pin_answer_json(const PinAnswer& a, int lease);

}  // namespace gpumap
