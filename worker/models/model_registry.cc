#include "worker/models/model_registry.h"

#include <functional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "worker/models/dcgan.h"
#include "worker/models/image_dcgan.h"
#include "worker/models/pix2pix.h"

namespace gantry {
namespace {

struct ModelEntry {
  std::string name;
  std::function<std::unique_ptr<GanModel>(const TrainConfig&, Device)> make;
};

const std::vector<ModelEntry>& Entries() {
  static const auto* entries = new std::vector<ModelEntry>{
      // The DCGAN follows the data: the TPU paper's 28x28 network on MNIST-format sets, the
      // DCGAN paper's 32-128 px network on your own images (UsesImageDcgan).
      {"dcgan",
       [](const TrainConfig& c, Device d) -> std::unique_ptr<GanModel> {
         if (UsesImageDcgan(c)) return std::make_unique<ImageDcgan>(c.image_dcgan, d, c.augment);
         return std::make_unique<Dcgan>(c.dcgan, d, c.augment);
       }},
      // No --augment: ResolveTrainConfig refuses it for this conditional model.
      {"pix2pix", [](const TrainConfig& c, Device d) { return std::make_unique<Pix2pix>(c.pix2pix, d); }},
  };
  return *entries;
}

}  // namespace

std::vector<std::string> RegisteredModels() {
  std::vector<std::string> names;
  for (const ModelEntry& e : Entries()) names.push_back(e.name);
  return names;
}

absl::StatusOr<std::unique_ptr<GanModel>> MakeModel(const TrainConfig& config, Device device) {
  for (const ModelEntry& e : Entries()) {
    if (e.name == config.model) return e.make(config, device);
  }
  return absl::InvalidArgumentError(absl::StrCat("--model ", config.model, ": this gantry-worker trains ",
                                                 absl::StrJoin(RegisteredModels(), ", "), "; use one of them"));
}

}  // namespace gantry
