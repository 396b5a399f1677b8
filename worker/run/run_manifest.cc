#include "worker/run/run_manifest.h"

#include <ctime>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/host_name.h"
#include "nlohmann/json.hpp"
#include "runspec/augment_policy.h"

namespace gantry {

std::string UtcNow() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  return absl::StrFormat("%04d-%02d-%02dT%02d:%02d:%02dZ", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
                         tm.tm_min, tm.tm_sec);
}

namespace {

// The float as a user would write it (1e-4, not 9.99999974738e-05).
double Shortest(float f) { return std::stod(absl::StrCat(f)); }

nlohmann::ordered_json LossScaleJson(const LossScaleConfig& ls) {
  nlohmann::ordered_json j;
  j["mode"] = LossScaleModeName(ls.mode);
  if (ls.mode == LossScaleMode::kStatic) j["scale"] = Shortest(ls.init_scale);
  if (ls.mode != LossScaleMode::kDynamic) return j;
  j["init"] = Shortest(ls.init_scale);
  j["growth_interval"] = ls.growth_interval;
  j["growth_factor"] = Shortest(ls.growth_factor);
  j["backoff_factor"] = Shortest(ls.backoff_factor);
  return j;
}

// The debug switches a run was started with (only those given).
void AddDebugSettings(const TrainConfig& c, nlohmann::ordered_json& cfg) {
  if (c.mixed.inject_inf.active()) {
    const InjectInf& inject = c.mixed.inject_inf;
    cfg["debug_inject_inf"] = {{"step", inject.step},
                               {"rank", inject.rank},
                               {"network", inject.g && inject.d ? "both" : inject.g ? "g" : "d"}};
  }
  if (c.debug_slow_rank >= 0) {
    cfg["debug_slow"] = {{"rank", c.debug_slow_rank}, {"ms", c.debug_slow_ms}, {"factor", c.debug_slow_factor}};
  }
}

nlohmann::ordered_json Pix2pixJson(const Pix2pixConfig& p) {
  nlohmann::ordered_json json = {{"image_size", p.image_size}, {"ngf", p.ngf},
                                 {"ndf", p.ndf},               {"norm", p.norm == NormKind::kInstance ? "instance" : "batch"},
                                 {"l1_weight", Shortest(p.l1_weight)}, {"horizon", p.horizon},
                                 {"predict", NextFramePredictionName(p.predict)}, {"input_noise", Shortest(p.input_noise)}};
  // Only unrolled runs carry the block, so one-step runs keep their run.json as before.
  if (p.unroll.steps > 1) {
    json["unroll"] = {{"steps", p.unroll.steps},
                      {"loss", UnrollLossName(p.unroll.loss)},
                      {"pushforward", p.unroll.pushforward},
                      {"curriculum_epochs", p.unroll.curriculum_epochs}};
  }
  return json;
}

// run.json's "config": the resolved values the run was built from.
nlohmann::ordered_json ConfigJson(const TrainConfig& c, const std::string& data_dir, int64_t train_images) {
  nlohmann::ordered_json cfg;
  cfg["model"] = c.model;
  cfg["dataset"] = c.dataset;
  cfg["data_dir"] = data_dir;
  cfg["train_images"] = train_images;
  cfg["epochs"] = c.epochs;
  cfg["batch_sizes"] = c.batch_sizes;
  cfg["optimizer"] = {{"kind", c.optimizer.kind}, {"lr", Shortest(c.optimizer.lr)},     {"beta1", Shortest(c.optimizer.beta1)},
                      {"beta2", Shortest(c.optimizer.beta2)}, {"eps", Shortest(c.optimizer.eps)}, {"momentum", Shortest(c.optimizer.momentum)}};
  const LearningRateRule& rate = c.rate_rule;
  cfg["learning_rate"] = {{"scaling", LrScalingName(rate.scaling)},
                          {"base_batch_size", rate.base_batch_size},
                          {"warmup_steps", rate.warmup_steps},
                          {"warmup_start", rate.warmup_start},
                          {"d_ratio", rate.d_ratio}};
  cfg["g_ema"] = c.g_ema;
  cfg["augment"] = AugmentPolicyName(c.augment);
  cfg["dcgan"] = {{"noise_dim", c.dcgan.noise_dim}, {"leaky_slope", Shortest(c.dcgan.leaky_slope)},
                  {"dropout", Shortest(c.dcgan.dropout)},     {"bn_eps", Shortest(c.dcgan.bn_eps)},
                  {"bn_momentum", Shortest(c.dcgan.bn_momentum)}};
  cfg["init"] = c.init == InitScheme::kNormal002 ? "normal" : "glorot";
  cfg["seed"] = c.seed;
  cfg["max_steps"] = c.max_steps;
  cfg["limit_images"] = c.limit_images;
  cfg["out"] = c.out;
  cfg["checkpoint_every_steps"] = c.checkpoint_every_steps;
  cfg["keep_checkpoints"] = c.keep_checkpoints;
  cfg["sync_bn"] = c.sync_bn;
  cfg["rebalance"] = c.rebalance;
  cfg["tensorboard"] = c.tensorboard;
  cfg["watts_per_core"] = c.watts_per_core;
  cfg["quality"] = c.quality;
  if (c.target.active()) {
    cfg["quality_target"] = {{"fd", c.target.fd}, {"rel_l2", c.target.rel_l2}, {"stop", c.target.stop}};
  }
  cfg["straggler"] = {{"factor", c.straggler.factor}, {"window", c.straggler.window}};
  cfg["comm_timeout_s"] = c.comm_timeout_seconds;
  cfg["precision"] = PrecisionName(c.mixed.precision);
  cfg["loss_scale"] = LossScaleJson(c.mixed.loss_scale);
  cfg["allreduce_dtype"] = WireDtypeName(c.mixed.allreduce_dtype);
  AddDebugSettings(c, cfg);
  if (c.model == "pix2pix") cfg["pix2pix"] = Pix2pixJson(c.pix2pix);
  if (UsesImageDcgan(c)) {
    const ImageDcganConfig& d = c.image_dcgan;
    cfg["image_dcgan"] = {{"image_size", d.image_size},
                          {"channels", d.channels},
                          {"noise_dim", d.noise_dim},
                          {"ngf", d.ngf},
                          {"ndf", d.ndf},
                          {"leaky_slope", Shortest(d.leaky_slope)},
                          {"bn_eps", Shortest(d.bn_eps)},
                          {"bn_momentum", Shortest(d.bn_momentum)}};
    cfg["mirror"] = c.mirror;
  }
  return cfg;
}

}  // namespace

