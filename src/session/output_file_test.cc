// write_output_file (--json-file, __describe --output) in process: the file written whole, and a
// path it must not replace refused with the option, the path and the fix.
#include "session/output_file.h"

#include <sys/stat.h>

#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "fake_session.h"
#include "model/error.h"

namespace gpumap {
namespace {

std::string read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(WriteOutputFile, WritesTheTextWholeAndReplacesAnOlderFile) {
  testing::FakeSession f("h200x2");
  std::string path = f.dir() + "/doc.json";
  write_output_file(path, "{\"a\": 1}\n", "--json-file", "give a writable path");
  EXPECT_EQ(read(path), "{\"a\": 1}\n");
  write_output_file(path, "{}\n", "--json-file", "give a writable path");
  EXPECT_EQ(read(path), "{}\n");
  struct stat st;
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0644u);
}

TEST(WriteOutputFile, AFolderOrAMissingFolderIsRefusedNamingTheOptionAndPath) {
  testing::FakeSession f("h200x2");
  for (const std::string& path : {f.dir() + "/state", f.dir() + "/no/such/doc.json"}) {
    try {
      write_output_file(path, "x", "__describe --output", "give a writable path");
      ADD_FAILURE() << path << " was written";
    } catch (const Error& e) {
      EXPECT_EQ(e.exit_code(), kExitError);
      EXPECT_EQ(std::string(e.what()).rfind("cannot write __describe --output " + path + ": ", 0), 0u) << e.what();
      EXPECT_EQ(e.hint(), "give a writable path");
    }
  }
  struct stat st;
  ASSERT_EQ(stat((f.dir() + "/state").c_str(), &st), 0);
  EXPECT_TRUE(S_ISDIR(st.st_mode)) << "the folder is left as it was";
}

}  // namespace
}  // namespace gpumap
