#include "worker/data/mnist_dataset.h"

#include <sys/stat.h>

#include <array>
#include <cerrno>
#include <cstring>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "worker/data/idx_reader.h"

namespace gantry {
namespace {

bool IsFile(const std::string& path) {
  struct stat st {};
  return stat(path.c_str(), &st) == 0 && !S_ISDIR(st.st_mode);
}

// The path of `base` or `base`.gz inside `dir`.
absl::StatusOr<std::string> FindIdxFile(const std::string& dir, const std::string& base) {
  for (const std::string& name : {base, base + ".gz"}) {
    std::string path = absl::StrCat(dir, "/", name);
    if (IsFile(path)) return path;
  }
  return absl::NotFoundError(
      absl::StrCat(dir, ": found neither ", base, " nor ", base,
                   ".gz; point --data-dir at the folder holding the MNIST-format IDX files"));
}

absl::Status CheckDir(const std::string& dir) {
  if (dir.empty()) {
    return absl::InvalidArgumentError(
        "no data directory given: pass --data-dir with the folder holding the MNIST-format IDX files "
        "(train-images-idx3-ubyte[.gz], train-labels-idx1-ubyte[.gz], t10k-*)");
  }
  struct stat st {};
  if (stat(dir.c_str(), &st) != 0) {
    const int error = errno;
    return absl::Status(absl::ErrnoToStatusCode(error),
                        absl::StrCat(dir, ": cannot open the data directory: ", std::strerror(error),
                                     "; pass --data-dir with the folder holding the MNIST-format IDX files"));
  }
  if (!S_ISDIR(st.st_mode)) {
    return absl::InvalidArgumentError(absl::StrCat(
        dir, ": not a directory; --data-dir takes the folder holding the IDX files, not a file"));
  }
  return absl::OkStatus();
}

std::vector<float> ToUnitRange(const std::vector<uint8_t>& bytes) {
  std::array<float, 256> table;
  for (int p = 0; p < 256; ++p) table[p] = static_cast<float>(p) / 127.5f - 1.0f;
  std::vector<float> out(bytes.size());
  for (size_t i = 0; i < bytes.size(); ++i) out[i] = table[bytes[i]];
  return out;
}

}  // namespace

absl::StatusOr<ImageDataset> LoadMnistDir(const std::string& dir, bool train) {
  RETURN_IF_ERROR(CheckDir(dir));
  const std::string prefix = train ? "train" : "t10k";
  ASSIGN_OR_RETURN(const std::string images_path, FindIdxFile(dir, prefix + "-images-idx3-ubyte"));
  ASSIGN_OR_RETURN(const std::string labels_path, FindIdxFile(dir, prefix + "-labels-idx1-ubyte"));
  ASSIGN_OR_RETURN(IdxImages images, ReadIdxImages(images_path));
  ASSIGN_OR_RETURN(std::vector<uint8_t> labels, ReadIdxLabels(labels_path));
  if (static_cast<int64_t>(labels.size()) != images.count) {
    return absl::InvalidArgumentError(absl::StrCat(dir, ": ", images.count, " images but ", labels.size(),
                                                   " labels in ", images_path, " and ", labels_path,
                                                   " (are they from different sets?)"));
  }
  ImageDataset dataset;
  dataset.count = images.count;
  dataset.height = images.rows;
  dataset.width = images.cols;
  dataset.pixels = ToUnitRange(images.pixels);
  dataset.labels = std::move(labels);
  return dataset;
}

void KeepFirstImages(ImageDataset& data, int64_t count) {
  if (count <= 0 || count >= data.count) return;
  data.pixels.resize(static_cast<size_t>(count * data.sample_numel()));
  data.labels.resize(static_cast<size_t>(count));
  data.count = count;
}

}  // namespace gantry
