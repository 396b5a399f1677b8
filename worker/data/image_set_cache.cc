#include "worker/data/image_set_cache.h"

#include <filesystem>
#include <system_error>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/printable_text.h"
#include "common/status_macros.h"
#include "spdlog/spdlog.h"
#include "worker/data/packed_images.h"

namespace gantry {
namespace {

namespace fs = std::filesystem;

constexpr int kKeyDigits = 16;
constexpr size_t kMaxNameBytes = 100;

// NAME-SIZEpx-Cc-: what every pack of this folder with these settings starts with.
std::string PackPrefix(const PackRequest& request) {
  std::string name = fs::path(request.from).lexically_normal().filename().string();
  if (name.empty() || name == "." || name == "..") name = fs::path(request.from).lexically_normal().parent_path().filename().string();
  if (name.empty()) name = "images";
  if (name.size() > kMaxNameBytes) name.resize(kMaxNameBytes);  // the file name stays under NAME_MAX
  return absl::StrCat(name, "-", request.image_size, "px-", request.channels, "c-");
}

// Earlier packs of the same folder and settings (another key): out of date once a new
// one exists.
std::vector<std::string> OlderPacks(const std::string& cache_dir, const std::string& prefix, const std::string& current) {
  std::vector<std::string> older;
  std::error_code error;
  for (const fs::directory_entry& e : fs::directory_iterator(cache_dir, error)) {
    const std::string file = e.path().filename().string();
    if (e.path().string() != current && absl::StartsWith(file, prefix) && absl::EndsWith(file, ".pack") &&
        file.size() == prefix.size() + kKeyDigits + 5) {
      older.push_back(e.path().string());
    }
  }
  return older;
}

absl::Status PackInto(const PackRequest& request, const std::string& path, const std::string& why) {
  spdlog::info("packing the images in {} into {} ({}); later runs on the same files reuse it",
               EscapeForTerminal(request.from), path, why);
  PackRequest into = request;
  into.out = path;
  absl::StatusOr<PackReport> report = PackImageFolder(into);
  // Another run packing the same folder at the same time published it first: use theirs.
  if (absl::IsAlreadyExists(report.status())) return absl::OkStatus();
  return report.status();
}

}  // namespace

std::string ImageCacheDirFor(const std::string& run_folder) {
  fs::path parent = fs::path(run_folder).lexically_normal().parent_path();
  if (parent.empty()) parent = ".";
  return (parent / ".image-cache").string();
}

absl::StatusOr<std::string> CachedPackPath(const PackRequest& request, const std::string& cache_dir) {
  ASSIGN_OR_RETURN(const std::string key, ImageFolderKey(request));
  return (fs::path(cache_dir) / absl::StrCat(PackPrefix(request), key.substr(0, kKeyDigits), ".pack")).string();
}

absl::StatusOr<std::string> EnsureFolderPacked(const PackRequest& request, const std::string& cache_dir) {
  ASSIGN_OR_RETURN(const std::string path, CachedPackPath(request, cache_dir));
  std::error_code error;
  fs::create_directories(cache_dir, error);
  if (error) {
    return absl::FailedPreconditionError(absl::StrCat("cannot make the image cache folder ", cache_dir, ": ",
                                                      error.message(), " (make it writable, or pack the images "
                                                      "once with gantry-worker make-dataset and give that file)"));
  }
  const std::vector<std::string> older = OlderPacks(cache_dir, PackPrefix(request), path);
  if (fs::exists(path, error)) {
    absl::StatusOr<std::unique_ptr<PackedImages>> cached = PackedImages::Open(path);
    if (cached.ok()) {
      spdlog::info("using {} (the images in {} packed earlier; unchanged since)", path, EscapeForTerminal(request.from));
      return path;
    }
    spdlog::warn("the cached pack {} cannot be used ({}); removing it and packing again", path,
                 std::string(cached.status().message()));
    fs::remove(path, error);
    RETURN_IF_ERROR(PackInto(request, path, "its cached pack was damaged"));
  } else {
    RETURN_IF_ERROR(PackInto(request, path,
                             older.empty() ? "first use"
                                           : absl::StrCat("the folder changed since ", older.front(), " was packed")));
  }
  for (const std::string& stale : older) {
    spdlog::info("removing {}: out of date (the folder changed since)", stale);
    fs::remove(stale, error);
  }
  return path;
}

}  // namespace gantry
