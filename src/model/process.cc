#include "model/process.h"

namespace gpumap {

const char* proc_access_name(ProcAccess a) {
  switch (a) {
    case ProcAccess::kOk: return "ok";
    case ProcAccess::kGone: return "gone";
    case ProcAccess::kDenied: return "denied";
    case ProcAccess::kError: return "error";
  }
  return "error";
}

}  // namespace gpumap
