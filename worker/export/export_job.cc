#include "worker/export/export_job.h"

#include <filesystem>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "worker/comm/local_communicator.h"
#include "worker/interop/module_metadata.h"
#include "worker/interop/state_dict.h"
#include "worker/run/trained_run.h"

namespace gantry {
namespace {

namespace fs = std::filesystem;

absl::StatusOr<GanNetwork> ParseNetwork(const std::string& name) {
  if (name == "generator") return GanNetwork::kGenerator;
  if (name == "discriminator") return GanNetwork::kDiscriminator;
  return absl::InvalidArgumentError(absl::StrCat("--network ", name, ": use generator or discriminator"));
}

absl::StatusOr<StDtype> ParseDtype(const std::string& name) {
  if (name == "fp32") return StDtype::kF32;
  if (name == "bf16") return StDtype::kBf16;
  return absl::InvalidArgumentError(absl::StrCat("--dtype ", name, ": use fp32 or bf16"));
}

// A new file in an existing folder: an export never replaces anything.
absl::Status CheckNewFile(const std::string& out) {
  std::error_code ec;
  if (out.empty()) return absl::InvalidArgumentError("--out: give the file to write");
  if (fs::exists(fs::symlink_status(out, ec))) {
    return absl::InvalidArgumentError(absl::StrCat("--out ", out, " exists; an export never overwrites a file: give a "
                                                   "new name or remove it first"));
  }
  const fs::path folder = fs::path(out).parent_path().empty() ? fs::path(".") : fs::path(out).parent_path();
  if (!fs::is_directory(folder, ec)) {
    return absl::InvalidArgumentError(absl::StrCat("--out ", out, ": the folder ", folder.string(),
                                                   " does not exist; create it first"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status RunExport(const ExportRequest& request, std::string* written) {
  if (request.format != "safetensors") {
    return absl::InvalidArgumentError(absl::StrCat("--format ", request.format, ": only safetensors is written"));
  }
  ASSIGN_OR_RETURN(const GanNetwork network, ParseNetwork(request.network));
  ASSIGN_OR_RETURN(const StDtype dtype, ParseDtype(request.dtype));
  if (request.checkpoint_step < 0) {
    return absl::InvalidArgumentError(absl::StrCat("--checkpoint ", request.checkpoint_step, ": give a run step"));
  }
  RETURN_IF_ERROR(CheckNewFile(request.out));
  LocalGroup group(1);
  const std::unique_ptr<Communicator> comm = group.Rank(0);
  ASSIGN_OR_RETURN(TrainedRun trained, OpenTrainedRun(*comm, {.run_dir = request.run_dir,
                                                              .checkpoint_step = request.checkpoint_step,
                                                              .purpose = "export"}));
  GanModel& model = *trained.model;
  const TorchNames names = model.TorchStateDictNames(network);
  if (names.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("--model ", model.name(), " has no PyTorch twin to export to"));
  }
  const FlatParameters& p = network == GanNetwork::kGenerator ? model.g_params() : model.d_params();
  ASSIGN_OR_RETURN(StFile file, NetworkToSafetensors(p, names, dtype, trained.position.run_step));
  file.metadata = TorchModuleMetadata(trained.settings.config, network);
  file.metadata["dtype"] = request.dtype;
  file.metadata["checkpoint_step"] = absl::StrCat(trained.position.run_step);
  if (network == GanNetwork::kGenerator) {
    file.metadata["weights"] = GeneratorWeightsName(trained);
  }
  file.metadata["gantry_version"] = GANTRY_VERSION;
  // CheckNewFile ran before the work: a file created since (another export to the same
  // --out) is refused here, never replaced.
  if (absl::Status s = WriteSafetensors(request.out, file); !s.ok()) {
    if (!absl::IsAlreadyExists(s)) return s;
    return absl::InvalidArgumentError(absl::StrCat("--out ", request.out, " appeared while exporting (another export "
                                                   "to it?); an export never overwrites a file: it is left as it is, "
                                                   "give a new name"));
  }
  if (written != nullptr) {
    *written = absl::StrCat("exported the ", request.network, " of ", request.run_dir, " at step ",
                            trained.position.run_step, " (", file.tensors.size(), " tensors, ", request.dtype, ") to ",
                            request.out);
  }
  return absl::OkStatus();
}

}  // namespace gantry
