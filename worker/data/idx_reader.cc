#include "worker/data/idx_reader.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/file_io.h"
#include "common/status_macros.h"

namespace gantry {
namespace {

constexpr uint32_t kLabelsMagic = 0x00000801;  // unsigned bytes, 1 dimension
constexpr uint32_t kImagesMagic = 0x00000803;  // unsigned bytes, 3 dimensions
// Far above any MNIST-like file (47 MB); a gzip stream that inflates past this is
// taken as corrupt rather than allowed to exhaust memory.
constexpr size_t kMaxInflatedBytes = size_t{4} << 30;
// zlib counts in uInt; feeding it bounded chunks keeps every count in range.
constexpr size_t kZlibChunk = size_t{1} << 30;

absl::Status CorruptGzip(const std::string& path, const std::string& why) {
  return absl::DataLossError(absl::StrCat(path, ": corrupt gzip stream (", why,
                                          "); fetch the file again or check it with `gzip -t`"));
}

// The gzip trailer's ISIZE (inflated size mod 2^32, of the last member) sizes the output
// buffer in one go. It is only a hint: a truncated file's "trailer" is arbitrary data,
// so it is capped at a generous ratio and the buffer still grows when it falls short.
size_t InflatedSizeHint(const std::vector<uint8_t>& in) {
  size_t isize = 0;
  if (in.size() >= 18) {
    const uint8_t* t = in.data() + in.size() - 4;
    isize = size_t{t[0]} | (size_t{t[1]} << 8) | (size_t{t[2]} << 16) | (size_t{t[3]} << 24);
  }
  // The slack lets inflate reach the end marker without a regrow when ISIZE is exact.
  return std::clamp<size_t>(std::min(isize, in.size() * 64) + 64, 1 << 12, kMaxInflatedBytes);
}

// Inflates a whole gzip file; concatenated gzip members (as `cat a.gz b.gz` makes) are
// one stream, as gunzip treats them.
absl::StatusOr<std::vector<uint8_t>> Gunzip(const std::string& path, const std::vector<uint8_t>& in) {
  z_stream zs{};
  if (inflateInit2(&zs, 15 + 16) != Z_OK) {
    return absl::InternalError(absl::StrCat(path, ": zlib inflateInit2 failed"));
  }
  struct InflateEnd {
    z_stream* zs;
    ~InflateEnd() { inflateEnd(zs); }
  } end_on_return{&zs};

  std::vector<uint8_t> out(InflatedSizeHint(in));
  size_t in_pos = 0;
  size_t out_pos = 0;
  for (;;) {
    if (out_pos == out.size()) {
      if (out.size() >= kMaxInflatedBytes) {
        return CorruptGzip(path, absl::StrCat("inflates to more than ", kMaxInflatedBytes >> 30, " GiB"));
      }
      out.resize(std::min(out.size() * 2, kMaxInflatedBytes));
    }
    zs.next_in = const_cast<Bytef*>(in.data() + in_pos);
    zs.avail_in = static_cast<uInt>(std::min(in.size() - in_pos, kZlibChunk));
    zs.next_out = out.data() + out_pos;
    zs.avail_out = static_cast<uInt>(std::min(out.size() - out_pos, kZlibChunk));
    const uInt in_offered = zs.avail_in;
    const uInt out_offered = zs.avail_out;
    const int ret = inflate(&zs, Z_NO_FLUSH);
    in_pos += in_offered - zs.avail_in;
    out_pos += out_offered - zs.avail_out;

    if (ret == Z_STREAM_END) {
      if (in_pos == in.size()) break;
      if (in.size() - in_pos >= 2 && in[in_pos] == 0x1f && in[in_pos + 1] == 0x8b) {
        inflateReset(&zs);
        continue;
      }
      return CorruptGzip(path,
                         absl::StrCat(in.size() - in_pos, " bytes of garbage after the end of the stream"));
    }
    if (ret == Z_DATA_ERROR) return CorruptGzip(path, zs.msg != nullptr ? zs.msg : "invalid deflate data");
    if (ret == Z_NEED_DICT) return CorruptGzip(path, "asks for a preset dictionary");
    if (ret == Z_MEM_ERROR) {
      return absl::ResourceExhaustedError(absl::StrCat(path, ": out of memory inflating"));
    }
    // Z_OK or Z_BUF_ERROR: inflate stopped because input or output ran out. Output room
    // left over with all input consumed means the stream ended early.
    if (zs.avail_out > 0 && in_pos == in.size()) {
      return CorruptGzip(path, absl::StrCat("truncated: the stream stops after ", in.size(),
                                            " bytes, before its end marker"));
    }
    if (in_offered == zs.avail_in && out_offered == zs.avail_out && zs.avail_out > 0) {
      return CorruptGzip(path, "inflate made no progress");
    }
  }
  out.resize(out_pos);
  return out;
}

absl::StatusOr<std::vector<uint8_t>> ReadMaybeGzipped(const std::string& path) {
  ASSIGN_OR_RETURN(std::vector<uint8_t> bytes, ReadFileBytes(path));
  if (bytes.size() >= 2 && bytes[0] == 0x1f && bytes[1] == 0x8b) return Gunzip(path, bytes);
  return bytes;
}

uint32_t BigEndian32(const uint8_t* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | uint32_t{p[3]};
}

absl::Status CheckMagic(const std::string& path, const std::vector<uint8_t>& bytes, uint32_t expected) {
  if (bytes.size() < 4) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": truncated: only ", bytes.size(), " bytes, too short for an IDX header"));
  }
  const uint32_t magic = BigEndian32(bytes.data());
  if (magic == expected) return absl::OkStatus();
  const char* hint = "not an IDX file, or not gzip";
  if (expected == kImagesMagic && magic == kLabelsMagic) hint = "is this a labels file?";
  if (expected == kLabelsMagic && magic == kImagesMagic) hint = "is this an images file?";
  return absl::InvalidArgumentError(
      absl::StrCat(path, ": bad magic ", magic, ", expected ", expected, " (", hint, ")"));
}

