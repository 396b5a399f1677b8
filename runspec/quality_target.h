// The quality a run aims for (--target-fd, --target-rel-l2): the sweep reports, per batch
// size, when it was first reached, and --stop-at-target ends a batch size there.
#pragma once

namespace gantry {

struct QualityTarget {
  double fd = 0;      // image models: the judge's Frechet distance at or below this; 0: none
  double rel_l2 = 0;  // flow (pix2pix): held-out relative L2 at or below this; 0: none
  bool stop = false;  // end a batch size at the first epoch that reaches the target
  bool active() const { return fd > 0 || rel_l2 > 0; }
  bool operator==(const QualityTarget&) const = default;
};

}  // namespace gantry
