// Helpers shared by the fuzz targets (tests/fuzz/*_fuzz.cc).
#pragma once

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace gantry::fuzz {

// An invariant of the code under test: a violation aborts, which libFuzzer and the
// replay driver both report as a crash (with the input that caused it).
#define FUZZ_EXPECT(cond, what)                                                   \
  do {                                                                            \
    if (!(cond)) {                                                                \
      std::fprintf(stderr, "fuzz invariant failed: %s (%s)\n", #cond, (what));  \
      std::abort();                                                               \
    }                                                                             \
  } while (0)

// The readers under test take a path, so each input goes through a scratch file: one
// per process (so parallel fuzzers do not collide), in /dev/shm when there is one (no
// disk writes at thousands of inputs a second), removed when the process exits. Write
// aborts when the file cannot be written, since a target that silently tests nothing
// would be worse than a crash.
class ScratchFile {
 public:
  explicit ScratchFile(const char* suffix)
      : path_(std::string(access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp") + "/gantry-fuzz-" +
              std::to_string(getpid()) + suffix) {}
  ~ScratchFile() { unlink(path_.c_str()); }
  ScratchFile(const ScratchFile&) = delete;
  ScratchFile& operator=(const ScratchFile&) = delete;

  // Replaces the file's contents with `size` bytes at `data`; returns its path.
  const std::string& Write(const uint8_t* data, size_t size) {
    std::FILE* f = std::fopen(path_.c_str(), "wb");
    FUZZ_EXPECT(f != nullptr, path_.c_str());
    FUZZ_EXPECT(size == 0 || std::fwrite(data, 1, size, f) == size, path_.c_str());
    FUZZ_EXPECT(std::fclose(f) == 0, path_.c_str());
    return path_;
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace gantry::fuzz
