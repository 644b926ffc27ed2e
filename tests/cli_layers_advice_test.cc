// Issue 30 points 5, 6 and 7, as a user meets them: the advice gpumap prints where two layers
// meet (a MIG host, a mixed host, another running process, an 80-column terminal), pasted into a
// real bash, gives the GPUs it names and leaves doctor with nothing above info.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <thread>

#include "cli_helpers.h"

namespace gpumap::testing {
namespace {

using nlohmann::json;
using Vars = std::map<std::string, std::string>;

const char* kNames[] = {"CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER"};

std::vector<std::string> with_vars(std::vector<std::string> args, const Vars& vars) {
  for (const char* name : kNames) {
    auto it = vars.find(name);
    if (it == vars.end()) args.insert(args.end(), {"--unset", name});
    else args.insert(args.end(), {"--env", std::string(name) + "=" + it->second});
  }
  return args;
}

json doctor(const std::string& host, const Vars& vars) {
  CliRun r = gpumap_here(with_vars({"doctor", "--json", "--simulate", host}, vars));
  json j = json::parse(r.out, nullptr, false);
  EXPECT_FALSE(j.is_discarded()) << r.out << r.err;
  return j;
}

std::vector<std::string> mapped(const std::string& host, const Vars& vars) {
  CliRun r = gpumap_here(with_vars({"map", "--json", "--simulate", host}, vars));
  json j = json::parse(r.out, nullptr, false);
  std::vector<std::string> out;
  if (!j.is_discarded() && j.contains("cuda") && j["cuda"].contains("devices"))
    for (const json& d : j["cuda"]["devices"]) out.push_back(d["uuid"]);
  return out;
}

// `line` pasted into a real bash that has `vars` exported: the two variables afterwards.
Vars paste(const std::string& line, const Vars& vars) {
  std::vector<std::string> env;
  for (const auto& [k, v] : vars) env.push_back(k + "=" + v);
  CliRun r = run_program({"/bin/bash", "-c",
                          line + "\nfor n in CUDA_VISIBLE_DEVICES CUDA_DEVICE_ORDER; do "
                                 "[ \"${!n+set}\" ] && printf '%s=%s\\n' \"$n\" \"${!n}\"; done; true"},
                         env);
  EXPECT_EQ(r.code, 0) << line << ": " << r.err;
  EXPECT_EQ(r.err, "") << "bash complained about the pasted line `" << line << "`";
  Vars out;
  size_t pos = 0;
  while (pos < r.out.size()) {
    size_t nl = r.out.find('\n', pos);
    std::string l = r.out.substr(pos, nl - pos);
    if (l.find('=') != std::string::npos) out[l.substr(0, l.find('='))] = l.substr(l.find('=') + 1);
    pos = nl == std::string::npos ? r.out.size() : nl + 1;
  }
  return out;
}

const json* finding(const json& d, const std::string& id) {
  for (const json& f : d["findings"])
    if (f["id"] == id) return &f;
  return nullptr;
}

void expect_nothing_above_info(const std::string& host, const Vars& vars, const std::string& what) {
  json d = doctor(host, vars);  // a temporary's ["findings"] would not outlive the loop's range
  for (const json& f : d["findings"])
    EXPECT_EQ(f["severity"], "info") << what << ": doctor still says " << f.dump();
}

// The UUIDs `which` prints for nvidia-smi GPUs (its UUID line, the one index-free form under MIG).
std::string which_uuids(const std::string& host, const std::vector<std::string>& gpus) {
  std::vector<std::string> args = {"which", "--json", "--simulate", host};
  args.insert(args.end(), gpus.begin(), gpus.end());
  CliRun r = gpumap_here(args);
  json j = json::parse(r.out, nullptr, false);
  EXPECT_FALSE(j.is_discarded()) << r.out << r.err;
  return j.is_discarded() ? "" : j["uuid_form"]["CUDA_VISIBLE_DEVICES"].get<std::string>();
}

// Point 5.  nvidia-smi GPU 0 of `mig` is in MIG mode (two slices), GPU 1 is a whole A100.
TEST(CliLayersAdvice, MigIndicesAreCudaDevicesAndTheFixIsWhatWhichSays) {
  const std::string smi_1_0 = which_uuids("mig", {"1", "0"});
  ASSERT_NE(smi_1_0.find("MIG-"), std::string::npos) << smi_1_0;
  for (const Vars& vars : std::vector<Vars>{{{"CUDA_VISIBLE_DEVICES", "1,0"}},
                                            {{"CUDA_VISIBLE_DEVICES", "1,0"}, {"CUDA_DEVICE_ORDER", "PCI_BUS_ID"}}}) {
    std::string what = "mig CUDA_VISIBLE_DEVICES=1,0" + std::string(vars.count("CUDA_DEVICE_ORDER") ? " PCI_BUS_ID" : "");
    json d = doctor("mig", vars);
    for (const json& f : d["findings"]) {
      EXPECT_NE(f["id"], "visible-devices-without-pci-order") << what << ": no order makes an index nvidia-smi's";
      EXPECT_EQ(f["fix"].get<std::string>().find("PCI_BUS_ID"), std::string::npos) << what << ": " << f.dump();
    }
    const json* f = finding(d, "mig-index-entries");
    ASSERT_TRUE(f) << what << ": " << d.dump(1);
    EXPECT_EQ(f->at("severity"), "warning");
    std::string fix = f->at("fix");
    EXPECT_EQ(fix.rfind("export CUDA_VISIBLE_DEVICES=" + smi_1_0 + "  # ", 0), 0u) << fix;
    // Pasted into bash: doctor has nothing above info and map shows exactly the GPUs `which 1 0` names.
    Vars after = paste(fix, vars);
    EXPECT_EQ(after["CUDA_VISIBLE_DEVICES"], smi_1_0);
    expect_nothing_above_info("mig", after, what + " after `" + fix + "`");
    std::vector<std::string> got = mapped("mig", after);
    std::string joined;
    for (const std::string& u : got) joined += (joined.empty() ? "" : ",") + u;
    EXPECT_EQ(joined, smi_1_0);
  }
  // PCI_BUS_ID with `1`: a slice of GPU 0, not nvidia-smi GPU 1; the warning says so.
  json one = doctor("mig", {{"CUDA_VISIBLE_DEVICES", "1"}, {"CUDA_DEVICE_ORDER", "PCI_BUS_ID"}});
  const json* f = finding(one, "mig-index-entries");
  ASSERT_TRUE(f) << one.dump(1);
  EXPECT_EQ(f->at("fix"), "export CUDA_VISIBLE_DEVICES=" + which_uuids("mig", {"1"}) + "  # cuda:0 = nvidia-smi GPU 1");
}

// Point 6.  seed-mixed: no GPU 4 in either order; `all` is a container word.
TEST(CliLayersAdvice, AFixIsPrintedOnlyWhereItHelps) {
  for (const std::string value : {"4", "all"}) {
    Vars vars = {{"CUDA_VISIBLE_DEVICES", value}};
    json d = doctor("seed-mixed", vars);
    EXPECT_FALSE(finding(d, "visible-devices-without-pci-order")) << value << ": " << d.dump(1);
    // `all`: the cut is the container word's doing, folded into it (findings/fold.h, issue 43).
    const json* cut = finding(d, value == "all" ? "container-keyword" : "list-cut-short");
    ASSERT_TRUE(cut) << d.dump(1);
    EXPECT_FALSE(cut->at("fix").get<std::string>().empty()) << value << ": " << cut->at("id") << " has no fix";
    for (const json& f : d["findings"]) {
      std::string fix = f["fix"];
      if (fix.empty()) continue;
      std::string what = "seed-mixed CUDA_VISIBLE_DEVICES=" + value + " " + f["id"].get<std::string>();
      Vars after = paste(fix, vars);
      expect_nothing_above_info("seed-mixed", after, what + " after `" + fix + "`");
      EXPECT_EQ(mapped("seed-mixed", after).size(), 4u) << what << ": the fix gives every GPU";
    }
  }
}

// Point 7.  A note that holds a command is never cut at 80 columns: each `export` the terminal
// shows, pasted into bash from where it starts, exports what the JSON's note says.
TEST(CliLayersAdvice, ACommandInANoteStaysOneLineAtEightyColumns) {
  const Vars vars = {{"CUDA_VISIBLE_DEVICES", "0"}};
  json d = doctor("seed-mixed", vars);
  const json* f = finding(d, "visible-devices-without-pci-order");
  ASSERT_TRUE(f) << d.dump(1);
  std::string note = f->at("note");
  size_t at = note.find("export CUDA_VISIBLE_DEVICES=");
  ASSERT_NE(at, std::string::npos) << note;
  std::string want = note.substr(at + 28, note.find(' ', at + 28) - at - 28);
  ASSERT_GE(want.size(), 40u) << "a whole UUID: " << want;
  CliRun r = gpumap_tty(with_vars({"doctor", "--simulate", "seed-mixed"}, vars), {"COLUMNS=80", "TERM=xterm"});
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  size_t pasted = 0;
  for (size_t pos = 0; pos < r.out.size();) {
    size_t nl = r.out.find('\n', pos);
    std::string line = r.out.substr(pos, nl == std::string::npos ? std::string::npos : nl - pos);
    pos = nl == std::string::npos ? r.out.size() : nl + 1;
    size_t e = line.find("export CUDA_VISIBLE_DEVICES");
    if (e == std::string::npos) continue;
    Vars after = paste(line.substr(e), vars);
    EXPECT_EQ(after["CUDA_VISIBLE_DEVICES"], want) << "[" << line << "] in\n" << r.out;
    ++pasted;
  }
  EXPECT_EQ(pasted, 1u) << r.out;
  EXPECT_EQ(r.out.find("\n        = nvidia-smi"), std::string::npos) << r.out;
}

// A process started with `argv` and `env` (execve: nothing else in its environment), in a process
// group of its own: the destructor kills the group, bash's `sleep` child too.  A `sleep 30` left
// behind kept ctest's output pipe open, and the test "took" 30 s.
class Job {
 public:
  Job(const std::vector<std::string>& argv, const std::vector<std::string>& env) {
    pid_ = fork();
    if (pid_ == 0) {
      setpgid(0, 0);
      std::vector<char*> a, e;
      for (const std::string& s : argv) a.push_back(const_cast<char*>(s.c_str()));
      for (const std::string& s : env) e.push_back(const_cast<char*>(s.c_str()));
      a.push_back(nullptr);
      e.push_back(nullptr);
      execve("/bin/bash", a.data(), e.data());
      _exit(127);
    }
    for (int i = 0; i < 400; ++i) {  // until the exec happened
      std::ifstream c("/proc/" + std::to_string(pid_) + "/cmdline");
      std::string s((std::istreambuf_iterator<char>(c)), {});
      if (s.rfind(argv[0] + '\0', 0) == 0 && s.find("sleep") != std::string::npos) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }
  ~Job() {
    kill(-pid_, SIGKILL);  // the group (setpgid in the child, before its exec)
    kill(pid_, SIGKILL);   // (in case the child had not yet made it)
    waitpid(pid_, nullptr, 0);
  }
  int pid() const { return pid_; }

 private:
  pid_t pid_ = -1;
};

// Point 6, `gpumap ps`: advice about another process is never an export for the shell ps ran in.
// A process on GPU 0 started with CUDA_VISIBLE_DEVICES=1 (it landed there by mistake) and one that
// sees every GPU on a shared host: the relaunch line, pasted into bash, runs that command again
// with its own arguments and the GPU named, and the mistaken GPU is never offered.
TEST(CliLayersAdvice, PsAdviceForAnotherProcessRelaunchesItNeverExports) {
  // bash -c 'sleep 30; :' keeps bash (and this argv) alive; "my run's" tests the quoting.
  const std::vector<std::string> argv = {"gpumap-test-job", "-c", "sleep 30; :", "my run's"};
  Job moved(argv, {"CUDA_VISIBLE_DEVICES=1", "PATH=/usr/bin:/bin"});
  Job unpinned(argv, {"PATH=/usr/bin:/bin"});
  std::ifstream in(host_path("h200x2"));
  json h = json::parse(in);
  h["gpus"][0]["processes"] = {{{"pid", moved.pid()}, {"used_memory_mib", 1000}}};
  h["gpus"][1]["processes"] = {{{"pid", unpinned.pid()}, {"used_memory_mib", 1000}}};
  std::string host = write_temp_file("ps-advice-host.json", h.dump());
  CliRun r = gpumap_here({"ps", "--json", "--simulate", host});
  json j = json::parse(r.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << r.out << r.err;
  const std::string u0 = h["gpus"][0]["uuid"], u1 = h["gpus"][1]["uuid"];
  std::vector<json> all;
  std::function<void(const json&)> collect = [&](const json& x) {
    if (x.is_object() && x.contains("id") && x.contains("fix")) all.push_back(x);
    if (x.is_structured())
      for (const json& y : x) collect(y);
  };
  collect(j);
  std::string relaunch;
  bool outside = false;
  for (const json& f : all) {
    std::string fix = f["fix"], note = f.value("note", "");
    EXPECT_EQ(fix.find("export"), std::string::npos) << f.dump();
    EXPECT_EQ(note.find("export"), std::string::npos) << f.dump();
    if (f["id"] == "outside-visible-set") {
      outside = true;
      EXPECT_EQ(fix, "") << "GPU 0 is where it landed by mistake: " << f.dump();
      EXPECT_EQ(note.find("CUDA_VISIBLE_DEVICES=" + u0), std::string::npos) << f.dump();
      EXPECT_NE(note.find("CUDA_VISIBLE_DEVICES=" + u1 + " gpumap-test-job"), std::string::npos) << f.dump();
    }
    if (f["id"] == "no-visibility-shared-host") relaunch = fix;
  }
  EXPECT_TRUE(outside) << j.dump(1);
  ASSERT_EQ(relaunch.rfind("CUDA_VISIBLE_DEVICES=" + u1 + " ", 0), 0u) << j.dump(1);
  // Pasted into bash (with a stand-in `gpumap-test-job` on PATH that prints what it got): the same
  // arguments, the GPU named; the shell's own variable stays unset.
  std::string bin = temp_dir("relaunch-bin");
  {
    std::ofstream s(bin + "/gpumap-test-job");
    s << "#!/bin/bash\nprintf 'CVD=%s\\n' \"$CUDA_VISIBLE_DEVICES\"\nprintf '[%s]\\n' \"$@\"\n";
  }
  std::filesystem::permissions(bin + "/gpumap-test-job", std::filesystem::perms::owner_all);
  CliRun ran = run_program({"/bin/bash", "-c", "PATH=\"$0:$PATH\"\n" + relaunch + "\nprintf 'after=%s\\n' \"${CUDA_VISIBLE_DEVICES-unset}\"", bin});
  EXPECT_EQ(ran.out, "CVD=" + u1 + "\n[-c]\n[sleep 30; :]\n[my run's]\nafter=unset\n") << relaunch << ran.err;
}

}  // namespace
}  // namespace gpumap::testing
