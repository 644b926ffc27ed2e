// Host files (docs/host-file.md) as a user edits them (issue 22 point 6): a typo in a key is an
// error naming it, and the order cache follows the file's content, not its path.
#include <fstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli_helpers.h"

namespace gpumap::testing {
namespace {

using json = nlohmann::json;

json read_host(const std::string& name) {
  std::ifstream in(host_path(name));
  return json::parse(in);
}

TEST(CliHostFile, AnUnknownKeyIsAnErrorNamingItWithTheClosestKnownOne) {
  json h = read_host("h200x2");
  h["gpus"][1]["memroy_used_mib"] = 5;
  std::string path = write_temp_file("typo.json", h.dump());
  CliRun r = gpumap_here({"list", "--simulate", path});
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.err.find("gpus[1] has an unknown key `memroy_used_mib` (did you mean `memory_used_mib`?)"), std::string::npos)
      << r.err;
  json top = read_host("h200x2");
  top["driver_verison"] = "580.1";
  CliRun t = gpumap_here({"list", "--simulate", write_temp_file("top.json", top.dump())});
  EXPECT_EQ(t.code, 2);
  EXPECT_NE(t.err.find("unknown key `driver_verison` (did you mean `driver_version`?)"), std::string::npos) << t.err;
  // Comments ("_comment", any key starting with _) stay allowed: the bundled hosts carry them.
  json c = read_host("h200x2");
  c["_note"] = "a comment";
  EXPECT_EQ(gpumap_here({"list", "--simulate", write_temp_file("comment.json", c.dump())}).code, 0);
}

TEST(CliHostFile, AMissingHostFileSaysItDoesNotExist) {
  CliRun r = gpumap_here({"list", "--simulate", "/nonexistent/host.json"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("does not exist"), std::string::npos) << r.err;
}

TEST(CliHostFile, TheOrderCacheFollowsAnEditedHostFile) {
  // seed-mixed has GPUs of two models: the default order comes from the driver, then the cache.
  std::string cache = "GPUMAP_CACHE_DIR=" + temp_dir("editcache");
  json h = read_host("seed-mixed");
  std::string path = write_temp_file("edited.json", h.dump());
  auto first_cuda = [&] {
    CliRun r = gpumap_here({"map", "--json", "--simulate", path}, {cache});
    EXPECT_EQ(r.code, 0) << r.err;
    json j = json::parse(r.out);
    return std::make_pair(j["cuda"]["devices"][0]["uuid"].get<std::string>(), j["cuda"]["source"].get<std::string>());
  };
  auto [before, src1] = first_cuda();
  EXPECT_EQ(before, h["cuda_default_order"][0]);
  EXPECT_EQ(first_cuda().second, "cache");
  // The user edits the file: the driver's default order changes.
  std::swap(h["cuda_default_order"][0], h["cuda_default_order"][1]);
  std::ofstream(path, std::ios::trunc) << h.dump();
  auto [after, src2] = first_cuda();
  EXPECT_EQ(after, h["cuda_default_order"][0]) << "an edited host file answered with the order cached for the old one";
  EXPECT_NE(src2, "cache");
}

}  // namespace
}  // namespace gpumap::testing
