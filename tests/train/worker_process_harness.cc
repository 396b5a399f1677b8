#include "tests/train/worker_process_harness.h"

#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "gtest/gtest.h"

namespace gantry::testing {
namespace {

namespace fs = std::filesystem;

void WriteBigEndian32(std::ofstream& f, uint32_t v) {
  const char b[4] = {static_cast<char>(v >> 24), static_cast<char>(v >> 16), static_cast<char>(v >> 8),
                     static_cast<char>(v)};
  f.write(b, 4);
}

}  // namespace

WorkerResult RunWorkerBinary(const std::string& args) {
  const std::string cmd = std::string(GANTRY_WORKER_BIN) + " " + args + " 2>&1";
  FILE* pipe = popen(cmd.c_str(), "r");
  if (pipe == nullptr) return {};
  WorkerResult r;
  char buf[4096];
  while (size_t n = fread(buf, 1, sizeof(buf), pipe)) r.output.append(buf, n);
  const int status = pclose(pipe);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

std::string MakeIdxFolder(const std::string& name, int count, int side) {
  const std::string dir = ::testing::TempDir() + "/idx_" + name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::ofstream images(dir + "/train-images-idx3-ubyte", std::ios::binary);
  WriteBigEndian32(images, 2051);
  WriteBigEndian32(images, count);
  WriteBigEndian32(images, side);
  WriteBigEndian32(images, side);
  for (int i = 0; i < count; ++i) {
    for (int p = 0; p < side * side; ++p) images.put(static_cast<char>((p % side) == (i % side) ? 255 : 0));
  }
  std::ofstream labels(dir + "/train-labels-idx1-ubyte", std::ios::binary);
  WriteBigEndian32(labels, 2049);
  WriteBigEndian32(labels, count);
  for (int i = 0; i < count; ++i) labels.put(static_cast<char>(i % 10));
  return dir;
}

std::string FreshRunPath(const std::string& name) {
  const std::string dir = ::testing::TempDir() + "/run_" + name;
  fs::remove_all(dir);
  return dir;
}

std::string ReadFileText(const std::string& path) {
  std::stringstream ss;
  ss << std::ifstream(path, std::ios::binary).rdbuf();
  return ss.str();
}

}  // namespace gantry::testing
