// The dlopen seam.  Driver libraries are loaded at run time, never linked, so gpumap
// runs (and fails cleanly) on machines without a driver.  Each symbol is bound newest
// version first; which name bound is recorded for the JSON output (`list --json`'s bindings).
#pragma once
#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

namespace gpumap {

struct SymbolBinding {
  std::string call;   // the last (oldest) name tried: the call's plain name where it ends the list ("nvmlDeviceGetPciInfo")
  std::string bound;  // the symbol that bound ("nvmlDeviceGetPciInfo_v3"), "" if none
  bool required = false;
};

class DynLib {
 public:
  /// Opens a library by soname or path.  Throws Error(kExitNoDriver) naming it and dlerror().
  explicit DynLib(const std::string& name);
  /// The library if this process has already loaded it (dlopen with RTLD_NOLOAD: never loads
  /// it, never runs its constructors), else nullptr.  For the live view of a CUDA that the
  /// library user's program started (driver/live_cuda.h).
  static std::unique_ptr<DynLib> if_loaded(const std::string& name);
  ~DynLib();
  DynLib(const DynLib&) = delete;
  DynLib& operator=(const DynLib&) = delete;

  const std::string& name() const { return name_; }
  const std::vector<SymbolBinding>& bindings() const { return bindings_; }

  /// A symbol that is not part of the driver's API (the simulated driver's extras): not
  /// recorded in bindings(); nullptr when absent.
  void* extra_symbol(const char* name) const;

  /// Binds the first of `names` (newest version first) that exists and records it in bindings().
  /// A missing required symbol throws Error(kExitNoDriver) naming the library and the symbols
  /// tried; a missing optional one returns nullptr.  Fn is the call's type: NVML's come from
  /// the prototypes of driver/nvml_api.h (GPUMAP_NVML_CALLS).
  template <class Fn>
  Fn* bind(std::initializer_list<const char*> names, bool required) {
    return reinterpret_cast<Fn*>(bind_raw(names, required));
  }

 private:
  DynLib(std::string name, void* handle);
  void* bind_raw(std::initializer_list<const char*> names, bool required);
  std::string name_;
  void* handle_ = nullptr;
  int (*hides_)(const char*) = nullptr;  // the simulated driver's gpumapFakeHidesSymbol
  std::vector<SymbolBinding> bindings_;
};

}  // namespace gpumap
