// `gpumap pick`'s answer (answer/pick_answer.h) as JSON, as prose with its exports, and in each
// --format (render_pick); and the "cuda:N -> GPU" lines that pick and run both print.
#pragma once
#include <string>
#include <vector>

#include "answer/pick_answer.h"
#include "formats/json.h"
#include "output/style.h"

namespace gpumap {

/// "cuda:0 -> GPU 1  GPU-...  00000000:07:00.0  NVIDIA H200" lines, one per UUID (a MIG device:
/// its GPU's index and bus id, its own name), each after `indent`.
std::string describe_choice(const Snapshot& s, const std::vector<std::string>& uuids, const std::string& indent);

/// The launch document (launch_json) plus notes, passed_over and "reserved": false.
Json pick_json(const PickAnswer& a);

/// "export CUDA_DEVICE_ORDER=...\nexport CUDA_VISIBLE_DEVICES=...\n" (--format env).
std::string pick_exports(const PickAnswer& a);

/// What was picked and why, what was passed over (prose, fitted to the terminal), then the
/// exports to paste (never wrapped).
std::string pick_text(const PickAnswer& a, const TermStyle& st = term_style());

/// How `gpumap pick` prints its answer: the prose (the default), the JSON document, or one of
/// --format's forms.
enum class PickFormat { kText, kJson, kEnv, kUuid, kIndex };

/// The whole output of `gpumap pick` in `format`: pick_text, pick_json, the exports (env), the
/// UUIDs comma-separated (uuid), or `CUDA_DEVICE_ORDER=PCI_BUS_ID CUDA_VISIBLE_DEVICES=<indices>`
/// (index: indices are right only with that order, so always written with it).  Error(kExitUsage)
/// for index where no index form is right on this host (`by_index.note` says why).
std::string render_pick(const PickAnswer& a, PickFormat format, const TermStyle& st = term_style());

}  // namespace gpumap
