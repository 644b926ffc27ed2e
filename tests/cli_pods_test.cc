// `gpumap pods` when its pod-resources reader misbehaves: gpumap copied into a test folder with a
// gpumap-kubelet beside it (where gpumap looks for it) that hangs, fails, or answers something
// that is not its JSON.  Each is said, with the kubelet's socket, and nothing is taken from it.
#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli_helpers.h"

namespace gpumap::testing {
namespace {

using nlohmann::json;

struct Reader {
  std::string gpumap, socket;
};

/// A copy of gpumap with `script` as the gpumap-kubelet beside it, and a socket path that exists
/// (gpumap says "absent" without running the reader when it does not).
Reader with_reader(const std::string& script) {
  std::string dir = temp_dir("pods-reader");
  std::filesystem::copy_file(GPUMAP_BINARY, dir + "/gpumap");
  std::ofstream(dir + "/gpumap-kubelet") << "#!/bin/sh\n" << script << "\n";
  chmod((dir + "/gpumap-kubelet").c_str(), 0755);
  std::ofstream(dir + "/kubelet.sock") << "";
  return {dir + "/gpumap", dir + "/kubelet.sock"};
}

json pods_json(const Reader& r, CliRun& run) {
  run = run_program({r.gpumap, "pods", "--json", "--simulate", host_path("h200x2")},
                    {"GPUMAP_KUBELET_SOCKET=" + r.socket, std::string("GPUMAP_SIM_LIBDIR=") + GPUMAP_BUILD_DIR + "/sim"});
  return json::parse(run.out, nullptr, false);
}

// Every way the reader can fail, and what is said for each: session/kubelet_test.cc, in process.
// Here what needs the process: gpumap runs the reader beside itself, exits 1, and says it once.
TEST(CliPods, AReaderThatFailsIsSaidOnceAndExits1) {
  struct Case {
    std::string script, code, says;
  };
  for (const Case& c : std::vector<Case>{
           {"echo 'cannot load libgrpc++.so.1.51' >&2; exit 127", "helper-failed",
            "failed (exit 127): cannot load libgrpc++.so.1.51"},
       }) {
    Reader r = with_reader(c.script);
    CliRun run;
    json j = pods_json(r, run);
    ASSERT_FALSE(j.is_discarded()) << c.script << ": " << run.out << run.err;
    EXPECT_EQ(run.code, 1) << c.script << ": pods cannot do its job";
    EXPECT_TRUE(j["kubelet"]["pods"].is_null()) << c.script;
    EXPECT_EQ(j["kubelet"]["error"]["code"], c.code) << c.script;
    std::string message = j["kubelet"]["error"]["message"];
    EXPECT_NE(message.find(c.says), std::string::npos) << c.script << ": " << message;
    EXPECT_TRUE(j["pods"].empty()) << "nothing taken from a reader that failed";
    // The text says it once, first.
    CliRun text = run_program({r.gpumap, "pods", "--simulate", host_path("h200x2")},
                              {"GPUMAP_KUBELET_SOCKET=" + r.socket, std::string("GPUMAP_SIM_LIBDIR=") + GPUMAP_BUILD_DIR + "/sim"});
    EXPECT_EQ(text.code, 1);
    size_t at = text.out.find("the kubelet could not be asked");
    EXPECT_NE(at, std::string::npos) << text.out;
    EXPECT_EQ(text.out.find("the kubelet could not be asked", at + 1), std::string::npos) << "once: " << text.out;
  }
}

TEST(CliPods, NoReaderBesideGpumapIsNotBuilt) {
  std::string dir = temp_dir("pods-no-reader");
  std::filesystem::copy_file(GPUMAP_BINARY, dir + "/gpumap");
  std::ofstream(dir + "/kubelet.sock") << "";
  CliRun run = run_program({dir + "/gpumap", "pods", "--json", "--simulate", host_path("h200x2")},
                           {"GPUMAP_KUBELET_SOCKET=" + dir + "/kubelet.sock",
                            std::string("GPUMAP_SIM_LIBDIR=") + GPUMAP_BUILD_DIR + "/sim"});
  EXPECT_EQ(run.code, 1);
  json j = json::parse(run.out);
  EXPECT_EQ(j["kubelet"]["error"]["code"], "not-built");
  EXPECT_NE(j["kubelet"]["error"]["message"].get<std::string>().find("no gpumap-kubelet beside it"), std::string::npos);
}

// A relative spec folder names no node's specs: gpumap's own usage error, naming the variable and
// the fix, before anything is read; an empty entry (a stray ':') and an empty value are fine.
TEST(CliPods, ARelativeCdiFolderIsAUsageError) {
  for (const std::string value : {"cdi", "/etc/cdi:run/cdi", "/etc/cdi:./x"}) {
    CliRun r = gpumap_here({"pods", "--json", "--simulate", "h200x2"}, {"GPUMAP_CDI_DIRS=" + value});
    EXPECT_EQ(r.code, 2) << value << ": " << r.err;
    json j = json::parse(r.out, nullptr, false);  // --json: the error document alone, nothing half-done
    ASSERT_TRUE(j.is_object()) << value << ": " << r.out;
    EXPECT_FALSE(j.contains("pods")) << value << ": " << r.out;
    EXPECT_EQ(j["error"]["code"], 2);
    EXPECT_EQ(j["error"]["message"], "GPUMAP_CDI_DIRS=`" + value + "`: `" + value.substr(value.rfind(':') + 1) +
                                         "` is not an absolute path");
    EXPECT_NE(j["error"]["hint"].get<std::string>().find("/etc/cdi:/var/run/cdi"), std::string::npos) << "the fix names the default";
    CliRun text = gpumap_here({"pods", "--simulate", "h200x2"}, {"GPUMAP_CDI_DIRS=" + value});
    EXPECT_EQ(text.code, 2);
    EXPECT_TRUE(text.out.empty()) << text.out;
    EXPECT_NE(text.err.find("is not an absolute path"), std::string::npos) << text.err;
  }
  for (const std::string value : {"", "/etc/cdi::/var/run/cdi:"}) {
    CliRun r = gpumap_here({"list", "--simulate", "h200x2"}, {"GPUMAP_CDI_DIRS=" + value});
    EXPECT_EQ(r.code, 0) << "`" << value << "`: " << r.err;
  }
}

}  // namespace
}  // namespace gpumap::testing
