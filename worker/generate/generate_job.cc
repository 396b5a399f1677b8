#include "worker/generate/generate_job.h"

#include <algorithm>
#include <optional>

#include "absl/strings/str_cat.h"
#include "common/machine_memory.h"
#include "common/status_macros.h"
#include "nlohmann/json.hpp"
#include "spdlog/spdlog.h"
#include "worker/data/flow_pairs.h"
#include "worker/generate/generate_output.h"
#include "worker/infer/batched_map.h"
#include "worker/monitor/sample_writer.h"
#include "worker/run/shared_settings.h"
#include "worker/run/trained_run.h"
#include "worker/tensor/backend_registry.h"

namespace gantry {
namespace {

// What every rank resolves from the request before generating.
struct Plan {
  Tensor inputs;                      // [K, ...]
  std::vector<int64_t> sample_shape;  // {C, H, W} of one output
  MathPrecision precision = MathPrecision::kFp32;
  std::string source;                 // for generate.json
};

int64_t Numel(const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

absl::StatusOr<MathPrecision> ParsePrecision(const std::string& name) {
  const std::optional<MathPrecision> p = ParseMathPrecision(name);
  if (!p || *p == MathPrecision::kFp16) {
    return absl::InvalidArgumentError(absl::StrCat("--precision ", name, ": generate runs fp32 or bf16"));
  }
  return *p;
}

// Rank 0 holds the inputs, its own slots, every rank's gathered slots and the ordered
// copy: about K x (in + 3 out) floats. Refused when that passes this machine's memory.
absl::Status CheckCountFitsMemory(int64_t count, int64_t in_floats, int64_t out_floats) {
  const double need = static_cast<double>(count) * static_cast<double>(in_floats + 3 * out_floats) * sizeof(float);
  return CheckFitsMemory({.what = absl::StrCat("--count ", count, " on rank 0"),
                          .bytes = need,
                          .fix = "generate fewer samples at a time (several runs with different --seed)"});
}

// The inputs of an image model (latent rows) or of a next-frame model (conditions).
absl::StatusOr<Plan> PlanInputs(GanModel& model, const GenerateRequest& r) {
  Plan plan;
  const Shape row = model.SampleShape();
  if (!model.SamplesFromData()) {
    if (!r.condition.condition_file.empty() || !r.condition.case_dir.empty()) {
      return absl::InvalidArgumentError(absl::StrCat("--condition and --case are for next-frame models; --model ",
                                                     model.name(), " generates from latent vectors (--seed, "
                                                     "--noise-file, --interpolate)"));
    }
    ASSIGN_OR_RETURN(plan.inputs, LatentInputs(model, r.latent, kMaxGenerateSamples));
    plan.source = !r.latent.interpolate.empty() ? "interpolate" : !r.latent.noise_file.empty() ? "noise-file" : "seed";
  } else {
    if (row.rank() != 3 || !IsFlowRowShape(row[0], row[1], row[2])) {
      return absl::InvalidArgumentError(absl::StrCat("--model ", model.name(), " on rows ", row.ToString(),
                                                     ": generate takes image models and next-frame flow models"));
    }
    if (!r.latent.noise_file.empty() || !r.latent.interpolate.empty() || r.latent.steps != 0) {
      return absl::InvalidArgumentError(absl::StrCat("--noise-file, --interpolate and --steps are for image models; "
                                                     "--model ", model.name(), " generates from condition frames "
                                                     "(--condition or --case)"));
    }
    ASSIGN_OR_RETURN(plan.inputs, ConditionInputs(row[1], r.condition, kMaxGenerateSamples));
    plan.source = r.condition.condition_file.empty() ? "case" : "condition-file";
  }
  std::vector<int64_t> one = plan.inputs.shape().dims();
  one[0] = 1;
  std::vector<int64_t> out = model.generator().OutputShape(Shape(one)).dims();
  plan.sample_shape.assign(out.begin() + 1, out.end());
  return plan;
}

absl::StatusOr<Plan> PlanOnThisRank(GanModel& model, const GenerateRequest& r) {
  if (r.batch < 1) return absl::InvalidArgumentError(absl::StrCat("--batch ", r.batch, ": give 1 or more"));
  ASSIGN_OR_RETURN(const MathPrecision precision, ParsePrecision(r.precision));
  ASSIGN_OR_RETURN(Plan plan, PlanInputs(model, r));
  plan.precision = precision;
  if (plan.sample_shape.size() != 3) {
    return absl::InvalidArgumentError(absl::StrCat("--model ", model.name(), " does not generate images"));
  }
  const int64_t count = plan.inputs.dim(0);
  RETURN_IF_ERROR(CheckCountFitsMemory(count, plan.inputs.numel() / count, Numel(plan.sample_shape)));
  return plan;
}

// The generator in inference mode on `batch` inputs at a time.
TileFunction GeneratorBatches(GanModel& model, Backend& backend, const Plan& plan) {
  std::vector<int64_t> dims = plan.inputs.shape().dims();
  return [&model, &backend, dims, precision = plan.precision](const std::vector<float>& in, int64_t batch,
                                                              std::vector<float>& out) mutable -> absl::Status {
    dims[0] = batch;
    const Tensor y = GenerateImages(backend, model.generator(), Tensor::FromVector(Shape(dims), in), precision);
    if (y.numel() != static_cast<int64_t>(out.size())) {
      return absl::InternalError(absl::StrCat("the generator gave ", y.shape().ToString(), " for a batch of ", batch));
    }
    std::copy_n(y.data(), y.numel(), out.begin());
    return absl::OkStatus();
  };
}

std::string InfoJson(const GenerateRequest& r, const TrainedRun& run, const Plan& plan, int ranks,
                     const std::string& kernels) {
  nlohmann::json j = {{"run", r.run_dir},
                      {"checkpoint", run.checkpoint_path},
                      {"checkpoint_step", run.position.run_step},
                      {"weights", GeneratorWeightsName(run)},
                      {"model", run.settings.config.model},
                      {"count", plan.inputs.dim(0)},
                      {"source", plan.source},
                      {"precision", r.precision},
                      {"batch", r.batch},
                      {"ranks", ranks},
                      {"kernels", kernels},
                      {"input_shape", plan.inputs.shape().dims()},
                      {"sample_shape", plan.sample_shape}};
  if (plan.source == "seed" || (plan.source == "interpolate" && r.latent.noise_file.empty())) j["seed"] = r.latent.seed;
  if (!r.latent.noise_file.empty()) j["noise_file"] = r.latent.noise_file;
  if (!r.latent.interpolate.empty()) j["interpolate"] = r.latent.interpolate;
  if (!r.condition.condition_file.empty()) j["condition_file"] = r.condition.condition_file;
  if (!r.condition.case_dir.empty()) {
    j["case"] = r.condition.case_dir;
    j["frame"] = r.condition.frame;
  }
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

// Every rank's plan, or the same refusal everywhere (ABORTED where another rank refused).
absl::StatusOr<Plan> AgreeOnPlan(Communicator& comm, GanModel& model, const GenerateRequest& r,
                                 std::optional<GenerateOutput>& output, GenerateJobEnd& e) {
  absl::StatusOr<Plan> plan = PlanOnThisRank(model, r);
  if (plan.ok() && comm.rank() == 0) {
    absl::StatusOr<GenerateOutput> prepared = GenerateOutput::Prepare(r.out);
    if (prepared.ok()) output.emplace(*std::move(prepared));
    if (!prepared.ok()) plan = prepared.status();
  }
  const CommOptions startup{.timeout_seconds = 600};
  absl::StatusOr<bool> all_ok = AllRanksOk(comm, plan.ok(), startup);
  if (!all_ok.ok()) {
    e.collective_failed = true;
    return all_ok.status();
  }
  if (!plan.ok()) return plan.status();
  if (!*all_ok) return absl::AbortedError("another rank refused the request (see its output)");
  if (r.should_stop) {
    float stop = r.should_stop() ? 1.0f : 0.0f;
    if (absl::Status s = comm.AllReduceSum(&stop, 1, startup); !s.ok()) {
      e.collective_failed = true;
      return s;
    }
    if (stop != 0.0f) return absl::CancelledError("stopped before generating");
  }
  return plan;
}

// CANCELLED on every rank when any rank's should_stop asks for it (one all-reduce).
absl::Status AgreeToGoOn(Communicator& comm, const GenerateRequest& r, const CommOptions& opts, int64_t done) {
  if (!r.should_stop) return absl::OkStatus();
  float stop = r.should_stop() ? 1.0f : 0.0f;
  RETURN_IF_ERROR(comm.AllReduceSum(&stop, 1, opts));
  if (stop != 0.0f) return absl::CancelledError(absl::StrCat("stopped after generating ", done, " sample(s)"));
  return absl::OkStatus();
}

// BatchedMap over all the plan's inputs, in rounds of one generator call per rank with
// an agreement to go on before each, so a stop is heard within one call, not after the
// whole count. Rounds start at multiples of `batch`, so they form the groups one
// BatchedMap over every item would: the samples are the same either way. Rank 0 gets
// them all, the other ranks nothing.
absl::StatusOr<std::vector<float>> GenerateInRounds(Communicator& comm, const Plan& plan, const GenerateRequest& r,
                                                    const BatchedMapOptions& all, const TileFunction& fn) {
  const int64_t round = all.batch * comm.size();
  std::vector<float> samples;
  for (int64_t first = 0; first < all.items; first += round) {
    RETURN_IF_ERROR(AgreeToGoOn(comm, r, all.comm, first));
    BatchedMapOptions o = all;
    o.items = std::min(round, all.items - first);
    ASSIGN_OR_RETURN(std::vector<float> part, BatchedMap(comm, plan.inputs.data() + first * all.in_floats, o, fn));
    samples.insert(samples.end(), part.begin(), part.end());
  }
  return samples;
}

// Sample files between two agreements while rank 0 writes (RunGenerateJob).
constexpr int64_t kFilesPerAgreement = 64;

// While rank 0 writes, every rank agrees before each kFilesPerAgreement sample files
// whether to go on, so a stop on any rank is heard then (the others would otherwise wait
// idle for rank 0's thousands of files): CANCELLED on every rank when any rank's
// should_stop asks for it; ABORTED on the others when rank 0 says (`failed`) that it
// could not write.
absl::Status AgreeWhileWriting(Communicator& comm, const GenerateRequest& r, const CommOptions& opts,
                               int64_t written, bool failed) {
  float flags[2] = {r.should_stop() ? 1.0f : 0.0f, failed ? 1.0f : 0.0f};
  RETURN_IF_ERROR(comm.AllReduceSum(flags, 2, opts));
  if (flags[1] != 0.0f) return absl::AbortedError("rank 0 could not write the samples (see its output)");
  if (flags[0] != 0.0f) return absl::CancelledError(absl::StrCat("stopped after writing ", written, " sample(s)"));
  return absl::OkStatus();
}

// Rank 0 writes the files into the staging folder, agreeing with the other ranks as it
// goes (AgreeWhileWriting) when the request can stop; they take part in the same
// agreements (WaitWhileRankZeroWrites).
absl::Status WriteWithAgreements(Communicator& comm, const GenerateRequest& r, const CommOptions& opts,
                                 const std::string& folder, const GeneratedSamples& generated,
                                 const std::string& info_json, GenerateJobEnd& e) {
  if (!r.should_stop) return WriteGeneratedFiles(folder, generated, info_json);
  const int64_t count = generated.inputs.dim(0);
  int64_t next_agreement = 0;
  bool agreement_failed = false;
  const absl::Status written = WriteGeneratedFiles(folder, generated, info_json, [&](int64_t i) -> absl::Status {
    if (i % kFilesPerAgreement != 0) return absl::OkStatus();
    next_agreement = i + kFilesPerAgreement;
    absl::Status agreed = AgreeWhileWriting(comm, r, opts, i, /*failed=*/false);
    agreement_failed = !agreed.ok();
    if (agreement_failed && !absl::IsCancelled(agreed)) e.collective_failed = true;
    return agreed;
  });
  // The others wait at the next agreement, if one is left: they hear of the failure there.
  if (!written.ok() && !agreement_failed && next_agreement < count) {
    if (!AgreeWhileWriting(comm, r, opts, next_agreement, /*failed=*/true).ok()) e.collective_failed = true;
  }
  return written;
}

// The other ranks' side of WriteWithAgreements.
absl::Status WaitWhileRankZeroWrites(Communicator& comm, const GenerateRequest& r, const CommOptions& opts,
                                     int64_t count, GenerateJobEnd& e) {
  if (!r.should_stop) return absl::OkStatus();
  for (int64_t i = 0; i < count; i += kFilesPerAgreement) {
    const absl::Status agreed = AgreeWhileWriting(comm, r, opts, i, /*failed=*/false);
    if (!agreed.ok() && !absl::IsCancelled(agreed) && !absl::IsAborted(agreed)) e.collective_failed = true;
    RETURN_IF_ERROR(agreed);
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status RunGenerateJob(Communicator& comm, const GenerateRequest& request, GenerateJobEnd* end) {
  GenerateJobEnd ignored;
  GenerateJobEnd& e = end != nullptr ? *end : ignored;
  e = GenerateJobEnd{};
  const CommOptions startup{.timeout_seconds = 600};  // ranks may still be loading
  // Every rank parsed the same command line: it refuses alike, before any collective.
  if (request.checkpoint_step < 0) {
    return absl::InvalidArgumentError(absl::StrCat("--checkpoint ", request.checkpoint_step, ": give a run step"));
  }
  ASSIGN_OR_RETURN(TrainedRun trained, OpenTrainedRun(comm, {.run_dir = request.run_dir,
                                                             .checkpoint_step = request.checkpoint_step,
                                                             .purpose = "generate from",
                                                             .comm = startup},
                                                      &e.collective_failed));
  std::optional<GenerateOutput> output;
  ASSIGN_OR_RETURN(const Plan plan, AgreeOnPlan(comm, *trained.model, request, output, e));
  Backend& backend = *FindBackend(DefaultBackendName());
  const int64_t count = plan.inputs.dim(0);
  const BatchedMapOptions options{.items = count,
                                  .in_floats = plan.inputs.numel() / count,
                                  .out_floats = Numel(plan.sample_shape),
                                  .batch = request.batch,
                                  .comm = CommOptions{.timeout_seconds = trained.settings.config.comm_timeout_seconds}};
  e.stage = GenerateStage::kGenerating;
  ASSIGN_OR_RETURN(std::vector<float> samples,
                   GenerateInRounds(comm, plan, request, options, GeneratorBatches(*trained.model, backend, plan)));
  e.stage = GenerateStage::kWriting;
  e.count = count;
  if (comm.rank() != 0) return WaitWhileRankZeroWrites(comm, request, options.comm, count, e);
  e.out = request.out;
  const GeneratedSamples generated{plan.inputs, std::move(samples), plan.sample_shape,
                                   /*colour_images=*/!trained.model->SamplesFromData()};
  // A stop while writing (thousands of PNGs) ends here too; `output` then removes the
  // staging folder.
  RETURN_IF_ERROR(WriteWithAgreements(comm, request, options.comm, output->staging(), generated,
                                      InfoJson(request, trained, plan, comm.size(), std::string(backend.name())), e));
  RETURN_IF_ERROR(output->Publish());
  spdlog::info("{} samples of {} (step {}) written to {}", count, request.run_dir, trained.position.run_step,
               request.out);
  return absl::OkStatus();
}

}  // namespace gantry
