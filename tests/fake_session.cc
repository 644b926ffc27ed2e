#include "fake_session.h"

#include <sys/stat.h>

#include <fstream>

#include <gtest/gtest.h>

#include "cli_helpers.h"

namespace gpumap::testing {

namespace {

void write_file(const std::string& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary);
  f << text;
  if (!f) ADD_FAILURE() << "cannot write " << path;
}

std::string nul_joined(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& s : items) out += s + '\0';
  return out;
}

}  // namespace

FakeSession::FakeSession(const std::string& host, std::vector<std::string> env) : env_(std::move(env)) {
  dir_ = temp_dir("session");
  std::ifstream in(host_path(host));
  if (!in) ADD_FAILURE() << "no host " << host;
  else host_ = nlohmann::json::parse(in);
  for (const char* sub : {"/proc", "/locks", "/cache", "/state"}) mkdir((dir_ + sub).c_str(), 0755);
  seams_.hosts_dirs = {std::string(GPUMAP_SOURCE_DIR) + "/hosts"};
  seams_.sim_lib_dirs = {std::string(GPUMAP_BUILD_DIR) + "/sim"};
  seams_.probe_command = {GPUMAP_BINARY, "__probe"};
  seams_.lock_dir = lease_dir();
  seams_.cache_dir = dir_ + "/cache";
  seams_.state_dir = dir_ + "/state";
  seams_.proc_root = proc_root();
  // A simulated host's PIDs are the fixture /proc's own; outside a container unless asked.
  seams_.in_container = false;
  seams_.in_container_forced = true;
}

FakeSession& FakeSession::with_process(uint32_t nvml_index, const FakeProcess& p, uint64_t mib) {
  EXPECT_FALSE(session_) << "with_process after session(): the host is already read";
  nlohmann::json& gpu = host_["gpus"][nvml_index];
  if (!gpu.contains("processes") || !gpu["processes"].is_array()) gpu["processes"] = nlohmann::json::array();
  gpu["processes"].push_back({{"pid", p.pid}, {"used_memory_mib", mib}});
  return with_proc_entry(p);
}

FakeSession& FakeSession::with_proc_entry(const FakeProcess& p) {
  std::string d = proc_root() + "/" + std::to_string(p.pid);
  if (mkdir(d.c_str(), 0755) != 0) return *this;  // the same process on a second GPU
  std::string nspid = std::to_string(p.pid);
  for (uint32_t n : p.nspid) nspid += "\t" + std::to_string(n);
  std::string uid = std::to_string(p.uid);
  write_file(d + "/status", "Name:\t" + (p.argv.empty() ? std::string("?") : p.argv[0]) + "\nUid:\t" + uid + "\t" + uid +
                                "\t" + uid + "\t" + uid + "\nNSpid:\t" + nspid + "\nPPid:\t" + std::to_string(p.ppid) + "\n");
  write_file(d + "/cmdline", nul_joined(p.argv));
  if (p.environ) write_file(d + "/environ", nul_joined(*p.environ));
  else mkdir((d + "/environ").c_str(), 0755);  // a read fails, as for another user's process
  return *this;
}

std::string FakeSession::host_file() {
  if (host_file_.empty()) {
    host_file_ = dir_ + "/host.json";
    write_file(host_file_, host_.dump(2));
  }
  return host_file_;
}

Session& FakeSession::session() {
  if (!session_) {
    seams_.simulate = host_file();
    session_ = std::make_unique<Session>(select_checked_driver(seams_), Environment::from_strings(env_), seams_);
  }
  return *session_;
}

Session FakeSession::other(std::vector<std::string> env) {
  seams_.simulate = host_file();
  return Session(select_checked_driver(seams_), Environment::from_strings(env), seams_);
}

}  // namespace gpumap::testing
