// Where a dataset's judge (judge.h) is cached, and its file format.
//
// `gantry-worker train-judge` saves the judge next to the data, as
// DATA_DIR/gantry-judge-DATASET.bin, or, when that folder may not be written (not
// writable, no write bit at all, or under /usr like Debian's
// /usr/share/datasets/fashion-mnist), in the user's cache folder,
// $XDG_CACHE_HOME/gantry (else ~/.cache/gantry), as judge-DATASET-HASH.bin, HASH being
// the CRC-32C of the data folder's absolute path. A run looks in both places, in that
// order.
//
// File: "GANTRYJG", a u32 version, then (byte_codec) the judge:
//   version 1, the 1x28x28, 10-class judge (MNIST, Fashion-MNIST; what every judge was
//   before shapes existed, so existing files load and new ones of that shape are the
//   same bytes): the dataset name, the test accuracy, the parameters (floats), the test
//   features' size, count, mean and covariance;
//   version 2, any other shape: its channels, side and classes (i64 each), then the same.
// Last, a u32 CRC-32C of everything before it.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "worker/eval/judge.h"

namespace gantry {

// The places a judge of `dataset` with data in `data_dir` may be cached, in lookup order.
std::vector<std::string> JudgePaths(const std::string& dataset, const std::string& data_dir);

// The user's cache folder for judges: $XDG_CACHE_HOME/gantry, else $HOME/.cache/gantry.
std::string JudgeCacheDir();

// Version 1 for the 1x28x28, 10-class judge, version 2 for any other shape.
std::vector<uint8_t> EncodeJudge(const Judge& judge);
// DATA_LOSS naming `name` for a damaged file (or a shape no judge has),
// FAILED_PRECONDITION for another version.
absl::StatusOr<std::unique_ptr<Judge>> DecodeJudge(std::span<const uint8_t> bytes, const std::string& name);

// Saves at the first of JudgePaths whose folder can be written (creating the cache
// folder); returns the path, or an error naming both places.
absl::StatusOr<std::string> SaveJudge(const Judge& judge, const std::string& data_dir);

// The first judge found for (dataset, data_dir), with its path; NOT_FOUND saying the
// command that makes one when there is none; FAILED_PRECONDITION naming both shapes when
// the judge found was trained on images of another shape or another number of classes
// than `shape` (the run's).
absl::StatusOr<std::pair<std::unique_ptr<Judge>, std::string>> FindJudge(const std::string& dataset,
                                                                         const std::string& data_dir,
                                                                         const JudgeShape& shape);

}  // namespace gantry
