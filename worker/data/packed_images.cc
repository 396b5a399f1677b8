#include "worker/data/packed_images.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "absl/strings/str_cat.h"
#include "common/file_io.h"
#include "common/printable_text.h"
#include "worker/data/packed_images_format.h"

namespace gantry {
namespace {

// The refusal of a file that is not a sound packed image set: its path, what is wrong,
// and the fix.
absl::Status Refuse(const std::string& path, const absl::Status& what) {
  return absl::Status(what.code(), absl::StrCat(path, ": ", what.message(), "; ", kRemakePackedImages));
}

// The strings section read in order: each string's offset must be where the previous
// one ended.
class StringCursor {
 public:
  StringCursor(const uint8_t* strings, int64_t bytes) : strings_(strings), bytes_(bytes) {}
  int64_t position() const { return position_; }
  // The next string; `what` names it in the refusal when it runs past the end.
  absl::StatusOr<std::string> Next(const std::string& what) {
    if (bytes_ - position_ < 4) return absl::DataLossError(absl::StrCat("the strings end before ", what));
    const uint32_t length = LoadLe32(strings_ + position_);
    if (static_cast<int64_t>(length) > bytes_ - position_ - 4) {
      return absl::DataLossError(absl::StrCat(what, " (", length, " bytes) runs past the end of the strings"));
    }
    std::string s(reinterpret_cast<const char*>(strings_ + position_ + 4), length);
    position_ += 4 + static_cast<int64_t>(length);
    return s;
  }

 private:
  const uint8_t* strings_;
  int64_t bytes_;
  int64_t position_ = 0;
};

}  // namespace

absl::StatusOr<std::unique_ptr<PackedImages>> PackedImages::Open(const std::string& path) {
  // O_NONBLOCK: a FIFO is refused below instead of waiting for a writer.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return FileError(path, "cannot open the packed image set", errno);
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return absl::InvalidArgumentError(absl::StrCat(path,
                                                   ": not a regular file; give a packed image set ("
                                                   "gantry-worker make-dataset --out)"));
  }
  if (st.st_size == 0) {
    ::close(fd);
    return Refuse(path, absl::DataLossError("the file is empty"));
  }
  void* map = ::mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
  const int mmap_error = errno;
  ::close(fd);
  if (map == MAP_FAILED) return FileError(path, "cannot map the packed image set", mmap_error);
  std::unique_ptr<PackedImages> images(new PackedImages());
  images->path_ = path;
  images->map_ = static_cast<const uint8_t*>(map);
  images->map_bytes_ = static_cast<size_t>(st.st_size);
  if (absl::Status verified = images->Verify(); !verified.ok()) return Refuse(path, verified);
  return images;
}

PackedImages::~PackedImages() {
  if (map_ != nullptr) ::munmap(const_cast<uint8_t*>(map_), map_bytes_);
}

absl::Status PackedImages::Verify() {
  ::madvise(const_cast<uint8_t*>(map_), map_bytes_, MADV_SEQUENTIAL);
  const absl::string_view start(reinterpret_cast<const char*>(map_), std::min<size_t>(map_bytes_, kPackedHeaderBytes));
  absl::StatusOr<PackedHeader> decoded = DecodePackedHeader(start, static_cast<int64_t>(map_bytes_));
  if (!decoded.ok()) return decoded.status();
  const PackedHeader& h = *decoded;
  info_.image_size = h.image_size;
  info_.channels = h.channels;
  info_.count = h.count;
  record_bytes_ = h.channels * h.image_size * h.image_size;
  record_stride_ = h.record_stride;
  records_offset_ = h.records_offset;
  index_offset_ = h.index_offset;
  strings_offset_ = h.strings_offset;
  if (PackedCrc(map_ + h.index_offset, static_cast<size_t>(h.file_bytes - h.index_offset)) != h.trailer_crc) {
    return absl::DataLossError("the CRC of the index and strings does not match: they are damaged");
  }

  // The index and strings: sources in order, labels in range, then settings and classes.
  StringCursor strings(map_ + h.strings_offset, h.strings_bytes);
  for (int64_t i = 0; i < h.count; ++i) {
    const uint8_t* entry = map_ + h.index_offset + i * kPackedIndexEntryBytes;
    const auto label = static_cast<int32_t>(LoadLe32(entry + 4));
    if (h.class_count == 0 ? label != -1 : (label < 0 || label >= h.class_count)) {
      return absl::DataLossError(
          absl::StrCat("record ", i, " has label ", label, ", outside ",
                       h.class_count == 0 ? "-1 (unlabelled)" : absl::StrCat("0..", h.class_count - 1)));
    }
    if (LoadLe64(entry + 8) != static_cast<uint64_t>(strings.position())) {
      return absl::DataLossError(absl::StrCat("record ", i, "'s source is not where the strings place it"));
    }
    absl::StatusOr<std::string> source = strings.Next(absl::StrCat("record ", i, "'s source"));
    if (!source.ok()) return source.status();
  }
  for (std::string* setting : {&info_.fit, &info_.alpha, &info_.filter}) {
    absl::StatusOr<std::string> s = strings.Next("the settings");
    if (!s.ok()) return s.status();
    *setting = *std::move(s);
  }
  for (int64_t k = 0; k < h.class_count; ++k) {
    absl::StatusOr<std::string> name = strings.Next(absl::StrCat("class name ", k));
    if (!name.ok()) return name.status();
    info_.class_names.push_back(*std::move(name));
  }
  if (strings.position() != h.strings_bytes) {
    return absl::DataLossError(absl::StrCat(h.strings_bytes - strings.position(), " bytes after the last class name"));
  }
  if (absl::Status settings = CheckPackedSettings(info_); !settings.ok()) return settings;

  // Every record against its CRC, and the padding after it.
  for (int64_t i = 0; i < h.count; ++i) {
    const uint8_t* rec = record(i);
    const uint32_t expected = LoadLe32(map_ + h.index_offset + i * kPackedIndexEntryBytes);
    const bool padded_with_zeros =
        std::all_of(rec + record_bytes_, rec + record_stride_, [](uint8_t b) { return b == 0; });
    if (PackedCrc(rec, static_cast<size_t>(record_bytes_)) != expected || !padded_with_zeros) {
      return absl::DataLossError(absl::StrCat(
          "record ", i, " (from ", EscapeForTerminal(source(i)),
          ") is damaged: ", padded_with_zeros ? "its CRC does not match" : "the padding after it is not zero"));
    }
  }
  ::madvise(const_cast<uint8_t*>(map_), map_bytes_, MADV_NORMAL);
  return absl::OkStatus();
}

const uint8_t* PackedImages::record(int64_t i) const { return map_ + records_offset_ + i * record_stride_; }

int PackedImages::label(int64_t i) const {
  return static_cast<int32_t>(LoadLe32(map_ + index_offset_ + i * kPackedIndexEntryBytes + 4));
}

std::string PackedImages::source(int64_t i) const {
  const uint64_t at = LoadLe64(map_ + index_offset_ + i * kPackedIndexEntryBytes + 8);
  const uint8_t* p = map_ + strings_offset_ + at;
  return std::string(reinterpret_cast<const char*>(p + 4), LoadLe32(p));
}

}  // namespace gantry
