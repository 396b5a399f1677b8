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

// The path of `base` or `base`.gz inside `dir`: the first name that is there as anything
// but a folder (the IDX reader refuses what is not a regular file, by name). A folder
// under either name is said as such, not as "found neither".
absl::StatusOr<std::string> FindIdxFile(const std::string& dir, const std::string& base) {
  std::string folder;
  for (const std::string& name : {base, base + ".gz"}) {
    std::string path = absl::StrCat(dir, "/", name);
    struct stat st {};
    if (stat(path.c_str(), &st) != 0) {
      if (lstat(path.c_str(), &st) == 0) return path;  // a dangling link or a loop: the reader says which
      continue;
    }
    if (!S_ISDIR(st.st_mode)) return path;
    if (folder.empty()) folder = path;
  }
  if (!folder.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(folder, ": is a folder, not an IDX file; put the file ", base,
                                                   " (or ", base, ".gz) there instead"));
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

std::string ShapeText(int64_t channels, int64_t height, int64_t width) {
  return absl::StrCat(height, "x", width, " (", channels, channels == 1 ? " channel)" : " channels)");
}

absl::Status ShapeMismatch(const std::string& images_path, int64_t channels, int64_t height, int64_t width,
                           const ImageRequirement& need) {
  return absl::InvalidArgumentError(absl::StrCat(
      images_path, ": images are ", ShapeText(channels, height, width), ", but ", need.needed_by, " needs ",
      ShapeText(need.channels, need.height, need.width), " images; point --data-dir at a folder of ", need.height,
      "x", need.width, " images", need.needed_by.rfind("--model", 0) == 0 ? ", or choose another --model" : ""));
}

std::vector<float> ToUnitRange(const std::vector<uint8_t>& bytes) {
  std::array<float, 256> table;
  for (int p = 0; p < 256; ++p) table[p] = static_cast<float>(p) / 127.5f - 1.0f;
  std::vector<float> out(bytes.size());
  for (size_t i = 0; i < bytes.size(); ++i) out[i] = table[bytes[i]];
  return out;
}

}  // namespace

absl::Status CheckImagesFit(const ImageDataset& data, const ImageRequirement& need) {
  if (data.channels == need.channels && data.height == need.height && data.width == need.width) {
    return absl::OkStatus();
  }
  return ShapeMismatch(data.images_path, data.channels, data.height, data.width, need);
}

absl::StatusOr<ImageDataset> LoadMnistDir(const std::string& dir, bool train, const ImageRequirement* need) {
  RETURN_IF_ERROR(CheckDir(dir));
  const std::string prefix = train ? "train" : "t10k";
  ASSIGN_OR_RETURN(const std::string images_path, FindIdxFile(dir, prefix + "-images-idx3-ubyte"));
  ASSIGN_OR_RETURN(const std::string labels_path, FindIdxFile(dir, prefix + "-labels-idx1-ubyte"));
  ASSIGN_OR_RETURN(IdxFile images, IdxFile::OpenImages(images_path));
  ImageDataset dataset;
  dataset.count = images.count();
  dataset.height = images.dims()[1];
  dataset.width = images.dims()[2];
  dataset.images_path = images_path;
  if (need != nullptr) RETURN_IF_ERROR(CheckImagesFit(dataset, *need));
  ASSIGN_OR_RETURN(IdxFile labels, IdxFile::OpenLabels(labels_path));
  if (labels.count() != images.count()) {
    return absl::InvalidArgumentError(absl::StrCat(dir, ": ", images.count(), " images but ", labels.count(),
                                                   " labels in ", images_path, " and ", labels_path,
                                                   " (are they from different sets?)"));
  }
  ASSIGN_OR_RETURN(const std::vector<uint8_t> pixels, images.ReadPayload());
  ASSIGN_OR_RETURN(dataset.labels, labels.ReadPayload());
  dataset.pixels = ToUnitRange(pixels);
  return dataset;
}

void KeepFirstImages(ImageDataset& data, int64_t count) {
  if (count <= 0 || count >= data.count) return;
  data.pixels.resize(static_cast<size_t>(count * data.sample_numel()));
  data.labels.resize(static_cast<size_t>(count));
  data.count = count;
}

}  // namespace gantry
