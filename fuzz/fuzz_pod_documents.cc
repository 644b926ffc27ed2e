// What gpumap reads on a Kubernetes node: gpumap-kubelet's JSON document (formats/pod_resources.h;
// gpumap catches any std::exception from it and says the reader answered something else) and a CDI
// spec (formats/cdi_spec.h: std::invalid_argument for one a runtime refuses).  Properties: no crash,
// no other exception from the spec parser, and an answer that parses writes back to the same answer.
#include <cstdint>
#include <cstdlib>
#include <stdexcept>
#include <string>

#include "formats/cdi_spec.h"
#include "formats/pod_resources.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    gpumap::PodResourcesRead read = gpumap::parse_pod_resources(text);
    if (read.answer) {
      std::string once = gpumap::dump(gpumap::pod_resources_json(*read.answer));
      gpumap::PodResourcesRead again = gpumap::parse_pod_resources(once);
      if (!again.answer || gpumap::dump(gpumap::pod_resources_json(*again.answer)) != once) std::abort();
    }
  } catch (const std::exception&) {
  }
  gpumap::Json doc = gpumap::Json::parse(text, nullptr, false);
  if (!doc.is_discarded()) {
    try {
      for (const gpumap::CdiDevice& d : gpumap::parse_cdi_spec(doc, "fuzz.json"))
        if (d.name.find('=') == std::string::npos || d.file != "fuzz.json") std::abort();
    } catch (const std::invalid_argument&) {
    }
  }
  return 0;
}
