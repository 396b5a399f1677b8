// The packed image set behind a run's --data-dir (--dataset images): the file itself when
// it is one (made by gantry-worker make-dataset), or for a folder of images its pack in a
// cache beside the runs, made on first use and reused while nothing in the folder
// changed.
//
// The cache is the folder CACHE_DIR (RUNS/.image-cache for runs in RUNS); a folder's pack
// is CACHE_DIR/NAME-SIZEpx-Cc-KEY.pack, NAME the folder's own name and KEY the first 16
// hex digits of ImageFolderKey (every file's relative path, size and modification time,
// and the pack settings): a changed file, a new or a removed one gives another key. A
// pack of the same folder and settings under an older key is then out of date: it is
// removed once the new one is in place (the cache holds only files gantry made). A
// change that keeps a file's size and modification time is not seen (as make and rsync
// do not see it); touch the file, or remove the cache file, to pack again.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "worker/data/pack_image_folder.h"

namespace gantry {

// The cache folder for runs written into the folder that holds `run_folder`.
std::string ImageCacheDirFor(const std::string& run_folder);

// Where the pack of `request.from` with `request`'s settings lives in `cache_dir` (see
// above); reads the folder's file list (stat only).
absl::StatusOr<std::string> CachedPackPath(const PackRequest& request, const std::string& cache_dir);

// The path of a verified pack of `request.from` in `cache_dir`, packing the folder first
// when the cache lacks it (progress and the per-file report in the log, saying why it
// packs: first use, or the folder changed since PATH was packed). A cached file that
// fails to open (damaged) is said, removed and packed again. Runs on one rank; the others
// open the path it returns.
absl::StatusOr<std::string> EnsureFolderPacked(const PackRequest& request, const std::string& cache_dir);

}  // namespace gantry
