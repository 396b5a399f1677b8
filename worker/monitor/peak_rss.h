// The peak resident set size of this process, for comparing the memory of fp32 and
// mixed-precision runs (epochs.csv's peak_rss_mb).
#pragma once

namespace gantry {

// getrusage(RUSAGE_SELF).ru_maxrss in MiB: the high-water mark since the process
// started (it never goes down, so in a sweep it covers every batch size so far). 0 when
// getrusage fails.
double PeakRssMiB();

}  // namespace gantry
