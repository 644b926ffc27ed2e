// A real gRPC server speaking the kubelet's pod-resources API v1 (the same .proto as
// gpumap-kubelet) on a Unix socket, for the tests: it answers List and GetAllocatableResources
// from a JSON file in formats/pod_resources.h's form ("allocatable": null answers UNIMPLEMENTED,
// as an older kubelet does).  Prints "ready" once it listens; stops on SIGTERM or SIGINT.
// usage: fake_kubelet SOCKET ANSWERS.json [DELAY_MS]
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>
#include <thread>

#include <grpcpp/grpcpp.h>

#include "formats/pod_resources.h"
#include "podresources.grpc.pb.h"

namespace {

volatile sig_atomic_t g_stop = 0;
void on_signal(int) { g_stop = 1; }

void fill(google::protobuf::RepeatedPtrField<v1::ContainerDevices>* out, const std::vector<gpumap::PodDevices>& ds) {
  for (const gpumap::PodDevices& d : ds) {
    v1::ContainerDevices* c = out->Add();
    c->set_resource_name(d.resource);
    for (const std::string& id : d.ids) c->add_device_ids(id);
  }
}

class Lister final : public v1::PodResourcesLister::Service {
 public:
  Lister(gpumap::PodResources r, int delay_ms) : r_(std::move(r)), delay_ms_(delay_ms) {}

  grpc::Status List(grpc::ServerContext*, const v1::ListPodResourcesRequest*, v1::ListPodResourcesResponse* out) override {
    std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms_));
    for (const gpumap::PodInfo& p : r_.pods) {
      v1::PodResources* pr = out->add_pod_resources();
      pr->set_name(p.name);
      pr->set_namespace_(p.ns);
      for (const gpumap::PodContainer& c : p.containers) {
        v1::ContainerResources* cr = pr->add_containers();
        cr->set_name(c.name);
        fill(cr->mutable_devices(), c.devices);
        if (!c.cdi_devices.empty()) {
          v1::DynamicResource* d = cr->add_dynamic_resources();
          d->set_class_name("gpu.nvidia.com");
          d->set_claim_name(c.name + "-gpu");
          d->set_claim_namespace(p.ns);
          v1::ClaimResource* claim = d->add_claim_resources();
          for (const std::string& n : c.cdi_devices) claim->add_cdi_devices()->set_name(n);
        }
      }
    }
    return grpc::Status::OK;
  }

  grpc::Status GetAllocatableResources(grpc::ServerContext*, const v1::AllocatableResourcesRequest*,
                                       v1::AllocatableResourcesResponse* out) override {
    if (!r_.allocatable) return grpc::Status(grpc::StatusCode::UNIMPLEMENTED, "unknown method GetAllocatableResources");
    fill(out->mutable_devices(), *r_.allocatable);
    return grpc::Status::OK;
  }

 private:
  gpumap::PodResources r_;
  int delay_ms_;
};

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::cerr << "usage: fake_kubelet SOCKET ANSWERS.json [DELAY_MS]\n";
    return 2;
  }
  std::ifstream in(argv[2]);
  std::stringstream text;
  text << in.rdbuf();
  gpumap::PodResourcesRead read = gpumap::parse_pod_resources(text.str());
  if (!read.answer) {
    std::cerr << "fake_kubelet: " << argv[2] << " holds no answer\n";
    return 2;
  }
  Lister service(*read.answer, argc > 3 ? std::atoi(argv[3]) : 0);
  grpc::ServerBuilder b;
  b.AddListeningPort(std::string("unix:") + argv[1], grpc::InsecureServerCredentials());
  b.RegisterService(&service);
  std::unique_ptr<grpc::Server> server = b.BuildAndStart();
  if (!server) {
    std::cerr << "fake_kubelet: cannot listen on " << argv[1] << "\n";
    return 1;
  }
  signal(SIGTERM, on_signal);
  signal(SIGINT, on_signal);
  std::cout << "ready" << std::endl;
  while (!g_stop) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(1));
  return 0;
}
