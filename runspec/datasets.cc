#include "runspec/datasets.h"

#include "absl/strings/str_cat.h"

namespace gantry {

const std::vector<std::string>& DatasetNames() {
  static const auto* names = new std::vector<std::string>{"mnist", "fashion-mnist", "flow", "images"};
  return *names;
}

std::string DefaultDataDir(const std::string& dataset) {
  if (dataset == "fashion-mnist") return "/usr/share/datasets/fashion-mnist";
  return "";
}

absl::Status CheckDatasetFitsModel(const std::string& dataset, const std::string& model, const std::string& data_dir) {
  const bool flow = dataset == "flow";
  // The conditional model is the one that trains on frame pairs; the others draw from noise.
  const bool conditional = model == "pix2pix";
  if (flow && !conditional) {
    return absl::InvalidArgumentError(absl::StrCat("--dataset flow trains on frame pairs, which --model ", model,
                                                   " cannot take; use --model pix2pix"));
  }
  if (!flow && conditional) {
    return absl::InvalidArgumentError(absl::StrCat("--model pix2pix needs frame pairs, which --dataset ", dataset,
                                                   " has not; use --dataset flow"));
  }
  if (dataset == "images" && data_dir.empty()) {
    return absl::InvalidArgumentError(
        "--dataset images has no default folder; give --data-dir a folder of your images (packed once into a "
        "cache beside your runs) or a file packed by `gantry-worker make-dataset`");
  }
  if (flow && data_dir.empty()) {
    return absl::InvalidArgumentError(
        "--dataset flow has no default folder; give --data-dir a case folder written by `gantry-worker make-flow "
        "--out DIR` or a folder of such cases");
  }
  return absl::OkStatus();
}

}  // namespace gantry
