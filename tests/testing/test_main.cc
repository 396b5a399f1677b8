// main() of every GoogleTest binary: each process gets a scratch folder of its own.
//
// ::testing::TempDir() is TEST_TMPDIR when set, else /tmp/, so tests that build paths
// under it would share them between processes: two runs of the suite at once (or a
// binary run beside its own CTest entries) then write the same files. Before any test
// runs this makes a fresh folder with mkdtemp under the TEST_TMPDIR given (or /tmp),
// points TEST_TMPDIR at it, and removes it when the tests are done (kept when
// GANTRY_KEEP_TEST_TMPDIR is set, to look at what a failing test left).
#include <stdlib.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace {

// The folder, or "" (said on stderr) when it cannot be made: the tests then run in the
// folder given, as before.
std::string MakeProcessTempDir() {
  const char* given = getenv("TEST_TMPDIR");
  std::string pattern = std::string(given != nullptr && *given != '\0' ? given : "/tmp") + "/gantry-test-XXXXXX";
  if (mkdtemp(pattern.data()) == nullptr) {
    std::fprintf(stderr, "test_main: cannot make %s (%s); tests share the temporary folder\n", pattern.c_str(),
                 std::strerror(errno));
    return "";
  }
  setenv("TEST_TMPDIR", pattern.c_str(), 1);
  return pattern;
}

}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleMock(&argc, argv);
  const std::string dir = MakeProcessTempDir();
  const int status = RUN_ALL_TESTS();
  if (!dir.empty() && getenv("GANTRY_KEEP_TEST_TMPDIR") == nullptr) {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
  return status;
}
