// Every C API entry point over fuzzed JSON arguments (issue 20 point 1): whatever the bytes, each call
// returns a status and leaves a last error that is valid JSON; none aborts, throws or overflows the
// stack.  The first byte picks the entry point, the rest is its argument.  The session simulates
// h200x2 through the fake driver built beside this target; leases go to a folder of this process's
// own under the build tree's fuzz folder, released at once.
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <string>

#include <nlohmann/json.hpp>

#include "gpumap/gpumap.h"

namespace {

gpumap_session* session() {
  static gpumap_session* s = [] {
    static std::string lock_dir = std::string(GPUMAP_FUZZ_DIR) + "/leases-" + std::to_string(getpid());
    std::string options = nlohmann::json{{"simulate", GPUMAP_FUZZ_HOST},
                                         {"sim_lib_dir", GPUMAP_FUZZ_SIM_DIR},
                                         {"lock_dir", lock_dir}}
                              .dump();
    gpumap_session* out = nullptr;
    if (gpumap_open(options.c_str(), &out) != GPUMAP_OK) std::abort();  // the harness itself is broken
    std::atexit([] { std::system(("rm -rf '" + lock_dir + "'").c_str()); });
    return out;
  }();
  return s;
}

void check_last_error(int rc) {
  if (rc == GPUMAP_OK) return;
  nlohmann::json e = nlohmann::json::parse(gpumap_last_error(), nullptr, false);
  if (e.is_discarded() || !e.is_object() || e.value("code", -1) != rc) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  std::string arg(reinterpret_cast<const char*>(data) + 1, size - 1);
  char* out = nullptr;
  int rc = GPUMAP_OK;
  switch (data[0] % 6) {
    case 0: {
      gpumap_session* s = nullptr;
      rc = gpumap_open(arg.c_str(), &s);
      gpumap_close(s);
      break;
    }
    case 1: rc = gpumap_verify(session(), arg.c_str(), &out); break;
    case 2: rc = gpumap_locate(session(), arg.c_str(), &out); break;
    case 3: rc = gpumap_diagnose(session(), arg.c_str(), &out); break;
    case 4: rc = gpumap_devices(session(), &out); break;
    case 5: {
      rc = gpumap_pin(session(), arg.c_str(), &out);
      if (rc == GPUMAP_OK) {
        nlohmann::json r = nlohmann::json::parse(out, nullptr, false);
        if (r.is_discarded() || !r.contains("lease")) std::abort();
        gpumap_release(r["lease"].get<int>());
      }
      break;
    }
  }
  check_last_error(rc);
  gpumap_free(out);
  return 0;
}
