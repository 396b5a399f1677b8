// The corpus replay driver for builds without libFuzzer (gcc): a main() that feeds each
// file named on the command line (or each regular file of a folder named there, in name
// order) to the target's LLVMFuzzerTestOneInput, once. The same target source is linked
// into a libFuzzer binary in -DGANTRY_FUZZ=ON builds, so every build checks that the
// committed corpus (seeds and every input a fuzzer ever crashed on) still runs clean.
//
// A crash, a sanitizer report or a failed invariant inside the target ends the process
// abnormally. Exit 1 when nothing was replayed (a missing or empty corpus is a broken
// test, not a pass); 0 otherwise.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

std::vector<std::filesystem::path> InputsOf(const std::filesystem::path& arg) {
  std::vector<std::filesystem::path> inputs;
  if (std::filesystem::is_directory(arg)) {
    for (const auto& entry : std::filesystem::directory_iterator(arg)) {
      if (entry.is_regular_file()) inputs.push_back(entry.path());
    }
    std::sort(inputs.begin(), inputs.end());
  } else if (std::filesystem::is_regular_file(arg)) {
    inputs.push_back(arg);
  }
  return inputs;
}

}  // namespace

int main(int argc, char** argv) {
  size_t replayed = 0;
  for (int i = 1; i < argc; ++i) {
    const std::vector<std::filesystem::path> inputs = InputsOf(argv[i]);
    if (inputs.empty()) std::fprintf(stderr, "replay: %s: no input files (is the corpus there?)\n", argv[i]);
    for (const std::filesystem::path& input : inputs) {
      std::ifstream in(input, std::ios::binary);
      const std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      if (!in.good() && !in.eof()) {
        std::fprintf(stderr, "replay: cannot read %s\n", input.c_str());
        return 1;
      }
      std::fprintf(stderr, "replay: %s (%zu bytes)\n", input.c_str(), bytes.size());
      LLVMFuzzerTestOneInput(bytes.data(), bytes.size());
      ++replayed;
    }
  }
  std::fprintf(stderr, "replay: %zu inputs ran clean\n", replayed);
  return replayed > 0 ? 0 : 1;
}
