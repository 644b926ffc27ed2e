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
/// A launcher's local device: {device ("cuda:N"|null), cuda_ordinal, local_rank ({variable,
/// value}|null: the first local-rank variable set), why, error (refusal_json|null)}.
Json local_device_json(const LocalDevice& d);
/// local_device(): local_device_json plus source and visible (the GPUs counted).
Json local_device_answer_json(const LocalDeviceAnswer& a);
/// check_devices(): {cuda_ordinals: [N|null], source}; its refusal's error object adds kind
/// ("value", "not-visible") and, for not-visible, ordinal.
Json device_items_json(const DeviceItemsAnswer& a);
Json device_items_refusal_json(const DeviceItemsAnswer& a);
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
