// `gpumap serve`'s answer: where it listens once bound (its start-up lines come from it), and how
// it ended.  Filled by serve/exporter.h's serve_exporter, rendered by output/serve_view.h.
#pragma once
#include <string>

namespace gpumap {

/// Where `serve` listens, once bound.
struct Listening {
  std::string url;     // "http://127.0.0.1:9467/metrics" ([...] around an IPv6 address; https with TLS)
  std::string shown;   // the address as in the URL, without port
  bool loopback = true;
};

/// How `serve` ended (SIGINT or SIGTERM).
struct ServeAnswer {
  Listening listening;
  /// A driver read was still stuck in the driver at the end: its thread still runs (the exporter
  /// is left allocated for it), so the process must end with std::_Exit, not through exit()'s
  /// static destructors under that thread.
  bool reader_stuck = false;
};

}  // namespace gpumap
