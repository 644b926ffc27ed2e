#include "kube/kubelet_reader.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>

#include <grpcpp/grpcpp.h>

#include "podresources.grpc.pb.h"

namespace gpumap {

namespace {

std::vector<PodDevices> devices_of(const google::protobuf::RepeatedPtrField<v1::ContainerDevices>& ds) {
  std::vector<PodDevices> out;
  for (const v1::ContainerDevices& d : ds) out.push_back({d.resource_name(), {d.device_ids().begin(), d.device_ids().end()}});
  return out;
}

PodResourcesError status_error(const grpc::Status& s, const std::string& socket, double timeout_s) {
  switch (s.error_code()) {
    case grpc::StatusCode::DEADLINE_EXCEEDED:
      return {"deadline", "the kubelet did not answer on " + socket + " within " + std::to_string(timeout_s) + " s"};
    case grpc::StatusCode::UNAVAILABLE:
      return {"unavailable", "nothing answers the pod-resources API on " + socket + " (" + s.error_message() + ")"};
    case grpc::StatusCode::PERMISSION_DENIED:
    case grpc::StatusCode::UNAUTHENTICATED:
      return {"denied", "the kubelet refused the pod-resources request on " + socket + ": " + s.error_message()};
    default:
      return {"failed", "the pod-resources request on " + socket + " failed: " + s.error_message() + " (gRPC code " +
                            std::to_string(static_cast<int>(s.error_code())) + ")"};
  }
}

}  // namespace

KubeletAnswer ask_kubelet(const std::string& socket, double timeout_s) {
  struct stat st {};
  if (stat(socket.c_str(), &st) != 0) {
    if (errno == ENOENT || errno == ENOTDIR)
      return {std::nullopt, PodResourcesError{"absent", "no kubelet pod-resources socket at " + socket +
                                                            " (not a Kubernetes node, or the folder is not mounted)"}};
    return {std::nullopt, PodResourcesError{errno == EACCES ? "denied" : "failed",
                                            "cannot reach " + socket + ": " + strerror(errno) +
                                                (errno == EACCES ? " (it is root's: run as root)" : "")}};
  }
  if (!S_ISSOCK(st.st_mode))
    return {std::nullopt, PodResourcesError{"failed", socket + " is not a socket"}};
  if (access(socket.c_str(), W_OK) != 0)
    return {std::nullopt, PodResourcesError{"denied", "cannot connect to " + socket + ": " + strerror(errno) +
                                                          " (the socket is root's: run as root)"}};
  auto channel = grpc::CreateChannel("unix:" + socket, grpc::InsecureChannelCredentials());
  std::unique_ptr<v1::PodResourcesLister::Stub> stub = v1::PodResourcesLister::NewStub(channel);
  auto deadline = std::chrono::system_clock::now() +
                  std::chrono::duration_cast<std::chrono::system_clock::duration>(std::chrono::duration<double>(timeout_s));
  grpc::ClientContext list_ctx;
  list_ctx.set_deadline(deadline);
  v1::ListPodResourcesResponse list;
  grpc::Status s = stub->List(&list_ctx, v1::ListPodResourcesRequest(), &list);
  if (!s.ok()) return {std::nullopt, status_error(s, socket, timeout_s)};
  PodResources r;
  r.socket = socket;
  for (const v1::PodResources& p : list.pod_resources()) {
    PodInfo pi{p.name(), p.namespace_(), {}};
    for (const v1::ContainerResources& c : p.containers()) {
      PodContainer pc{c.name(), devices_of(c.devices()), {}};
      for (const v1::DynamicResource& d : c.dynamic_resources())
        for (const v1::ClaimResource& cr : d.claim_resources())
          for (const v1::CDIDevice& cdi : cr.cdi_devices()) pc.cdi_devices.push_back(cdi.name());
      pi.containers.push_back(std::move(pc));
    }
    r.pods.push_back(std::move(pi));
  }
  grpc::ClientContext alloc_ctx;
  alloc_ctx.set_deadline(deadline);
  v1::AllocatableResourcesResponse alloc;
  s = stub->GetAllocatableResources(&alloc_ctx, v1::AllocatableResourcesRequest(), &alloc);
  if (s.ok()) r.allocatable = devices_of(alloc.devices());  // else an older kubelet: unknown
  return {std::move(r), std::nullopt};
}

}  // namespace gpumap
