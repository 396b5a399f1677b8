#include "worker/data/idx_reader.h"

#include <algorithm>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/status_macros.h"

namespace gantry {
namespace {

constexpr uint32_t kLabelsMagic = 0x00000801;  // unsigned bytes, 1 dimension
constexpr uint32_t kImagesMagic = 0x00000803;  // unsigned bytes, 3 dimensions
// The payload of a gzipped file grows by at least this much at a time (MNIST's images
// fit in one step); it never grows past what the header promised.
constexpr int64_t kGrowStep = int64_t{64} << 20;

uint32_t BigEndian32(const uint8_t* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | uint32_t{p[3]};
}

// Appends up to `n` bytes of the header to `into` (fewer at the end of the file).
absl::StatusOr<size_t> ReadHeaderBytes(FileStream& stream, std::vector<uint8_t>& into, size_t n) {
  const size_t at = into.size();
  into.resize(at + n);
  ASSIGN_OR_RETURN(const size_t got, stream.Read(into.data() + at, n));
  into.resize(at + got);
  return got;
}

// A damaged gzip stream can inflate to anything before its checksum (at its end) gives it
// away, and the reader stops at what the header promised: for a gzip file the messages
// about the contents name that cause too.
constexpr char kGzipDamage[] = ", or a damaged gzip stream";

absl::Status CheckMagic(const std::string& path, const std::vector<uint8_t>& bytes, uint32_t expected, bool gzipped) {
  if (bytes.size() < 4) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": truncated: only ", bytes.size(), " bytes, too short for an IDX header"));
  }
  const uint32_t magic = BigEndian32(bytes.data());
  if (magic == expected) return absl::OkStatus();
  std::string hint = gzipped ? absl::StrCat("not an IDX file", kGzipDamage) : "not an IDX file, or not gzip";
  if (expected == kImagesMagic && magic == kLabelsMagic) hint = "is this a labels file?";
  if (expected == kLabelsMagic && magic == kImagesMagic) hint = "is this an images file?";
  return absl::InvalidArgumentError(
      absl::StrCat(path, ": bad magic ", magic, ", expected ", expected, " (", hint, ")"));
}

// The dimensions after the magic; each must be in [1, max[i]]. The message says which
// bound a bad dimension breaks.
absl::StatusOr<std::vector<int64_t>> ParseDims(const std::string& path, const std::vector<uint8_t>& header,
                                               const std::vector<int64_t>& max, bool gzipped) {
  std::vector<int64_t> dims;
  for (size_t i = 0; i < max.size(); ++i) dims.push_back(BigEndian32(header.data() + 4 + 4 * i));
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] >= 1 && dims[i] <= max[i]) continue;
    std::string why;
    if (dims[i] == 0) {
      why = "every dimension must be nonzero";
    } else if (i == 0) {
      why = absl::StrCat("the count ", dims[i], " is more than ", max[i]);
    } else {
      why = absl::StrCat("rows and cols at most ", kMaxIdxSide);
    }
    return absl::InvalidArgumentError(absl::StrCat(path, ": bad dimensions ", absl::StrJoin(dims, "x"),
                                                   " in the IDX header (", why, gzipped ? kGzipDamage : "", ")"));
  }
  return dims;
}

std::string Describe(const std::vector<int64_t>& dims) {
  if (dims.size() == 1) return absl::StrCat(dims[0], " labels");
  return absl::StrCat(dims[0], " images of ", dims[1], "x", dims[2]);
}

absl::Status Truncated(const std::string& path, const std::string& described, int64_t payload, int64_t follow) {
  return absl::InvalidArgumentError(absl::StrCat(path, ": truncated: header says ", described, " (", payload,
                                                 " bytes) but only ", follow, " bytes follow"));
}

}  // namespace

