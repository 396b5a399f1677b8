#include "cli/submit_request.h"

#include <filesystem>

#include "runspec/run_file.h"
#include "runspec/run_spec_settings.h"

namespace gantry::cli {

absl::StatusOr<v1::SubmitJobRequest> BuildSubmitRequest(const SubmitArgs& args) {
  SpecSettings settings;
  if (!args.run_file.empty()) {
    absl::StatusOr<RawSettings> from_file = ReadRunFile(args.run_file);
    if (!from_file.ok()) return from_file.status();
    settings.insert(from_file->begin(), from_file->end());
  }
  for (const auto& [name, value] : args.settings) settings[name] = value;
  if (auto it = settings.find("data-dir"); it != settings.end() && !it->second.empty()) {
    it->second = std::filesystem::absolute(it->second).lexically_normal().string();
  }
  v1::SubmitJobRequest request;
  for (const auto& [name, value] : settings) {
    if (absl::Status s = SetRunSpecSetting(name, value, request.mutable_spec()); !s.ok()) return s;
  }
  request.set_world_size(args.world_size);
  request.set_max_attempts(args.max_attempts);
  request.set_name(args.name);
  return request;
}

v1::SubmitJobRequest BuildRolloutRequest(const RolloutArgs& args) {
  v1::SubmitJobRequest request;
  v1::RolloutSpec& r = *request.mutable_rollout();
  r.set_source_job_id(args.source_job_id);
  r.set_case_dir(args.case_dir.empty() ? ""
                                       : std::filesystem::absolute(args.case_dir).lexically_normal().string());
  r.set_steps(args.steps);
  if (args.start_frame) r.mutable_start_frame()->set_value(*args.start_frame);
  if (args.tile) r.mutable_tile()->set_value(*args.tile);
  if (args.overlap) r.mutable_overlap()->set_value(*args.overlap);
  if (args.group) r.mutable_group()->set_value(*args.group);
  if (args.tile_batch) r.mutable_tile_batch()->set_value(*args.tile_batch);
  if (args.report_every) r.mutable_report_every()->set_value(*args.report_every);
  r.set_blend(args.blend);
  request.set_world_size(args.world_size);
  request.set_max_attempts(args.max_attempts);
  request.set_name(args.name);
  return request;
}

v1::SubmitJobRequest BuildGenerateRequest(const GenerateArgs& args) {
  v1::SubmitJobRequest request;
  v1::GenerateSpec& g = *request.mutable_generate();
  g.set_source_job_id(args.source_job_id);
  g.set_name(args.name);
  if (args.count) g.mutable_count()->set_value(*args.count);
  if (args.seed) g.mutable_seed()->set_value(*args.seed);
  if (args.checkpoint) g.mutable_checkpoint()->set_value(*args.checkpoint);
  g.set_precision(args.precision);
  if (args.batch) g.mutable_batch()->set_value(*args.batch);
  g.set_interpolate(args.interpolate);
  if (args.steps) g.mutable_steps()->set_value(*args.steps);
  g.set_case_dir(args.case_dir.empty() ? "" : std::filesystem::absolute(args.case_dir).lexically_normal().string());
  if (args.frame) g.mutable_frame()->set_value(*args.frame);
  request.set_world_size(args.world_size);
  request.set_max_attempts(args.max_attempts);
  request.set_name(args.label);
  return request;
}

}  // namespace gantry::cli
