// Packing a folder of pictures into one packed image set (packed_images_format.h), the
// work of `gantry-worker make-dataset`, and the key of a folder for a cache of packed
// sets.
//
// The folder is walked in a fixed order (image_folder_scan.h: byte-wise, depth first,
// links followed, loops reported). Each file is read whole, decoded by its content
// (worker/formats/image_decode.h: PNG, JPEG, WebP; the header is checked against
// max_pixels and the minimum side before any pixel is decoded), fitted to N x N
// (worker/formats/image_fit.h: crop, pad or stretch with the Catmull-Rom filter; 1 or 3
// channels; alpha composited or kept) and streamed to the file, so memory holds one
// image at a time whatever the folder's size (plus the list of skipped files). Labels
// with labels "folders": the first-level sub-folder an image is in names its class;
// the classes are those sub-folders with at least one packed image, in byte-wise order,
// label i naming the i-th. Images smaller than N are scaled up (the report counts them);
// smaller than kMinImageSide on a side, they are skipped as too small.
//
// Skipped files, each with one of the reasons below, do not stop the pack unless
// `strict`: then any skip fails it (INVALID_ARGUMENT) and nothing is written, after the
// whole folder has been checked so that the report lists every bad file at once.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "worker/formats/image_fit.h"

namespace gantry {

// Why a file was skipped: the keys of PackReport::skipped_by_reason.
inline constexpr char kSkipNotAnImage[] = "not an image";        // no PNG, JPEG or WebP signature
inline constexpr char kSkipUnsupported[] = "unsupported";        // GIF, BMP, TIFF, HEIF; animated WebP, 12-bit JPEG
inline constexpr char kSkipTruncated[] = "truncated";            // the data ends inside the image
inline constexpr char kSkipCorrupt[] = "corrupt";                // the decoder found data it cannot read
inline constexpr char kSkipTooSmall[] = "too small";             // a side below kMinImageSide
inline constexpr char kSkipBomb[] = "decompression bomb";        // width x height above max_pixels
inline constexpr char kSkipTooLarge[] = "file too large";        // more bytes than any image within max_pixels
inline constexpr char kSkipUnreadable[] = "unreadable";          // permissions, a link to nothing, an I/O error
inline constexpr char kSkipLinkLoop[] = "link loop";             // a folder that is its own ancestor
inline constexpr char kSkipNotAFile[] = "not a regular file";    // a FIFO, socket or device
inline constexpr char kSkipNoClass[] = "not in a class folder";  // labels "folders": a file directly in the root

inline constexpr int64_t kMinImageSide = 8;
// The range of PackRequest::image_size (N).
inline constexpr int64_t kMinPackedImageSize = kMinFitSize;
inline constexpr int64_t kMaxPackedImageSize = kMaxFitSize;

struct PackRequest {
  std::string from, out;
  int64_t image_size = 64;
  int64_t channels = 3;
  std::string fit = "crop", alpha = "white", labels = "folders";
  int64_t max_pixels = 64 << 20;
  bool strict = false;
  // Polled before each file; when it returns true the pack stops (CANCELLED) and the
  // temporary file is removed. Empty: never.
  std::function<bool()> stop_requested;
};

struct PackReport {
  int64_t packed = 0;
  std::map<std::string /*reason*/, int64_t> skipped_by_reason;
  // Every skipped file (its path relative to `from`, raw bytes) and "reason: detail".
  std::vector<std::pair<std::string /*file*/, std::string /*reason*/>> skipped;
  int64_t files_seen = 0;  // files and problems the walk met
  int64_t upscaled = 0;    // packed images that were smaller than N x N needs
  int64_t file_bytes = 0;  // the packed set's size
  double seconds = 0;
};

// Packs request.from into request.out (see above). Progress lines every
// `progress_seconds` through spdlog (files seen, packed, skipped, images/s), and the
// report's lines at the end: every skipped file with its reason (paths escaped for the
// terminal), then the counts by reason. Refusals before anything is written:
// INVALID_ARGUMENT for a bad setting (naming its flag), a `from` that is not a folder
// (NOT_FOUND when missing) or an `out` in no folder, ALREADY_EXISTS for an `out` that
// exists (never written over); PERMISSION_DENIED naming the temporary file when `out`'s
// folder is not writable.
// INVALID_ARGUMENT after the walk for a folder with no image to pack, or a skip with
// `strict`; CANCELLED when stopped; an errno's code for a failure to write (the disk
// full), and nothing of the user's changed in any of these cases.
absl::StatusOr<PackReport> PackImageFolder(const PackRequest& request, double progress_seconds = 5);

// A key of the folder's contents and the settings, for a cache of packed folders: a
// 128-bit FNV-1a hash, as 32 hex digits, of the format version, every setting that
// changes the packed bytes (image_size, channels, fit, alpha, filter, labels,
// max_pixels), and every entry of the walk in its order: its kind, its relative path,
// and for files their size and modification time in nanoseconds. Cheap: stat only,
// nothing is read. A change of content that keeps a file's size and modification time
// (a tool that restores mtimes, a copy with -p of another file of the same size) is not
// seen; nor is a change of the decoder libraries. Errors: as PackImageFolder's refusals
// of the settings and of `from` (`out` is not looked at).
absl::StatusOr<std::string> ImageFolderKey(const PackRequest& request);

}  // namespace gantry