absl::StatusOr<IdxFile> IdxFile::Open(const std::string& path, uint32_t magic, const std::vector<int64_t>& max) {
  IdxFile file;
  ASSIGN_OR_RETURN(file.stream_, FileStream::Open(path));
  std::vector<uint8_t> header;
  RETURN_IF_ERROR(ReadHeaderBytes(*file.stream_, header, 4).status());
  const bool gzipped = file.stream_->gzipped();
  RETURN_IF_ERROR(CheckMagic(path, header, magic, gzipped));
  file.header_bytes_ = static_cast<int64_t>(4 + 4 * max.size());
  RETURN_IF_ERROR(ReadHeaderBytes(*file.stream_, header, 4 * max.size()).status());
  if (static_cast<int64_t>(header.size()) < file.header_bytes_) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": truncated: only ", header.size(), " bytes, but an IDX ",
                                                   max.size() == 1 ? "labels" : "images", " header is ",
                                                   file.header_bytes_, " bytes"));
  }
  ASSIGN_OR_RETURN(file.dims_, ParseDims(path, header, max, gzipped));
  file.described_ = Describe(file.dims_);
  int64_t payload = 1;  // at most 2^31 * 4096 * 4096 = 2^55: no overflow
  for (int64_t d : file.dims_) payload *= d;
  file.payload_bytes_ = payload;
  if (payload > kMaxIdxPayloadBytes) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": header says ", file.described_, " (", payload,
                                                   " bytes), more than the ", kMaxIdxPayloadBytes,
                                                   " bytes gantry reads from one IDX file (a damaged header?)"));
  }
  if (!gzipped) {
    // A raw file's size says at once whether the payload is all there.
    const int64_t follow = file.stream_->file_bytes() - file.header_bytes_;
    if (follow < payload) return Truncated(path, file.described_, payload, follow);
    if (follow > payload) {
      return absl::InvalidArgumentError(absl::StrCat(
          path, ": ", follow - payload, " trailing bytes: header says ", file.described_, " (", payload,
          " bytes) but ", follow, " bytes follow (a wrong header, or files run together?)"));
    }
  }
  return file;
}

absl::StatusOr<IdxFile> IdxFile::OpenImages(const std::string& path) {
  return Open(path, kImagesMagic, {int64_t{INT32_MAX}, kMaxIdxSide, kMaxIdxSide});
}

absl::StatusOr<IdxFile> IdxFile::OpenLabels(const std::string& path) {
  return Open(path, kLabelsMagic, {int64_t{INT32_MAX}});
}

absl::StatusOr<std::vector<uint8_t>> IdxFile::ReadPayload() {
  std::vector<uint8_t> bytes;
  // A raw file's size was checked against the header; a gzip stream's inflated size is
  // unknown, so its buffer grows with what actually arrives.
  bytes.resize(static_cast<size_t>(stream_->gzipped() ? std::min(payload_bytes_, kGrowStep) : payload_bytes_));
  size_t got = 0;
  while (got < static_cast<size_t>(payload_bytes_)) {
    if (got == bytes.size()) {
      bytes.resize(static_cast<size_t>(std::min(payload_bytes_, 2 * static_cast<int64_t>(bytes.size()))));
    }
    ASSIGN_OR_RETURN(const size_t n, stream_->Read(bytes.data() + got, bytes.size() - got));
    if (n == 0) break;
    got += n;
  }
  if (got < static_cast<size_t>(payload_bytes_)) {
    return Truncated(path(), described_, payload_bytes_, static_cast<int64_t>(got));
  }
  uint8_t extra = 0;
  ASSIGN_OR_RETURN(const size_t more, stream_->Read(&extra, 1));
  if (more > 0) {
    return absl::InvalidArgumentError(absl::StrCat(path(), ": trailing bytes: header says ", described_, " (",
                                                   payload_bytes_, " bytes) but more bytes follow (a wrong header, ",
                                                   "files run together", kGzipDamage, "?)"));
  }
  return bytes;
}

absl::StatusOr<IdxImages> ReadIdxImages(const std::string& path) {
  ASSIGN_OR_RETURN(IdxFile file, IdxFile::OpenImages(path));
  IdxImages images;
  images.count = file.dims()[0];
  images.rows = file.dims()[1];
  images.cols = file.dims()[2];
  ASSIGN_OR_RETURN(images.pixels, file.ReadPayload());
  return images;
}

absl::StatusOr<std::vector<uint8_t>> ReadIdxLabels(const std::string& path) {
  ASSIGN_OR_RETURN(IdxFile file, IdxFile::OpenLabels(path));
  return file.ReadPayload();
}

}  // namespace gantry
