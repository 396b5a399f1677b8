#include "worker/interop/module_metadata.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/printable_text.h"

namespace gantry {
namespace {

// Enough digits that Python's float() gives back the same fp32 value.
std::string Number(double v) { return absl::StrFormat("%.9g", v); }

void AddDcgan(const DcganConfig& c, std::map<std::string, std::string>& m) {
  m["noise_dim"] = absl::StrCat(c.noise_dim);
  m["leaky_slope"] = Number(c.leaky_slope);
  m["bn_eps"] = Number(c.bn_eps);
  m["bn_momentum"] = Number(1.0 - static_cast<double>(c.bn_momentum));
}

void AddImageDcgan(const ImageDcganConfig& c, std::map<std::string, std::string>& m) {
  m["image_size"] = absl::StrCat(c.image_size);
  m["channels"] = absl::StrCat(c.channels);
  m["noise_dim"] = absl::StrCat(c.noise_dim);
  m["ngf"] = absl::StrCat(c.ngf);
  m["ndf"] = absl::StrCat(c.ndf);
  m["leaky_slope"] = Number(c.leaky_slope);
  m["bn_eps"] = Number(c.bn_eps);
  m["bn_momentum"] = Number(1.0 - static_cast<double>(c.bn_momentum));
}

void AddPix2pix(const Pix2pixConfig& c, std::map<std::string, std::string>& m) {
  m["image_size"] = absl::StrCat(c.image_size);
  m["ngf"] = absl::StrCat(c.ngf);
  m["ndf"] = absl::StrCat(c.ndf);
  m["norm"] = c.norm == NormKind::kBatch ? "batch" : "instance";
  m["predict"] = NextFramePredictionName(c.predict);
  m["leaky_slope"] = Number(c.leaky_slope);
  m["dropout"] = Number(c.dropout);
  m["bn_eps"] = Number(c.bn_eps);
  m["bn_momentum"] = Number(1.0 - static_cast<double>(c.bn_momentum));
  m["in_eps"] = Number(c.in_eps);
  m["in_channels"] = absl::StrCat(Pix2pixConfig::kInputChannels);
  m["out_channels"] = absl::StrCat(Pix2pixConfig::kOutputChannels);
}

}  // namespace

std::map<std::string, std::string> TorchModuleMetadata(const TrainConfig& config, GanNetwork network) {
  std::map<std::string, std::string> m = {
      {"format", "gantry-state-dict-v1"}, {"model", config.model}, {"network", std::string(GanNetworkName(network))}};
  if (UsesImageDcgan(config)) {
    AddImageDcgan(config.image_dcgan, m);
  } else if (config.model == "dcgan") {
    AddDcgan(config.dcgan, m);
  }
  if (config.model == "pix2pix") AddPix2pix(config.pix2pix, m);
  return m;
}

absl::Status CheckMetadataFitsModel(const std::map<std::string, std::string>& metadata, const std::string& path,
                                    const std::string& model) {
  const auto named = metadata.find("model");
  if (named == metadata.end() || named->second == model) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(path, " holds a --model ", NameForMessage(named->second),
                                                 " network; this run trains --model ", model, ": give weights of a ",
                                                 model, " (gantry-worker export of such a run)"));
}

}  // namespace gantry
