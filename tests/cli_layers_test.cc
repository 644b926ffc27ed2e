// Issue 30, as the user types it: every layer at once.  A Slurm step whose CUDA_VISIBLE_DEVICES was
// unset (no device cgroup), fixes inside the allocation, a container's in-range host number, a step
// under a device cgroup, bind on a busy box.  Advice is pasted into a real bash and doctor run after.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <set>

#include "cli_helpers.h"

namespace gpumap::testing {
namespace {

using json = nlohmann::json;

// dgx8: eight identical GPUs, GPU i at bus 0x?? in PCI order, minor i.
const std::vector<std::string> kStep = {"SLURM_JOB_ID=7", "SLURM_STEP_GPUS=2,3", "SLURM_JOB_GPUS=2,3"};

std::vector<std::string> with(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

json doctor_json(const std::string& host, const std::vector<std::string>& env) {
  CliRun r = gpumap_here({"doctor", "--json", "--simulate", host}, env);
  return json::parse(r.out);
}

int above_info(const json& d) { return d["counts"]["error"].get<int>() + d["counts"]["warning"].get<int>(); }

/// The nvidia-smi indices `map --json` puts at cuda:0.. for this environment.
std::vector<int> cuda_gpus(const std::string& host, const std::vector<std::string>& env) {
  json j = json::parse(gpumap_here({"map", "--json", "--simulate", host}, env).out);
  std::vector<int> out;
  for (const json& d : j["cuda"]["devices"]) out.push_back(d["nvml_index"].get<int>());
  return out;
}

/// Pastes `line` into a real bash that has `env`, then prints the CUDA variables it left, one per
/// line as NAME=VALUE (unset ones left out).
std::vector<std::string> pasted(const std::string& line, const std::vector<std::string>& env) {
  std::string script = line + "\nfor v in CUDA_VISIBLE_DEVICES CUDA_DEVICE_ORDER NVIDIA_VISIBLE_DEVICES; do "
                              "[ -n \"${!v+x}\" ] && printf '%s=%s\\n' \"$v\" \"${!v}\"; done; true";
  CliRun r = run_program({"/bin/bash", "-c", script}, env);
  EXPECT_EQ(r.code, 0) << line << "\n" << r.err;
  std::vector<std::string> vars;
  size_t start = 0;
  for (size_t nl; (nl = r.out.find('\n', start)) != std::string::npos; start = nl + 1) vars.push_back(r.out.substr(start, nl - start));
  return vars;
}

/// `env` with the CUDA variables replaced by what pasting `line` left.
std::vector<std::string> after_paste(const std::string& line, const std::vector<std::string>& env) {
  std::vector<std::string> out;
  for (const std::string& e : env)
    if (e.rfind("CUDA_VISIBLE_DEVICES=", 0) && e.rfind("CUDA_DEVICE_ORDER=", 0) && e.rfind("NVIDIA_VISIBLE_DEVICES=", 0))
      out.push_back(e);
  for (const std::string& v : pasted(line, env)) out.push_back(v);
  return out;
}

// Item 1: launching inside a Slurm step whose CUDA_VISIBLE_DEVICES is unset.
TEST(CliLayers, AStepWithoutCudaVisibleDevicesKeepsToItsGpus) {
  // pick: only GPU 2 or 3, and its line pasted leaves doctor quiet.
  CliRun pick = gpumap_here({"pick", "--format", "env", "--simulate", "dgx8"}, kStep);
  ASSERT_EQ(pick.code, 0) << pick.err;
  std::vector<std::string> env = after_paste(pick.out, kStep);
  std::vector<int> gpus = cuda_gpus("dgx8", env);
  ASSERT_EQ(gpus.size(), 1u) << pick.out;
  EXPECT_TRUE(gpus[0] == 2 || gpus[0] == 3) << pick.out;
  json d = doctor_json("dgx8", env);
  EXPECT_EQ(above_info(d), 0) << d["findings"].dump(1);
  // pick --gpus 2 takes exactly the allocation; 3 is refused naming it (exit 6).
  json two = json::parse(gpumap_here({"pick", "--gpus", "2", "--json", "--simulate", "dgx8"}, kStep).out);
  ASSERT_EQ(two["devices"].size(), 2u) << two.dump();
  EXPECT_EQ(two["devices"][0]["nvml_index"], 2);
  EXPECT_EQ(two["devices"][1]["nvml_index"], 3);
  CliRun three = gpumap_here({"pick", "--gpus", "3", "--simulate", "dgx8"}, kStep);
  EXPECT_EQ(three.code, 6) << three.out;
  EXPECT_NE(three.err.find("SLURM_STEP_GPUS=2,3 (nvidia-smi GPUs 2, 3 here) holds 2"), std::string::npos) << three.err;
  // run: the child gets one of the step's GPUs.
  CliRun run = gpumap({"run", "--simulate", "dgx8", "--", "sh", "-c", "echo $CUDA_VISIBLE_DEVICES"},
                      with(kStep, {"GPUMAP_LOCK_DIR=" + temp_dir("locks")}));
  ASSERT_EQ(run.code, 0) << run.err;
  EXPECT_TRUE(run.out == "2\n" || run.out == "3\n") << run.out;
  // bind: local ranks 0 and 1 get GPUs 2 and 3 (the allocation, in CUDA's order), rank 2 none.
  for (int rank : {0, 1}) {
    CliRun b = gpumap({"bind", "--simulate", "dgx8", "--", "sh", "-c", "echo $CUDA_VISIBLE_DEVICES"},
                      with(kStep, {"SLURM_LOCALID=" + std::to_string(rank)}));
    EXPECT_EQ(b.code, 0) << b.err;
    EXPECT_EQ(b.out, std::to_string(2 + rank) + "\n") << b.err;
    EXPECT_NE(b.err.find("the ranks share only those"), std::string::npos) << b.err;
  }
  CliRun b2 = gpumap({"bind", "--simulate", "dgx8", "--", "true"}, with(kStep, {"SLURM_LOCALID=2"}));
  EXPECT_EQ(b2.code, 6);
  EXPECT_NE(b2.err.find("SLURM_STEP_GPUS=2,3"), std::string::npos) << b2.err;
  // which 5: another job's GPU is refused, naming the allocation and what to ask instead.
  CliRun w = gpumap_here({"which", "5", "--simulate", "dgx8"}, kStep);
  EXPECT_EQ(w.code, 6) << w.out;
  EXPECT_NE(w.err.find("outside this Slurm step's allocation, SLURM_STEP_GPUS=2,3"), std::string::npos) << w.err;
  EXPECT_NE(w.err.find("gpumap which 2 3"), std::string::npos) << w.err;
  EXPECT_EQ(w.out, "");
  // which 3 inside the allocation still answers, and its line pastes to a quiet doctor.
  CliRun w3 = gpumap_here({"which", "3", "--json", "--simulate", "dgx8"}, kStep);
  ASSERT_EQ(w3.code, 0) << w3.err;
}

std::set<std::string> ids_above_info(const json& d) {
  std::set<std::string> out;
  for (const json& f : d["findings"])
    if (f["severity"] != "info") out.insert(f["id"].get<std::string>());
  return out;
}

// Item 2: each pasted fix clears its finding, adds none, and stays inside the allocation; pasting
// the fixes one after another ends with nothing above info.
TEST(CliLayers, FixesStayInsideTheAllocation) {
  for (const std::vector<std::string>& extra :
       std::vector<std::vector<std::string>>{{"CUDA_VISIBLE_DEVICES=2,2,5"},
                                             {"NVIDIA_VISIBLE_DEVICES=5"},
                                             {"CUDA_VISIBLE_DEVICES=5,6"},
                                             {"CUDA_DEVICE_ORDER=PCI_BUS_ID", "CUDA_VISIBLE_DEVICES=3,7"}}) {
    std::vector<std::string> env = with(kStep, extra);
    json d = doctor_json("dgx8", env);
    std::set<std::string> before = ids_above_info(d);
    ASSERT_FALSE(before.empty()) << extra[0];
    for (const json& f : d["findings"]) {
      std::string fix = f["fix"].get<std::string>();
      if (fix.empty()) continue;
      std::vector<std::string> fixed = after_paste(fix, env);
      std::set<std::string> now = ids_above_info(doctor_json("dgx8", fixed));
      EXPECT_EQ(now.count(f["id"].get<std::string>()), 0u) << extra[0] << ": `" << fix << "` left its own finding";
      for (const std::string& id : now) EXPECT_EQ(before.count(id), 1u) << extra[0] << ": `" << fix << "` made " << id;
      if (fix.find("CUDA_VISIBLE_DEVICES=") != std::string::npos) {
        for (int g : cuda_gpus("dgx8", fixed)) EXPECT_TRUE(g == 2 || g == 3) << extra[0] << ": `" << fix << "` gives GPU " << g;
      }
    }
    // A user who pastes the first fix doctor shows, again and again, ends on the step's GPUs.
    std::vector<std::string> cur = env;
    for (int step = 0; step < 4; ++step) {
      json now = doctor_json("dgx8", cur);
      std::string fix;
      for (const json& f : now["findings"])
        if (f["severity"] != "info" && fix.empty()) fix = f["fix"].get<std::string>();
      if (fix.empty()) break;
      cur = after_paste(fix, cur);
    }
    json last = doctor_json("dgx8", cur);
    EXPECT_EQ(above_info(last), 0) << extra[0] << ": " << last["findings"].dump(1);
    for (int g : cuda_gpus("dgx8", cur)) EXPECT_TRUE(g == 2 || g == 3) << extra[0] << " ends on GPU " << g;
  }
  // seed-mixed, SLURM_STEP_GPUS=1,2: mixed-entry-kinds' fix never appends GPU 0.
  std::vector<std::string> mixed = {"SLURM_STEP_GPUS=1,2", "CUDA_VISIBLE_DEVICES=GPU-df9ecf4c,0,2"};
  bool seen = false;
  json mixed_doctor = doctor_json("seed-mixed", mixed);
  for (const json& f : mixed_doctor["findings"])
    if (f["id"] == "mixed-entry-kinds") {
      seen = true;
      std::vector<std::string> fixed = after_paste(f["fix"].get<std::string>(), mixed);
      for (int g : cuda_gpus("seed-mixed", fixed)) EXPECT_TRUE(g == 1 || g == 2) << f["fix"] << " gives GPU " << g;
    }
  EXPECT_TRUE(seen);
}

// Item 3: NVIDIA_VISIBLE_DEVICES=1,3 CUDA_VISIBLE_DEVICES=1 inside the container.
TEST(CliLayers, AContainersInRangeHostNumberIsSaid) {
  std::vector<std::string> env = {"NVIDIA_VISIBLE_DEVICES=1,3", "CUDA_VISIBLE_DEVICES=1"};
  std::vector<std::string> args = {"--simulate", "dgx8", "--env", "NVIDIA_VISIBLE_DEVICES=1,3", "--env", "CUDA_VISIBLE_DEVICES=1"};
  CliRun r = gpumap_here(with({"doctor", "--json"}, args));
  json d = json::parse(r.out);
  const json* f = nullptr;
  for (const json& x : d["findings"])
    if (x["id"] == "container-host-number") f = &x;
  ASSERT_NE(f, nullptr) << d["findings"].dump(1);
  EXPECT_EQ((*f)["severity"], "warning");
  EXPECT_NE((*f)["message"].get<std::string>().find("1 as the host's number is the container's GPU 0"), std::string::npos);
  EXPECT_EQ((*f)["fix"], "export CUDA_DEVICE_ORDER=PCI_BUS_ID CUDA_VISIBLE_DEVICES=0");
  // map shows each GPU's host number; explain names host GPU 3.
  json m = json::parse(gpumap_here(with({"map", "--json"}, args)).out);
  ASSERT_EQ(m["cuda"]["devices"].size(), 1u) << m.dump();
  EXPECT_EQ(m["cuda"]["devices"][0]["host_index"], 3) << m.dump();
  CliRun table = gpumap_here(with({"map", "--wide"}, args));
  EXPECT_NE(table.out.find("HOST"), std::string::npos) << table.out;
  CliRun explain = gpumap_here(with({"explain"}, args));
  EXPECT_NE(explain.out.find("host GPU 3"), std::string::npos) << explain.out;
  // The fix, pasted, gives host GPU 1 and a quiet doctor.
  std::vector<std::string> fixed = {"NVIDIA_VISIBLE_DEVICES=1,3", "CUDA_DEVICE_ORDER=PCI_BUS_ID", "CUDA_VISIBLE_DEVICES=0"};
  std::vector<std::string> fargs = {"doctor", "--json", "--simulate", "dgx8"};
  for (const std::string& e : fixed) fargs.insert(fargs.end(), {"--env", e});
  EXPECT_EQ(above_info(json::parse(gpumap_here(fargs).out)), 0);
}

// Item 4: a step under a device cgroup (nvidia4 and nvidia5 left) whose script copied the ids.
TEST(CliLayers, SlurmIdsUnderADeviceCgroupAreExplained) {
  std::string dev = temp_dir("dev");
  for (int n : {4, 5}) std::ofstream(dev + "/nvidia" + std::to_string(n)) << "";
  std::ifstream in(host_path("dgx8"));
  json host = json::parse(in);
  for (size_t i = 0; i < host["gpus"].size(); ++i) host["gpus"][i]["minor_number"] = i;
  host["dev_dir"] = dev;
  std::string file = write_temp_file("dgx8-cgroup.json", host.dump());
  std::vector<std::string> env = {"SLURM_JOB_ID=7", "SLURM_STEP_GPUS=4,5", "CUDA_VISIBLE_DEVICES=4,5"};
  json d = json::parse(gpumap_here({"doctor", "--json", "--simulate", file}, env).out);
  const json* f = nullptr;
  for (const json& x : d["findings"])
    if (x["id"] == "slurm-global-id-as-index") f = &x;
  ASSERT_NE(f, nullptr) << d["findings"].dump(1);
  EXPECT_NE((*f)["message"].get<std::string>().find("4 as Slurm's global id is GPU 0"), std::string::npos) << (*f)["message"];
  std::vector<std::string> fixed = after_paste((*f)["fix"].get<std::string>(), env);
  json again = json::parse(gpumap_here({"doctor", "--json", "--simulate", file}, fixed).out);
  EXPECT_EQ(above_info(again), 0) << again["findings"].dump(1);
  // which 4: Slurm's GPU 4 is GPU 0 here; the list shows the step's GPUs with their Slurm ids.
  CliRun w = gpumap_here({"which", "4", "--simulate", file}, env);
  EXPECT_EQ(w.code, 2);
  EXPECT_NE(w.err.find("4 is Slurm's global id (SLURM_STEP_GPUS=4,5)"), std::string::npos) << w.err;
  EXPECT_NE(w.err.find("Slurm's GPU 4 is GPU 0 here"), std::string::npos) << w.err;
  EXPECT_NE(w.err.find("Slurm id 5"), std::string::npos) << w.err;
  // map shows the Slurm id beside each GPU.
  json m = json::parse(gpumap_here({"map", "--json", "--simulate", file}, fixed).out);
  ASSERT_EQ(m["cuda"]["devices"].size(), 2u) << m.dump();
  EXPECT_EQ(m["cuda"]["devices"][0]["slurm_id"], 4);
  EXPECT_EQ(m["cuda"]["devices"][1]["slurm_id"], 5);
}

// Item 9: bind on a shared box whose GPUs 0 and 1 are busy says so (no scheduler chose them).
TEST(CliLayers, BindWarnsWhenItsGpuIsBusy) {
  std::ifstream in(host_path("dgx8"));
  json host = json::parse(in);
  host["gpus"][0]["memory_used_mib"] = 4096;
  host["gpus"][0]["processes"] = json::array({{{"pid", 4242}, {"used_memory_mib", 4096}}});
  host["gpus"][1]["memory_used_mib"] = 12288;
  host["gpus"][1]["processes"] = json::array({{{"pid", 4343}, {"used_memory_mib", 12288}}});
  std::string file = write_temp_file("dgx8-busy.json", host.dump());
  CliRun b = gpumap({"bind", "--simulate", file, "--", "true"}, {"LOCAL_RANK=1", "LOCAL_WORLD_SIZE=2"});
  EXPECT_EQ(b.code, 0) << b.err;
  EXPECT_NE(b.err.find("gpumap bind: warning: local rank 1's GPU nvidia-smi GPU 1"), std::string::npos) << b.err;
  EXPECT_NE(b.err.find("4343"), std::string::npos) << b.err;
  EXPECT_NE(b.err.find("12288 MiB used"), std::string::npos) << b.err;
  // An idle GPU: no warning; under a Slurm allocation the scheduler chose: no warning either.
  CliRun idle = gpumap({"bind", "--simulate", file, "--", "true"}, {"LOCAL_RANK=2"});
  EXPECT_EQ(idle.err.find("warning"), std::string::npos) << idle.err;
  CliRun slurm = gpumap({"bind", "--simulate", file, "--", "true"}, {"SLURM_LOCALID=0", "SLURM_STEP_GPUS=0,1"});
  EXPECT_EQ(slurm.err.find("warning"), std::string::npos) << slurm.err;
}

}  // namespace
}  // namespace gpumap::testing
