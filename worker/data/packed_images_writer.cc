#include "worker/data/packed_images_writer.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "common/file_io.h"
#include "common/status_macros.h"

namespace gantry {

// A file written through a buffer (so a record is not a system call), read back whole
// when it is a scratch file.
class PackedImagesWriter::Output {
 public:
  Output(int fd, std::string name) : fd_(fd), name_(std::move(name)) {}
  ~Output() { Close(); }

  int64_t size() const { return written_ + static_cast<int64_t>(buffer_.size()); }

  absl::Status Write(const void* data, size_t n) {
    buffer_.append(static_cast<const char*>(data), n);
    return buffer_.size() >= kBufferBytes ? Flush() : absl::OkStatus();
  }

  absl::Status Flush() {
    const char* p = buffer_.data();
    size_t n = buffer_.size();
    while (n > 0) {
      const ssize_t w = ::write(fd_, p, n);
      if (w < 0 && errno == EINTR) continue;
      if (w < 0) return FileError(name_, "write failed", errno);
      p += w;
      n -= static_cast<size_t>(w);
      written_ += w;
    }
    buffer_.clear();
    return absl::OkStatus();
  }

  // Appends this file's whole contents (flushed first) to `to`, continuing `crc` over them.
  absl::Status CopyTo(Output& to, uint32_t* crc) {
    RETURN_IF_ERROR(Flush());
    std::string chunk(kBufferBytes, '\0');
    for (int64_t at = 0; at < written_;) {
      const ssize_t r = ::pread(fd_, chunk.data(), chunk.size(), at);
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) return FileError(name_, "read back failed", r < 0 ? errno : EIO);
      *crc = PackedCrc(reinterpret_cast<const uint8_t*>(chunk.data()), static_cast<size_t>(r), *crc);
      RETURN_IF_ERROR(to.Write(chunk.data(), static_cast<size_t>(r)));
      at += r;
    }
    return absl::OkStatus();
  }

  absl::Status WriteAt(int64_t offset, const std::string& bytes) {
    if (::pwrite(fd_, bytes.data(), bytes.size(), offset) != static_cast<ssize_t>(bytes.size())) {
      return FileError(name_, "write failed", errno);
    }
    return absl::OkStatus();
  }

  absl::Status SyncAndClose() {
    absl::Status status;
    if (::fsync(fd_) != 0) status = FileError(name_, "fsync failed", errno);
    if (::close(fd_) != 0 && status.ok()) status = FileError(name_, "close failed", errno);
    fd_ = -1;
    return status;
  }

  void Close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

 private:
  static constexpr size_t kBufferBytes = size_t{1} << 20;
  int fd_;
  std::string name_;
  std::string buffer_;
  int64_t written_ = 0;
};

