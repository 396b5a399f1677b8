// SIGTERM and SIGINT as a request to stop: the first one sets a flag the pool polls
// (between training steps and between polls for work), so the current step finishes on
// every rank and the process exits cleanly; a second one ends the process at once.
#pragma once

namespace gantry {

// Installs the handlers (once per process).
void InstallStopSignalHandlers();
// The signal that asked to stop, or 0 when none came.
int StopSignal();
// For tests: behave as if `signal` had arrived.
void RaiseStopForTesting(int signal);

}  // namespace gantry
