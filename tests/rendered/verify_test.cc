// The renderings (output/) of `verify` answers, in process: the tests of
// src/session/verify_test.cc that assert on what the answer prints, moved here so that session/
// tests test answers (issue 57; tests/layers_test.cc).
// verify_gpus in process: the answer `verify --expect` renders, on FakeSession hosts.
#include "session/verify.h"

#include <map>
#include <sstream>
#include <tuple>

#include <gtest/gtest.h>

#include "fake_session.h"
#include "findings/fix_line.h"
#include "model/error.h"
#include "model/exit_codes.h"
#include "output/self_view.h"
#include "output/verify_view.h"
#include "session/self.h"

namespace gpumap {
namespace {

using testing::FakeSession;

// One VerifyAnswer for every front end: `gpumap verify --expect` (verify_gpus) and the library's
// verify() (verify_here, the C API and Python over it) answer the same environment alike.
TEST(VerifyGpus, TheCliAndTheLibraryGiveOneAnswer) {
  FakeSession f("h200x2", {"CUDA_VISIBLE_DEVICES=1"});
  Session& s = f.session();
  VerifyAnswer cli = verify_gpus(s, s.env(), {"0"}, false, false);
  VerifyAnswer lib = verify_here(s, {"0"}, false);
  EXPECT_EQ(cli.code, kExitMismatch);
  EXPECT_EQ(cli.code, lib.code);
  EXPECT_EQ(cli.expected, lib.expected);
  EXPECT_EQ(cli.differences, lib.differences);
  EXPECT_EQ(cli.fix, lib.fix);
  ASSERT_TRUE(cli.refusal && lib.refusal);
  EXPECT_EQ(cli.refusal->message, lib.refusal->message);
  EXPECT_EQ(cli.refusal->hint, lib.refusal->hint);
  EXPECT_EQ(verify_json(cli)["fix"], verify_refusal_json(lib)["fix"]);
  EXPECT_EQ(verify_json(cli)["differences"], verify_answer_json(lib)["differences"]);
}

// `gpumap verify --expect` names the variables that fix a mismatch; pasting them makes it pass
// (moved from the black-box tests/cli_verify_fix_test.cc, which keeps one real paste).

const std::string kMig0 = "MIG-d280783e-1fb2-1e62-1a58-9de8d06cf5dd";  // hosts/mig.json: GPU 0's first MIG device
const std::string kMig1 = "MIG-7a360cfe-db46-0c91-2ca2-81816070806d";

/// The assignments of the text's fix line ("CUDA_DEVICE_ORDER=... CUDA_VISIBLE_DEVICES=...").
std::string fix_line(const VerifyAnswer& a) {
  const std::string tag = "fix (before CUDA starts): export ";
  std::string text = verify_text(a, TermStyle{});
  size_t at = text.find(tag);
  if (at == std::string::npos) return "(no fix line in: " + text + ")";
  return text.substr(at + tag.size(), text.find('\n', at) - at - tag.size());
}

/// What `gpumap verify --expect SPEC` exits with in `env` on `f`'s host.
int verify_code(FakeSession& f, const std::vector<std::string>& env, const std::string& spec,
                std::string* out = nullptr) {
  Session s = f.other(env);
  try {
    VerifyAnswer a = verify_gpus(s, s.env(), {spec}, false, false);
    if (out) *out = verify_text(a, TermStyle{});
    return a.code;
  } catch (const Error& e) {
    if (out) *out = e.what();
    return e.exit_code();
  }
}

TEST(VerifyFix, CudaWouldFailGetsTheFixToo) {
  FakeSession f("seed-mixed");
  Session s = f.other({"CUDA_VISIBLE_DEVICES=0,0"});
  VerifyAnswer a = verify_gpus(s, s.env(), {"1"}, false, false);
  EXPECT_EQ(a.code, kExitCudaWouldFail);
  EXPECT_EQ(fix_line(a), "CUDA_VISIBLE_DEVICES=GPU-df9ecf4c-79e5-ad77-701c-fc88c196632b");
}

// Issue 22.3: under an invalid CUDA_DEVICE_ORDER no CUDA_VISIBLE_DEVICES helps (cuInit fails first):
// the fix names the order, and the list only when PCI_BUS_ID does not already give the expected GPUs.
TEST(VerifyFix, AnInvalidOrderIsFixedByTheOrder) {
  FakeSession f("seed-mixed");
  for (const auto& [cvd, expect, fix] : std::vector<std::tuple<std::string, std::string, std::string>>{
           {"CUDA_VISIBLE_DEVICES=0", "0", "CUDA_DEVICE_ORDER=PCI_BUS_ID"},
           {"", "0,1,2,3", "CUDA_DEVICE_ORDER=PCI_BUS_ID"},
           {"CUDA_VISIBLE_DEVICES=0", "1",
            "CUDA_DEVICE_ORDER=PCI_BUS_ID CUDA_VISIBLE_DEVICES=GPU-df9ecf4c-79e5-ad77-701c-fc88c196632b"}}) {
    std::vector<std::string> env = {"CUDA_DEVICE_ORDER=pci_bus_id"};
    if (!cvd.empty()) env.push_back(cvd);
    Session s = f.other(env);
    VerifyAnswer a = verify_gpus(s, s.env(), {expect}, false, false);
    EXPECT_EQ(a.code, kExitCudaWouldFail) << cvd << " expect " << expect;
    std::string line = fix_line(a);
    EXPECT_EQ(line, fix) << cvd << " expect " << expect;
    EXPECT_EQ(verify_json(a)["fix"]["CUDA_DEVICE_ORDER"], "PCI_BUS_ID");
    // Pasting it: its assignments replace the environment's values.
    std::map<std::string, std::string> vars;
    for (const std::string& e : env) vars[e.substr(0, e.find('='))] = e.substr(e.find('=') + 1);
    std::istringstream words(line);
    for (std::string w; words >> w;) vars[w.substr(0, w.find('='))] = w.substr(w.find('=') + 1);
    std::vector<std::string> pasted;
    for (const auto& [k, v] : vars) pasted.push_back(k + "=" + v);
    std::string again;
    EXPECT_EQ(verify_code(f, pasted, expect, &again), kExitOk) << line << ": " << again;
  }
}

TEST(VerifyFix, MigDeviceUuidsAndPrefixes) {
  FakeSession f("mig");
  EXPECT_EQ(verify_code(f, {"CUDA_VISIBLE_DEVICES=" + kMig1}, kMig1), kExitOk);
  EXPECT_EQ(verify_code(f, {"CUDA_VISIBLE_DEVICES=" + kMig1}, kMig1.substr(0, 12)), kExitOk);
  std::string out;
  EXPECT_EQ(verify_code(f, {"CUDA_VISIBLE_DEVICES=" + kMig1}, kMig0, &out), kExitMismatch) << out;
  EXPECT_NE(out.find("MIG device 0"), std::string::npos) << out;
  EXPECT_EQ(verify_code(f, {}, "MIG-0000", &out), kExitUsage);
  EXPECT_NE(out.find("MIG-0000"), std::string::npos) << out;
  EXPECT_EQ(verify_code(f, {}, "MIG-", &out), kExitUsage);
  EXPECT_NE(out.find("starts 2 MIG device UUIDs"), std::string::npos) << out;
}

// Moved from the black-box tests/cli_small_test.cc: a repeated GPU is refused as `which` refuses it.
TEST(VerifyFix, ARepeatedGpuIsAUsageErrorLikeWhich) {
  FakeSession f("h200x2");
  std::string out;
  EXPECT_EQ(verify_code(f, {}, "1,1", &out), kExitUsage);
  EXPECT_NE(out.find("named twice"), std::string::npos) << out;
}

}  // namespace
}  // namespace gpumap
