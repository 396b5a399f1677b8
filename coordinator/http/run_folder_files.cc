#include "coordinator/http/run_folder_files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/check.h"

namespace gantry {
namespace {

constexpr size_t kMaxRolloutRows = 100000;

// Closes a descriptor when it goes out of scope.
class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }
  void reset(int fd) {
    if (fd_ >= 0) close(fd_);
    fd_ = fd;
  }

 private:
  int fd_;
};

absl::Status OpenError(const std::string& what, int err) {
  // ELOOP: the component is a symbolic link, which O_NOFOLLOW refuses.
  if (err == ELOOP || err == ENOTDIR) {
    return absl::PermissionDeniedError(absl::StrCat(what, ": not served (a symbolic link or not a folder)"));
  }
  if (err == ENOENT) return absl::NotFoundError(absl::StrCat(what, ": no such file"));
  return absl::UnavailableError(absl::StrCat(what, ": ", std::strerror(err)));
}

}  // namespace

absl::StatusOr<std::string> ReadRunFolderFile(const std::string& root, const std::vector<std::string>& relative,
                                              size_t max_bytes) {
  CHECK(!relative.empty());
  for (const std::string& part : relative) {
    CHECK(!part.empty() && part != "." && part != ".." && part.find('/') == std::string::npos) << part;
  }
  if (root.empty() || root[0] != '/') {
    return absl::NotFoundError("the job reported no run folder (or not an absolute path)");
  }
  Fd dir(open(root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (dir.get() < 0) return OpenError(root, errno);
  struct stat st;
  if (fstatat(dir.get(), "run.json", &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode)) {
    return absl::NotFoundError(absl::StrCat(root, ": not a run folder (no run.json)"));
  }
  std::string shown = root;
  for (size_t i = 0; i + 1 < relative.size(); ++i) {
    absl::StrAppend(&shown, "/", relative[i]);
    const int next = openat(dir.get(), relative[i].c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (next < 0) return OpenError(shown, errno);
    dir.reset(next);
  }
  absl::StrAppend(&shown, "/", relative.back());
  // O_NONBLOCK: opening a FIFO must not wait for a writer.
  Fd file(openat(dir.get(), relative.back().c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  if (file.get() < 0) return OpenError(shown, errno);
  if (fstat(file.get(), &st) != 0) return OpenError(shown, errno);
  if (!S_ISREG(st.st_mode)) return absl::PermissionDeniedError(absl::StrCat(shown, ": not a regular file"));
  if (static_cast<size_t>(st.st_size) > max_bytes) {
    return absl::ResourceExhaustedError(absl::StrCat(shown, ": ", st.st_size, " bytes, more than ", max_bytes));
  }
  std::string bytes(static_cast<size_t>(st.st_size), '\0');
  size_t got = 0;
  while (got < bytes.size()) {
    const ssize_t n = read(file.get(), bytes.data() + got, bytes.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return OpenError(shown, errno);
    if (n == 0) break;  // shrank while read: serve what is there
    got += static_cast<size_t>(n);
  }
  bytes.resize(got);
  return bytes;
}

absl::StatusOr<SampleGrid> ReadNewestSampleGrid(const v1::JobReport& report) {
  const std::string& root = report.job().checkpoint().run_folder();
  const bool sweep = report.job().spec().batch_sizes_size() > 1;  // as the trainer decides
  absl::Status last = absl::NotFoundError("the job has no finished epoch yet");
  for (int i = report.epochs_size() - 1; i >= 0; --i) {
    const v1::EpochMetrics& row = report.epochs(i);
    std::vector<std::string> relative = {"samples"};
    if (sweep) relative.push_back(absl::StrFormat("b%04d", row.batch_size()));
    relative.push_back(absl::StrFormat("epoch_%03d.png", row.epoch()));
    absl::StatusOr<std::string> png = ReadRunFolderFile(root, relative, kMaxSampleGridBytes);
    if (png.ok() && absl::StartsWith(*png, "\x89PNG\r\n\x1a\n")) return SampleGrid{row.batch_size(), row.epoch(), *png};
    last = png.ok() ? absl::NotFoundError("the sample grid is not a PNG file") : png.status();
    if (last.code() != absl::StatusCode::kNotFound) break;  // a refused file: do not look for older ones
  }
  return absl::NotFoundError(absl::StrCat("no sample grid: ", last.message()));
}

namespace {

// The run folder's sub-folders whose names start with `prefix` (RUN/rollout-<case>,
// RUN/generate-<name>), with their modification times, oldest name first. Only names are
// taken from the listing; each is then opened under the rules of ReadRunFolderFile, so a
// link named rollout-x is refused there.
struct Folder {
  std::string name;
  std::filesystem::file_time_type modified;
};
std::vector<Folder> PrefixedFolders(const std::string& root, const std::string& prefix) {
  std::vector<Folder> folders;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(root, error)) {
    const std::string name = entry.path().filename().string();
    if (!absl::StartsWith(name, prefix) || folders.size() >= 1000) continue;
    std::error_code ignored;
    folders.push_back({name, entry.last_write_time(ignored)});
  }
  std::sort(folders.begin(), folders.end(), [](const Folder& a, const Folder& b) { return a.name < b.name; });
  return folders;
}

// A rollout.csv and the folder it is in (components below the run folder; none for its top).
struct RolloutCsvFile {
  std::string text;
  std::vector<std::string> folder;
};

// rollout.csv at the run folder's top, else in the last RUN/rollout-<case>/.
absl::StatusOr<RolloutCsvFile> ReadRolloutCsv(const std::string& root) {
  absl::StatusOr<std::string> text = ReadRunFolderFile(root, {"rollout.csv"}, kMaxRolloutCsvBytes);
  if (text.ok()) return RolloutCsvFile{*text, {}};
  if (text.status().code() != absl::StatusCode::kNotFound) return text.status();
  const std::vector<Folder> folders = PrefixedFolders(root, "rollout-");
  for (auto it = folders.rbegin(); it != folders.rend(); ++it) {
    absl::StatusOr<std::string> found = ReadRunFolderFile(root, {it->name, "rollout.csv"}, kMaxRolloutCsvBytes);
    if (found.ok()) return RolloutCsvFile{*found, {it->name}};
    if (found.status().code() != absl::StatusCode::kNotFound) return found.status();
  }
  return text.status();
}

// The marks of rollout.json (gantry-worker rollout's summary) beside a rollout.csv: the
// keys it documents whose values are numbers or null. NOT_FOUND when there is no such
// file (rollouts written before it existed), INVALID_ARGUMENT when it is not that JSON.
absl::StatusOr<nlohmann::json> ReadRolloutSummary(const std::string& root, std::vector<std::string> folder) {
  folder.push_back("rollout.json");
  absl::StatusOr<std::string> text = ReadRunFolderFile(root, folder, kMaxRolloutSummaryBytes);
  if (!text.ok()) return text.status();
  const nlohmann::json parsed = nlohmann::json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (!parsed.is_object()) return absl::InvalidArgumentError("rollout.json: not a JSON object");
  nlohmann::json marks = nlohmann::json::object();
  for (const char* key : {"steps", "start_frame", "horizon", "threshold", "first_below", "loose_threshold",
                          "first_below_loose", "blow_up", "strouhal_predicted", "strouhal_true"}) {
    const auto it = parsed.find(key);
    if (it == parsed.end()) continue;
    if (!it->is_number() && !it->is_null()) {
      return absl::InvalidArgumentError(absl::StrCat("rollout.json: \"", key, "\" is not a number or null"));
    }
    marks[key] = *it;
  }
  return marks;
}

}  // namespace

absl::StatusOr<GeneratedGrid> ReadNewestGeneratedGrid(const v1::Job& job) {
  const std::string& root = job.checkpoint().run_folder();
  std::vector<Folder> folders = PrefixedFolders(root, "generate-");
  std::stable_sort(folders.begin(), folders.end(),
                   [](const Folder& a, const Folder& b) { return a.modified < b.modified; });
  absl::Status last = absl::NotFoundError("no generate-* folder in the run folder");
  for (auto it = folders.rbegin(); it != folders.rend(); ++it) {
    absl::StatusOr<std::string> png = ReadRunFolderFile(root, {it->name, "grid.png"}, kMaxSampleGridBytes);
    if (png.ok() && absl::StartsWith(*png, "\x89PNG\r\n\x1a\n")) return GeneratedGrid{it->name, *png};
    last = png.ok() ? absl::NotFoundError("the generated grid is not a PNG file") : png.status();
    if (last.code() != absl::StatusCode::kNotFound) break;  // a refused file: do not look further
  }
  return absl::NotFoundError(absl::StrCat("no generated grid: ", last.message()));
}

absl::StatusOr<nlohmann::json> ReadRolloutCurve(const v1::Job& job) {
  const std::string& root = job.checkpoint().run_folder();
  absl::StatusOr<RolloutCsvFile> file = ReadRolloutCsv(root);
  if (!file.ok()) return file.status();
  std::vector<absl::string_view> lines = absl::StrSplit(file->text, '\n', absl::SkipWhitespace());
  if (lines.empty()) return absl::InvalidArgumentError("rollout.csv: empty (no header line)");
  if (lines.size() > kMaxRolloutRows + 1) {
    return absl::InvalidArgumentError(absl::StrCat("rollout.csv: more than ", kMaxRolloutRows, " rows"));
  }
  nlohmann::json out;
  out["columns"] = nlohmann::json::array();
  for (absl::string_view name : absl::StrSplit(lines[0], ',')) {
    out["columns"].push_back(std::string(absl::StripAsciiWhitespace(name)));
  }
  out["rows"] = nlohmann::json::array();
  for (size_t i = 1; i < lines.size(); ++i) {
    nlohmann::json row = nlohmann::json::array();
    for (absl::string_view cell : absl::StrSplit(lines[i], ',')) {
      double value;
      if (absl::SimpleAtod(absl::StripAsciiWhitespace(cell), &value) && std::isfinite(value)) {
        row.push_back(value);
      } else {
        row.push_back(nullptr);  // a text cell or a NaN: no point on the curve
      }
    }
    if (row.size() != out["columns"].size()) {
      return absl::InvalidArgumentError(absl::StrCat("rollout.csv line ", i + 1, ": ", row.size(), " cells, the header has ",
                                                     out["columns"].size()));
    }
    out["rows"].push_back(std::move(row));
  }
  absl::StatusOr<nlohmann::json> summary = ReadRolloutSummary(root, file->folder);
  if (summary.ok()) {
    out["summary"] = *std::move(summary);
  } else if (summary.status().code() != absl::StatusCode::kNotFound) {
    out["summary_error"] = std::string(summary.status().message());  // the curve still shows
  }
  return out;
}

}  // namespace gantry
