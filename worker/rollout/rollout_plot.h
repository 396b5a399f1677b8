// errors.png of a rollout (`gantry-worker rollout`, worker/rollout/rollout_job.h): the error
// over the model steps, drawn on PlotCanvas with the run plots' panels (plot_panel.h).
//   top     relative L2 vs the LBM truth per step, with "copy the start frame"
//           (persistence) for comparison;
//   bottom  the vorticity correlation per step, with the threshold (0.95) as a line.
#pragma once

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "worker/monitor/plot_canvas.h"
#include "worker/rollout/rollout_report.h"

namespace gantry {

inline constexpr int kRolloutPlotWidth = 960, kRolloutPlotHeight = 620;

// Every value is drawn as a point and joined to the next by a line; non-finite values
// are left out.
PlotCanvas DrawRolloutPlot(const std::vector<RolloutStepRow>& rows, double threshold);

// Draw and write the PNG atomically; errors name the path.
absl::Status WriteRolloutPlot(const std::string& path, const std::vector<RolloutStepRow>& rows, double threshold);

}  // namespace gantry