namespace {

std::string FolderOf(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
}

// An unnamed file in `folder`, gone when closed: O_TMPFILE, or where the file system
// lacks it a named one unlinked at once.
absl::StatusOr<int> OpenScratchFile(const std::string& folder) {
  int fd = ::open(folder.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
  if (fd >= 0) return fd;
  if (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL) {
    return FileError(folder, "cannot make a scratch file in", errno);
  }
  std::string name = folder + "/.gantry-scratch-XXXXXX";
  fd = ::mkostemp(name.data(), O_CLOEXEC);
  if (fd < 0) return FileError(name, "cannot make a scratch file", errno);
  ::unlink(name.c_str());
  return fd;
}

void AppendString(absl::string_view s, std::string* out) {
  const auto length = static_cast<uint32_t>(s.size());
  out->append(reinterpret_cast<const char*>(&length), sizeof(length));
  out->append(s.data(), s.size());
}

}  // namespace

absl::StatusOr<std::unique_ptr<PackedImagesWriter>> PackedImagesWriter::Create(const std::string& path,
                                                                               const PackedImagesInfo& layout) {
  PackedImagesInfo checked = layout;
  checked.class_names.clear();
  if (absl::Status st = CheckPackedSettings(checked); !st.ok() || layout.image_size < 1) {
    return absl::InvalidArgumentError(absl::StrCat("cannot write ", path, ": ", st.message()));
  }
  struct stat st {};
  if (::lstat(path.c_str(), &st) == 0) return absl::AlreadyExistsError(absl::StrCat(path, ": exists; left as it is"));
  static std::atomic<uint64_t> counter{0};
  std::unique_ptr<PackedImagesWriter> writer(new PackedImagesWriter());
  writer->path_ = path;
  writer->tmp_path_ = absl::StrCat(path, ".tmp.", ::getpid(), ".", counter.fetch_add(1));
  writer->layout_ = checked;
  writer->record_bytes_ = layout.channels * layout.image_size * layout.image_size;
  writer->record_stride_ = PackedRecordStride(layout.image_size, layout.channels);
  const int fd = ::open(writer->tmp_path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) return FileError(writer->tmp_path_, "cannot create", errno);
  writer->file_ = std::make_unique<Output>(fd, writer->tmp_path_);
  if (::fstat(fd, &st) == 0) {
    writer->device_ = st.st_dev;
    writer->inode_ = st.st_ino;
  }
  for (std::unique_ptr<Output>* scratch : {&writer->index_, &writer->sources_}) {
    absl::StatusOr<int> scratch_fd = OpenScratchFile(FolderOf(path));
    if (!scratch_fd.ok()) return scratch_fd.status();  // the destructor removes the temporary file
    *scratch = std::make_unique<Output>(*scratch_fd, absl::StrCat(writer->tmp_path_, " (scratch)"));
  }
  // The header's place; written last, when its numbers are known.
  RETURN_IF_ERROR(writer->file_->Write(std::string(kPackedHeaderBytes, '\0').data(), kPackedHeaderBytes));
  return writer;
}

PackedImagesWriter::~PackedImagesWriter() { Abandon(); }

void PackedImagesWriter::Abandon() {
  if (published_ || file_ == nullptr) return;
  file_->Close();
  ::unlink(tmp_path_.c_str());
  file_.reset();
  index_.reset();
  sources_.reset();
}

int64_t PackedImagesWriter::record_bytes_written() const { return kPackedHeaderBytes + count_ * record_stride_; }

bool PackedImagesWriter::IsTemporaryFile(dev_t device, ino_t inode) const {
  return file_ != nullptr && device == device_ && inode == inode_;
}

absl::Status PackedImagesWriter::Append(std::span<const uint8_t> record, int label, absl::string_view source) {
  if (file_ == nullptr)
    return absl::FailedPreconditionError(absl::StrCat(tmp_path_, ": already finished or abandoned"));
  if (static_cast<int64_t>(record.size()) != record_bytes_ || label < -1 || source.size() > UINT32_MAX) {
    return absl::InvalidArgumentError(absl::StrCat("record ", count_, " for ", path_, ": ", record.size(),
                                                   " bytes (expected ", record_bytes_, "), label ", label));
  }
  RETURN_IF_ERROR(file_->Write(record.data(), record.size()));
  const std::string padding(static_cast<size_t>(record_stride_ - record_bytes_), '\0');
  RETURN_IF_ERROR(file_->Write(padding.data(), padding.size()));
  std::string entry;
  const uint32_t crc = PackedCrc(record.data(), record.size());
  const auto source_offset = static_cast<uint64_t>(sources_->size());
  entry.append(reinterpret_cast<const char*>(&crc), 4);
  entry.append(reinterpret_cast<const char*>(&label), 4);
  entry.append(reinterpret_cast<const char*>(&source_offset), 8);
  RETURN_IF_ERROR(index_->Write(entry.data(), entry.size()));
  std::string text;
  AppendString(source, &text);
  RETURN_IF_ERROR(sources_->Write(text.data(), text.size()));
  ++count_;
  max_label_ = std::max(max_label_, label);
  any_unlabelled_ = any_unlabelled_ || label == -1;
  return absl::OkStatus();
}

absl::Status PackedImagesWriter::Finish(const std::vector<std::string>& class_names) {
  if (file_ == nullptr)
    return absl::FailedPreconditionError(absl::StrCat(tmp_path_, ": already finished or abandoned"));
  absl::Status status = FinishFile(class_names);
  if (!status.ok()) Abandon();
  return status;
}

absl::Status PackedImagesWriter::FinishFile(const std::vector<std::string>& class_names) {
  const bool labelled = !class_names.empty();
  if (count_ == 0 || (labelled && (any_unlabelled_ || max_label_ >= static_cast<int>(class_names.size()))) ||
      (!labelled && max_label_ >= 0)) {
    return absl::InvalidArgumentError(absl::StrCat(path_, ": ", count_, " records with labels up to ", max_label_,
                                                   " cannot be written with ", class_names.size(), " class names"));
  }
  PackedImagesInfo info = layout_;
  info.class_names = class_names;
  RETURN_IF_ERROR(CheckPackedSettings(info));

  PackedHeader h;
  h.image_size = layout_.image_size;
  h.channels = layout_.channels;
  h.count = count_;
  h.record_stride = record_stride_;
  h.records_offset = kPackedHeaderBytes;
  h.index_offset = file_->size();
  h.index_bytes = index_->size();
  h.strings_offset = h.index_offset + h.index_bytes;
  h.class_count = static_cast<int64_t>(class_names.size());
  uint32_t crc = 0;
  RETURN_IF_ERROR(index_->CopyTo(*file_, &crc));
  RETURN_IF_ERROR(sources_->CopyTo(*file_, &crc));
  std::string tail;
  for (const std::string* s : {&layout_.fit, &layout_.alpha, &layout_.filter}) AppendString(*s, &tail);
  for (const std::string& name : class_names) AppendString(name, &tail);
  crc = PackedCrc(reinterpret_cast<const uint8_t*>(tail.data()), tail.size(), crc);
  RETURN_IF_ERROR(file_->Write(tail.data(), tail.size()));
  RETURN_IF_ERROR(file_->Flush());
  h.file_bytes = file_->size();
  h.strings_bytes = h.file_bytes - h.strings_offset;
  h.trailer_crc = crc;
  RETURN_IF_ERROR(file_->WriteAt(0, EncodePackedHeader(h)));
  RETURN_IF_ERROR(file_->SyncAndClose());
  RETURN_IF_ERROR(PublishWithoutReplacing(tmp_path_, path_));
  published_ = true;
  file_.reset();
  index_.reset();
  sources_.reset();
  return absl::OkStatus();
}

}  // namespace gantry