// Reads the `rank` big-endian dimensions after the magic. Each must be in [1, max[i]].
absl::StatusOr<std::vector<int64_t>> ReadDims(const std::string& path, const std::vector<uint8_t>& bytes,
                                              const std::vector<int64_t>& max, const char* what) {
  const size_t header = 4 + 4 * max.size();
  if (bytes.size() < header) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": truncated: only ", bytes.size(),
                                                   " bytes, but an IDX ", what, " header is ", header,
                                                   " bytes"));
  }
  std::vector<int64_t> dims;
  bool sane = true;
  for (size_t i = 0; i < max.size(); ++i) {
    dims.push_back(BigEndian32(bytes.data() + 4 + 4 * i));
    sane = sane && dims.back() >= 1 && dims.back() <= max[i];
  }
  if (!sane) {
    std::string shown = absl::StrCat(dims[0]);
    for (size_t i = 1; i < dims.size(); ++i) absl::StrAppend(&shown, "x", dims[i]);
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": bad dimensions ", shown, " in the IDX header (every dimension must be nonzero",
                     dims.size() > 1 ? absl::StrCat("; rows and cols at most ", kMaxIdxSide) : "", ")"));
  }
  return dims;
}

// Checks that exactly `payload` bytes follow the header, then strips the header in place.
absl::Status TakePayload(const std::string& path, std::vector<uint8_t>& bytes, size_t header, int64_t payload,
                         const std::string& described) {
  const int64_t follow = static_cast<int64_t>(bytes.size() - header);
  if (follow < payload) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": truncated: header says ", described, " (",
                                                   payload, " bytes) but only ", follow, " bytes follow"));
  }
  if (follow > payload) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": ", follow - payload, " trailing bytes: header says ", described, " (", payload,
                     " bytes) but ", follow, " bytes follow (a wrong header, or files run together?)"));
  }
  bytes.erase(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(header));
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<IdxImages> ReadIdxImages(const std::string& path) {
  ASSIGN_OR_RETURN(std::vector<uint8_t> bytes, ReadMaybeGzipped(path));
  RETURN_IF_ERROR(CheckMagic(path, bytes, kImagesMagic));
  ASSIGN_OR_RETURN(const std::vector<int64_t> dims,
                   ReadDims(path, bytes, {int64_t{INT32_MAX}, kMaxIdxSide, kMaxIdxSide}, "images"));
  IdxImages images;
  images.count = dims[0];
  images.rows = dims[1];
  images.cols = dims[2];
  RETURN_IF_ERROR(TakePayload(path, bytes, 16, images.count * images.rows * images.cols,
                              absl::StrCat(images.count, " images of ", images.rows, "x", images.cols)));
  images.pixels = std::move(bytes);
  return images;
}

absl::StatusOr<std::vector<uint8_t>> ReadIdxLabels(const std::string& path) {
  ASSIGN_OR_RETURN(std::vector<uint8_t> bytes, ReadMaybeGzipped(path));
  RETURN_IF_ERROR(CheckMagic(path, bytes, kLabelsMagic));
  ASSIGN_OR_RETURN(const std::vector<int64_t> dims, ReadDims(path, bytes, {int64_t{INT32_MAX}}, "labels"));
  RETURN_IF_ERROR(TakePayload(path, bytes, 8, dims[0], absl::StrCat(dims[0], " labels")));
  return bytes;
}

}  // namespace gantry
