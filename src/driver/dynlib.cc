#include "driver/dynlib.h"

#include <dlfcn.h>

#include <utility>

#include "model/error.h"

namespace gpumap {

DynLib::DynLib(const std::string& name) : name_(name) {
  handle_ = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle_) {
    const char* why = dlerror();
    throw Error(kExitNoDriver, "cannot load " + name + ": " + (why ? why : "unknown dlopen error"),
                "is the NVIDIA driver installed? On a machine without one, try `gpumap --simulate seed-mixed`");
  }
  // Only gpumap's simulated driver exports this: it lets a host file declare symbols absent.
  hides_ = reinterpret_cast<int (*)(const char*)>(dlsym(handle_, "gpumapFakeHidesSymbol"));
}

DynLib::DynLib(std::string name, void* handle) : name_(std::move(name)), handle_(handle) {
  hides_ = reinterpret_cast<int (*)(const char*)>(dlsym(handle_, "gpumapFakeHidesSymbol"));
}

std::unique_ptr<DynLib> DynLib::if_loaded(const std::string& name) {
  void* h = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
  if (!h) return nullptr;
  return std::unique_ptr<DynLib>(new DynLib(name, h));
}

DynLib::~DynLib() {
  // Driver libraries are not unloaded: NVML/CUDA keep threads and atexit handlers.
}

void* DynLib::extra_symbol(const char* name) const { return dlsym(handle_, name); }

void* DynLib::bind_raw(std::initializer_list<const char*> names, bool required) {
  SymbolBinding b;
  b.call = *names.begin();
  // The call's plain name is the last one listed (newest version first).
  for (const char* n : names) b.call = n;
  b.required = required;
  std::string tried;
  for (const char* n : names) {
    dlerror();
    void* p = hides_ && hides_(n) ? nullptr : dlsym(handle_, n);
    if (p) {
      b.bound = n;
      bindings_.push_back(b);
      return p;
    }
    tried += tried.empty() ? n : std::string(", ") + n;
  }
  bindings_.push_back(b);
  if (required)
    throw Error(kExitNoDriver, name_ + ": required symbol missing (tried " + tried + ")",
                "the driver is older than gpumap supports, or the library is not NVIDIA's");
  return nullptr;
}

}  // namespace gpumap
