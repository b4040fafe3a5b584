// The plain driver of a fuzz target, for the normal build (any compiler, no libFuzzer): it feeds
// every file named on the command line, or found in a folder named there, through the target's
// LLVMFuzzerTestOneInput, once each, in name order. The ctest tests fuzz_regress_<target> run it on
// the seed corpus tests/fuzz/<target>/ and on tests/fuzz/regressions/<target>/, the inputs that once
// made the target fail. A bug makes the target abort (see fuzz_support.hpp), and the name of the
// input is printed just before it runs, so the failing file is the last one named.
//
// Usage: fuzz_regress_<target> PATH...   (files or folders; folders are read one level deep, and
//        names starting with '.' are skipped, so a .gitkeep can hold an empty folder)
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace fs = std::filesystem;

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s FILE_OR_FOLDER...\n", argv[0]);
    return 2;
  }
  std::vector<fs::path> inputs;
  for (int a = 1; a < argc; ++a) {
    const fs::path p = argv[a];
    std::error_code ec;
    if (fs::is_directory(p, ec)) {
      std::vector<fs::path> found;
      for (const auto& e : fs::directory_iterator(p))
        if (e.is_regular_file() && e.path().filename().string().rfind('.', 0) != 0) found.push_back(e.path());
      std::sort(found.begin(), found.end());
      std::printf("%s: %zu inputs\n", p.string().c_str(), found.size());
      inputs.insert(inputs.end(), found.begin(), found.end());
    } else if (fs::is_regular_file(p, ec)) {
      inputs.push_back(p);
    } else {
      std::fprintf(stderr, "%s: no such file or folder\n", p.string().c_str());
      return 2;
    }
  }
  if (inputs.empty()) {
    std::fprintf(stderr, "no inputs found: a seed corpus must not be empty\n");
    return 2;
  }
  for (const fs::path& p : inputs) {
    std::ifstream in(p, std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (!in.good() && !in.eof()) {
      std::fprintf(stderr, "%s: cannot read\n", p.string().c_str());
      return 2;
    }
    std::printf("running %s (%zu bytes)\n", p.string().c_str(), bytes.size());
    std::fflush(stdout);
    LLVMFuzzerTestOneInput(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
  }
  std::printf("%zu inputs ran without a failure\n", inputs.size());
  return 0;
}
