// Replays a fuzz target's corpus without libFuzzer: every file named on the command line, or found
// in a folder named there, goes once through LLVMFuzzerTestOneInput.  Built with the normal
// compiler beside the tests, so the seeds and every input that once crashed a fuzzer run in each
// CI pass (under ASan + UBSan in the sanitizer pass) even where clang and libFuzzer are absent.
// A target reports a violated property by aborting, which fails the test.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

bool replay(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "fuzz replay: cannot read %s\n", file.c_str());
    return false;
  }
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s FILE_OR_FOLDER...  (replays each input once)\n", argv[0]);
    return 2;
  }
  size_t count = 0;
  for (int i = 1; i < argc; ++i) {
    std::error_code ec;
    const std::filesystem::path arg(argv[i]);
    if (!std::filesystem::is_directory(arg, ec)) {
      if (!replay(arg)) return 1;
      ++count;
      continue;
    }
    std::vector<std::filesystem::path> files;
    for (const auto& e : std::filesystem::recursive_directory_iterator(arg, ec))
      if (e.is_regular_file()) files.push_back(e.path());
    if (ec) {
      std::fprintf(stderr, "fuzz replay: cannot list %s: %s\n", arg.c_str(), ec.message().c_str());
      return 1;
    }
    if (files.empty()) {
      std::fprintf(stderr, "fuzz replay: %s holds no input\n", arg.c_str());
      return 1;
    }
    std::sort(files.begin(), files.end());
    for (const auto& f : files) {
      if (!replay(f)) return 1;
      ++count;
    }
  }
  std::printf("replayed %zu input(s)\n", count);
  return 0;
}
