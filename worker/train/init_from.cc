#include "worker/train/init_from.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/printable_text.h"
#include "common/status_macros.h"
#include "spdlog/spdlog.h"
#include "worker/formats/safetensors.h"
#include "worker/interop/module_metadata.h"
#include "worker/interop/state_dict.h"
#include "worker/run/shared_settings.h"

namespace gantry {
namespace {

// The network a file holds: its metadata's word, else the one whose keys it has (the
// generator when neither fits, so the error lists what the generator lacks).
absl::StatusOr<GanNetwork> NetworkOf(const StFile& file, const std::string& path, const GanModel& model) {
  const auto named = file.metadata.find("network");
  if (named != file.metadata.end()) {
    if (named->second == "generator") return GanNetwork::kGenerator;
    if (named->second == "discriminator") return GanNetwork::kDiscriminator;
    return absl::InvalidArgumentError(absl::StrCat(path, ": __metadata__ names network '", NameForMessage(named->second),
                                                   "'; use generator or discriminator"));
  }
  const bool d = HoldsNetwork(file, model.TorchStateDictNames(GanNetwork::kDiscriminator));
  return d ? GanNetwork::kDiscriminator : GanNetwork::kGenerator;
}

absl::Status LoadFiles(const std::string& files, GanModel& model) {
  if (model.TorchStateDictNames(GanNetwork::kGenerator).empty()) {
    return absl::InvalidArgumentError(absl::StrCat("--init-from: --model ", model.name(), " has no PyTorch twin"));
  }
  bool loaded[2] = {false, false};
  for (const absl::string_view piece : absl::StrSplit(files, ',', absl::SkipEmpty())) {
    const std::string path(piece);
    ASSIGN_OR_RETURN(const StFile file, ReadSafetensors(path));
    RETURN_IF_ERROR(CheckMetadataFitsModel(file.metadata, path, model.name()));
    ASSIGN_OR_RETURN(const GanNetwork network, NetworkOf(file, path, model));
    const int index = network == GanNetwork::kGenerator ? 0 : 1;
    if (loaded[index]) {
      return absl::InvalidArgumentError(absl::StrCat("--init-from: two files hold the ", GanNetworkName(network),
                                                     "; give one per network"));
    }
    FlatParameters& p = network == GanNetwork::kGenerator ? model.g_params() : model.d_params();
    RETURN_IF_ERROR(LoadSafetensorsIntoNetwork(file, path, model.TorchStateDictNames(network), p));
    loaded[index] = true;
    spdlog::info("--init-from: the {} starts from {}", GanNetworkName(network), path);
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status InitFromFiles(Communicator& comm, const std::string& files, GanModel& model, const CommOptions& options) {
  const absl::Status loaded = comm.rank() == 0 ? LoadFiles(files, model) : absl::OkStatus();
  ASSIGN_OR_RETURN(const bool all_ok, AllRanksOk(comm, loaded.ok(), options));
  if (!loaded.ok()) return absl::InvalidArgumentError(loaded.message());
  if (!all_ok) return absl::AbortedError("--init-from failed on rank 0 (see its output)");
  return absl::OkStatus();
}

}  // namespace gantry
