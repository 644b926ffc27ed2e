// The rules of issue 52 items 3 and 5 on values (no session): container-sees-more-gpus from a
// container's facts, framework-cannot-parse-uuid from the imported frameworks' versions,
// mig-one-device from a view the resolver limited; each with its fix applied.
#include <gtest/gtest.h>

#include "findings/rules.h"
#include "resolve/base_order.h"
#include "resolve/cuda_rules.h"
#include "resolve/mig_limit.h"
#include "resolve/framework_view.h"

namespace gpumap {
namespace {

const char* kU[4] = {"GPU-00000000-0000-0000-0000-000000000000", "GPU-11111111-1111-1111-1111-111111111111",
                     "GPU-22222222-2222-2222-2222-222222222222", "GPU-33333333-3333-3333-3333-333333333333"};

Snapshot four(bool mig = false) {
  Snapshot s;
  s.driver_version = mig ? "535.104.05" : "580.159.04";
  const char* pci[4] = {"00000000:01:00.0", "00000000:02:00.0", "00000000:03:00.0", "00000000:04:00.0"};
  for (uint32_t i = 0; i < 4; ++i) {
    Gpu g;
    g.nvml_index = i;
    g.uuid = kU[i];
    g.pci_bus_id = pci[i];
    g.pci = parse_pci_address(pci[i]);
    g.minor_number = i;
    g.name = "NVIDIA A100-SXM4-80GB";
    g.compute_capability = "8.0";
    g.mig_enabled = mig && i == 0;
    if (mig && i == 0)
      g.mig_devices = {{"MIG-aaaaaaaa-2222-3333-4444-555555555555", "A100 MIG 3g.40gb", 1, 0, 40000, 0},
                       {"MIG-bbbbbbbb-2222-3333-4444-555555555555", "A100 MIG 3g.40gb", 2, 0, 40000, 0}};
    s.gpus.push_back(g);
  }
  return s;
}

struct Outcome {
  Snapshot s;
  Environment env;
  Mapping m;
  std::vector<Finding> fs;
  const Finding* find(const std::string& id) const {
    for (const Finding& f : fs)
      if (f.id == id) return &f;
    return nullptr;
  }
};

Outcome run(Snapshot s, const std::vector<std::string>& vars, const ContainerFacts* c = nullptr,
        const std::map<std::string, std::string>* fw = nullptr) {
  Outcome r;
  r.s = std::move(s);
  r.env = Environment::from_strings(vars);
  r.m.base_order = pci_order(r.s);
  r.m.view = predict_cuda_view(r.m.base_order, r.env.get("CUDA_DEVICE_ORDER"), r.env.get("CUDA_VISIBLE_DEVICES"));
  if (r.s.any_mig() && one_mig_device_per_process(r.s.driver_version))
    keep_one_mig_device(r.m.view, [&](const std::string& u) { return r.s.find_device(u).mig != nullptr; });
  r.fs = diagnose({r.s, r.env, r.m, nullptr, c != nullptr, c, fw});
  return r;
}

// The fix (`export A=B C=D  # ...`) as variables.
std::vector<std::string> applied(const std::vector<std::string>& vars, const std::string& fix) {
  std::string line = fix.substr(0, fix.find("  #"));
  EXPECT_EQ(line.rfind("export ", 0), 0u) << fix;
  std::vector<std::string> out = vars;
  size_t pos = 7;
  while (pos < line.size()) {
    size_t sp = line.find(' ', pos);
    std::string assignment = line.substr(pos, sp == std::string::npos ? std::string::npos : sp - pos);
    std::string name = assignment.substr(0, assignment.find('=') + 1);
    std::erase_if(out, [&](const std::string& v) { return v.rfind(name, 0) == 0; });  // the fix replaces it
    out.push_back(assignment);
    pos = sp == std::string::npos ? line.size() : sp + 1;
  }
  return out;
}

void no_warnings(const Outcome& r) {
  for (const Finding& f : r.fs) EXPECT_EQ(f.severity, Severity::kInfo) << f.id << ": " << f.message;
}

TEST(StateRules, ContainerSeesMoreGpus) {
  ContainerFacts priv;
  priv.privileged = true;
  priv.dev_nodes = std::vector<uint32_t>{0, 1, 2, 3};
  priv.cgroup = DeviceCgroup::kV1;
  priv.device_rules = {"a *:* rwm"};
  std::vector<std::string> vars = {"NVIDIA_VISIBLE_DEVICES=2"};
  Outcome r = run(four(), vars, &priv);
  const Finding* f = r.find("container-sees-more-gpus");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->severity, Severity::kWarning);
  EXPECT_NE(f->message.find("NVIDIA_VISIBLE_DEVICES=2 gave it " + std::string(kU[2])), std::string::npos) << f->message;
  EXPECT_NE(f->message.find("privileged"), std::string::npos) << f->message;
  EXPECT_EQ(r.find("container-renumbered"), nullptr);
  Outcome fixed = run(four(), applied(vars, f->fix), &priv);
  EXPECT_EQ(fixed.find("container-sees-more-gpus"), nullptr);
  no_warnings(fixed);
  // Outside a container, or without the facts, nothing is said.
  EXPECT_EQ(run(four(), vars).find("container-sees-more-gpus"), nullptr);
  // An injected container (two GPUs listed, two named) keeps its info line.
  Snapshot two = four();
  two.gpus.resize(2);
  ContainerFacts plain;
  plain.privileged = false;
  Outcome narrowed = run(two, {"NVIDIA_VISIBLE_DEVICES=2,3"}, &plain);
  EXPECT_EQ(narrowed.find("container-sees-more-gpus"), nullptr);
  ASSERT_NE(narrowed.find("container-renumbered"), nullptr);
  EXPECT_EQ(narrowed.find("container-renumbered")->message.find("only the injected"), std::string::npos);
}

TEST(StateRules, FrameworkCannotParseUuid) {
  std::map<std::string, std::string> old_torch = {{"torch", "1.13.1+cu117"}};
  std::vector<std::string> vars = {std::string("CUDA_VISIBLE_DEVICES=") + kU[2] + "," + kU[3]};
  Outcome r = run(four(), vars, nullptr, &old_torch);
  const Finding* f = r.find("framework-cannot-parse-uuid");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->severity, Severity::kError);
  EXPECT_NE(f->message.find("torch 1.13.1+cu117"), std::string::npos) << f->message;
  EXPECT_NE(f->message.find("pytorch#90543"), std::string::npos);
  Outcome fixed = run(four(), applied(vars, f->fix), nullptr, &old_torch);
  EXPECT_EQ(fixed.find("framework-cannot-parse-uuid"), nullptr);
  no_warnings(fixed);
  EXPECT_EQ(fixed.m.view.uuids, (std::vector<std::string>{kU[2], kU[3]}));  // the same GPUs
  // torch 2.0 reads UUIDs; no versions known: nothing said.
  std::map<std::string, std::string> new_torch = {{"torch", "2.0.0"}};
  EXPECT_EQ(run(four(), vars, nullptr, &new_torch).find("framework-cannot-parse-uuid"), nullptr);
  EXPECT_EQ(run(four(), vars).find("framework-cannot-parse-uuid"), nullptr);
  // vLLM: up to 0.20.1, on a MIG UUID; no index fix under MIG.
  std::map<std::string, std::string> vllm = {{"vllm", "0.20.1"}, {"torch", "2.11.0"}};
  Outcome mig = run(four(true), {"CUDA_VISIBLE_DEVICES=MIG-aaaaaaaa-2222-3333-4444-555555555555"}, nullptr, &vllm);
  const Finding* m = mig.find("framework-cannot-parse-uuid");
  ASSERT_NE(m, nullptr);
  EXPECT_NE(m->message.find("invalid literal for int()"), std::string::npos) << m->message;
  EXPECT_TRUE(m->fix.empty());
  EXPECT_NE(m->note.find("NVIDIA_VISIBLE_DEVICES=MIG-"), std::string::npos);
  std::map<std::string, std::string> vllm_new = {{"vllm", "0.21.0"}};
  EXPECT_EQ(run(four(true), {"CUDA_VISIBLE_DEVICES=MIG-aaaaaaaa-2222-3333-4444-555555555555"}, nullptr, &vllm_new)
                .find("framework-cannot-parse-uuid"),
            nullptr);
}

