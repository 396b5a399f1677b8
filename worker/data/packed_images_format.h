// The byte layout of a packed image set (gantry-worker make-dataset's output, read by
// packed_images.h): one file, fixed-size records a reader addresses by index, nothing to
// decode.
//
// All integers little-endian. Offsets are from the start of the file.
//
//   header, 128 bytes at offset 0:
//     0   8  magic "GANTRYPK"
//     8   4  u32 version, kPackedImagesVersion (1)
//    12   4  u32 header bytes, 128
//    16   8  u64 image size N (kMinFitSize..kMaxFitSize: 8..1024)
//    24   8  u64 channels C stored: 1 (luma), 3 (RGB), 2 or 4 (the same plus alpha: alpha "keep")
//    32   8  u64 count: records (>= 1)
//    40   8  u64 record stride: C*N*N rounded up to a multiple of 64
//    48   8  u64 records offset: 128
//    56   8  u64 index offset: records offset + count * stride
//    64   8  u64 index bytes: count * 16
//    72   8  u64 strings offset: index offset + index bytes
//    80   8  u64 strings bytes
//    88   8  u64 class count K (0: unlabelled)
//    96   8  u64 file bytes: strings offset + strings bytes, the whole file
//   104   4  u32 CRC-32 of the index and the strings (bytes [index offset, file bytes))
//   108  16  zero
//   124   4  u32 CRC-32 of header bytes [0, 124)
//   records, count of them at records offset + i * stride: C planes of N rows of N bytes
//     (CHW, row-major: channel c, row y, column x at c*N*N + y*N + x), then zero bytes
//     to the stride. Every record starts 64-byte aligned, so an mmap of the file is a
//     ready array of rows to convert to floats.
//   index, one 16-byte entry per record:
//     0  4  u32 CRC-32 of the record's C*N*N bytes
//     4  4  i32 label: 0..K-1, or -1 when K is 0
//     8  8  u64 offset of the record's source path in the strings (from strings offset)
//   strings, each a u32 length then that many bytes (not NUL-terminated, any bytes: a
//     file name need not be UTF-8), in this order: the count records' source paths
//     (relative to the packed folder, '/'-separated), then the settings fit ("crop",
//     "pad", "stretch"), alpha ("white", "black", "keep") and filter ("catmull-rom"),
//     then the K class names (label i names class i; distinct, non-empty).
//
// CRC-32 is zlib's crc32 (ISO-HDLC, polynomial 0x04C11DB7 reflected, as gzip and PNG).
// The layout is canonical: for given records, labels, sources and settings there is
// exactly one valid file (the reader refuses anything else: bytes beyond the strings, a
// source out of order, padding that is not zero), so rewriting an opened file gives the
// same bytes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace gantry {

inline constexpr char kPackedImagesMagic[8] = {'G', 'A', 'N', 'T', 'R', 'Y', 'P', 'K'};
inline constexpr uint32_t kPackedImagesVersion = 1;
inline constexpr int64_t kPackedHeaderBytes = 128;
inline constexpr int64_t kPackedIndexEntryBytes = 16;
inline constexpr int64_t kPackedRecordAlignment = 64;
// What the refusals of a damaged or foreign file tell the user to do.
inline constexpr char kRemakePackedImages[] = "remake it with gantry-worker make-dataset";

// What a packed image set holds besides its records (PackedImages::info()).
struct PackedImagesInfo {
  int64_t image_size = 0;  // N
  int64_t channels = 0;    // C stored: 1, 3, or 2 and 4 with alpha kept
  int64_t count = 0;
  std::vector<std::string> class_names;  // empty: unlabelled
  std::string fit, alpha, filter;        // the settings it was made with
};

// OK when info's settings are known names (image_fit.h, image_resample.h), its channels
// go with its alpha (1 or 3; 2 or 4 with keep) and its class names are distinct and
// non-empty; else DATA_LOSS saying which is not.
absl::Status CheckPackedSettings(const PackedImagesInfo& info);

// The header's fields (the derived ones are checked against the others on decode).
struct PackedHeader {
  int64_t image_size = 0;
  int64_t channels = 0;
  int64_t count = 0;
  int64_t record_stride = 0;
  int64_t records_offset = 0;
  int64_t index_offset = 0;
  int64_t index_bytes = 0;
  int64_t strings_offset = 0;
  int64_t strings_bytes = 0;
  int64_t class_count = 0;
  int64_t file_bytes = 0;
  uint32_t trailer_crc = 0;
};

// C*N*N rounded up to the alignment.
int64_t PackedRecordStride(int64_t image_size, int64_t channels);

// The header's 128 bytes (with its CRC).
std::string EncodePackedHeader(const PackedHeader& header);

// The header of a file of `file_bytes` bytes starting with `bytes` (at least 128 of
// them), checked: magic, version, its CRC, every size in range and every offset
// adding up (overflow-safe), and the file as long as the header says. The refusal
// (INVALID_ARGUMENT for a foreign file or version, DATA_LOSS for damage) says what is
// wrong, without the path.
absl::StatusOr<PackedHeader> DecodePackedHeader(absl::string_view bytes, int64_t file_bytes);

// zlib's CRC-32 of `n` bytes at `bytes`, continuing from `crc` (0 to start); any size.
uint32_t PackedCrc(const uint8_t* bytes, size_t n, uint32_t crc = 0);

// Little-endian integers at `p` (the host is little-endian: byte_codec.h checks it).
uint32_t LoadLe32(const uint8_t* p);
uint64_t LoadLe64(const uint8_t* p);

}  // namespace gantry
