#include "worker/pool/rollout_request.h"

#include "runspec/rollout_spec_check.h"

namespace gantry {

RolloutRequest RolloutRequestFor(const v1::Job& job) {
  const v1::RolloutSpec& r = job.rollout();
  RolloutRequest request;
  request.run_dir = job.checkpoint().run_folder();
  request.case_dir = r.case_dir();
  request.steps = r.steps();
  if (r.has_start_frame()) request.start_frame = r.start_frame().value();
  if (r.has_tile()) request.tile = r.tile().value();
  if (r.has_overlap()) request.overlap = r.overlap().value();
  if (!r.blend().empty()) request.blend = r.blend();
  if (r.has_group()) request.group_size = r.group().value();
  if (r.has_tile_batch()) request.batch = r.tile_batch().value();
  if (r.has_report_every()) request.report_every = r.report_every().value();
  // The job's own folder: no other rollout writes there, and a retry replaces its files.
  request.out = RolloutJobOutputFolder(request.run_dir, request.case_dir, job.id());
  request.own_folder = true;
  return request;
}

}  // namespace gantry