// run.json's "settings": what was given, plus the settings whose defaults may change
// (--predict, --lr-scaling) or that the run took from its data (the image DCGAN's size
// and channels, a packed set's), so neither a later change of a default nor of the data
// can change what resuming, generating from or exporting this run builds.
RawSettings RunJsonSettings(const TrainConfig& c, const RawSettings& settings) {
  RawSettings recorded = settings;
  if (c.model == "pix2pix") recorded.try_emplace("predict", NextFramePredictionName(c.pix2pix.predict));
  if (UsesImageDcgan(c)) {
    recorded.try_emplace("image-size", std::to_string(c.image_dcgan.image_size));
    recorded.try_emplace("channels", std::to_string(c.image_dcgan.channels));
  }
  recorded.try_emplace("lr-scaling", LrScalingName(c.rate_rule.scaling));
  return recorded;
}

std::string RunManifestJson(const TrainConfig& c, const RawSettings& settings, const std::string& data_dir,
                            int64_t train_images,
                            const std::string& backend, const std::string& product_path, int world_size,
                            const std::string& transport) {
  nlohmann::ordered_json j;
  j["gantry_version"] = GANTRY_VERSION;
  j["started_utc"] = UtcNow();
  j["host"] = ThisHostName();
  j["compiler"] = absl::StrFormat("g++ %d.%d.%d", __GNUC__, __GNUC_MINOR__, __GNUC_PATCHLEVEL__);
  j["backend"] = backend;
  j["products"] = product_path;
  j["device"] = c.device;
  j["world_size"] = world_size;
  j["transport"] = transport;
  j["config"] = ConfigJson(c, data_dir, train_images);
  j["settings"] = RunJsonSettings(c, settings);
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace gantry