TEST(StateRules, VersionsParse) {
  auto v = parse_framework_version("2.5.1+cu124");
  ASSERT_TRUE(v);
  EXPECT_EQ(v->major, 2);
  EXPECT_EQ(v->minor, 5);
  EXPECT_EQ(v->patch, 1);
  EXPECT_TRUE(parse_framework_version("0.10.1.dev3"));
  EXPECT_EQ(parse_framework_version("2")->minor, 0);
  EXPECT_FALSE(parse_framework_version("dev"));
  EXPECT_EQ(framework_uuid_failure("torch", "nightly", false), "");
  EXPECT_NE(framework_uuid_failure("torch", "1.9.0", false), "");
  EXPECT_EQ(framework_uuid_failure("jax", "0.1.0", false), "");
}

TEST(StateRules, MigOneDeviceBeforeR570) {
  EXPECT_TRUE(one_mig_device_per_process(std::string("535.104.05")));
  EXPECT_TRUE(one_mig_device_per_process(std::string("470.57.02")));
  EXPECT_FALSE(one_mig_device_per_process(std::string("570.86.10")));
  EXPECT_FALSE(one_mig_device_per_process(std::string("580.159.04")));
  EXPECT_FALSE(one_mig_device_per_process(std::nullopt));
  EXPECT_FALSE(one_mig_device_per_process(std::string("")));
  std::vector<std::string> vars = {
      "CUDA_VISIBLE_DEVICES=MIG-aaaaaaaa-2222-3333-4444-555555555555,MIG-bbbbbbbb-2222-3333-4444-555555555555"};
  Outcome r = run(four(true), vars);
  EXPECT_EQ(r.m.view.uuids, std::vector<std::string>{"MIG-aaaaaaaa-2222-3333-4444-555555555555"});
  const Finding* f = r.find("mig-one-device");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->severity, Severity::kWarning);
  EXPECT_NE(f->message.find("535.104.05"), std::string::npos);
  EXPECT_NE(f->note.find("CUDA_VISIBLE_DEVICES=MIG-bbbbbbbb"), std::string::npos) << f->note;
  Outcome fixed = run(four(true), applied({}, f->fix));
  EXPECT_EQ(fixed.find("mig-one-device"), nullptr);
  no_warnings(fixed);
  // A list of whole GPUs on the same host is not limited.
  Outcome whole = run(four(true), {std::string("CUDA_VISIBLE_DEVICES=") + kU[1] + "," + kU[2]});
  EXPECT_EQ(whole.m.view.uuids.size(), 2u);
  EXPECT_EQ(whole.find("mig-one-device"), nullptr);
}

}  // namespace
}  // namespace gpumap
