// DatasetCache: the pool's training images kept between jobs are checked against each
// job's model, so a set read for one job is never trained by a model it does not fit.
#include "worker/pool/dataset_cache.h"

#include <filesystem>
#include <fstream>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace gantry {
namespace {

using ::testing::HasSubstr;

std::string Be32(uint32_t v) {
  return {static_cast<char>(v >> 24), static_cast<char>(v >> 16), static_cast<char>(v >> 8), static_cast<char>(v)};
}

// A folder of `count` side x side images (all zero) and their labels.
std::string Folder(const std::string& name, uint32_t count, uint32_t side) {
  const std::string dir = ::testing::TempDir() + "/dataset_cache_" + name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/train-images-idx3-ubyte", std::ios::binary)
      << Be32(2051) + Be32(count) + Be32(side) + Be32(side) + std::string(size_t{count} * side * side, '\0');
  std::ofstream(dir + "/train-labels-idx1-ubyte", std::ios::binary)
      << Be32(2049) + Be32(count) + std::string(count, '\x03');
  return dir;
}

TEST(DatasetCache, RefusesImagesThatDoNotFitTheJobsModelAlsoWhenCached) {
  const ImageRequirement dcgan{.channels = 1, .height = 28, .width = 28, .needed_by = "--model dcgan"};
  const std::string fits = Folder("28", 12, 28);
  const std::string wide = Folder("32", 12, 32);
  DatasetCache cache;
  absl::StatusOr<const ImageDataset*> got = cache.Get(fits, 8, &dcgan);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ((*got)->count, 8);
  EXPECT_EQ((*got)->images_path, fits + "/train-images-idx3-ubyte");

  got = cache.Get(wide, 0, &dcgan);
  EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(got.status().message()),
              HasSubstr(wide + "/train-images-idx3-ubyte: images are 32x32 (1 channel), but --model dcgan needs"));
  // Read for a job that asked for nothing, then asked for by one that needs 28x28.
  ASSERT_TRUE(cache.Get(wide, 0).ok());
  got = cache.Get(wide, 4, &dcgan);
  EXPECT_THAT(std::string(got.status().message()), HasSubstr(wide + "/train-images-idx3-ubyte: images are 32x32"));
}

}  // namespace
}  // namespace gantry
