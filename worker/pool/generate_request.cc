#include "worker/pool/generate_request.h"

#include "runspec/generate_spec_check.h"

namespace gantry {

GenerateRequest GenerateRequestFor(const v1::Job& job) {
  const v1::GenerateSpec& g = job.generate();
  GenerateRequest request;
  request.run_dir = job.checkpoint().run_folder();
  request.out = GenerateOutputFolder(request.run_dir, g.name().empty() ? job.id() : g.name());
  if (g.has_checkpoint()) request.checkpoint_step = g.checkpoint().value();
  if (g.has_count()) request.latent.count = request.condition.count = g.count().value();
  if (g.has_seed()) request.latent.seed = g.seed().value();
  request.latent.interpolate = g.interpolate();
  if (g.has_steps()) request.latent.steps = g.steps().value();
  request.condition.case_dir = g.case_dir();
  if (g.has_frame()) request.condition.frame = g.frame().value();
  if (!g.precision().empty()) request.precision = g.precision();
  if (g.has_batch()) request.batch = g.batch().value();
  return request;
}

}  // namespace gantry
