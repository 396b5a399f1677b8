// --augment: which differentiable augmentations (DiffAugment, Zhao et al. 2020) the
// discriminator's inputs pass through in an unconditional GAN step. A plain value shared
// by the worker (worker/layers/diff_augment.h applies it) and the control plane (which
// checks and shows it).
//
// The setting is `off` or a comma list of transform names, each at most once, in any
// order; the transforms always run in the order color, translation, cutout (the
// authors' recommended policy string), so a policy has one canonical name and two
// spellings of it are one run.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace gantry {

struct AugmentPolicy {
  bool color = false;        // brightness, saturation, contrast (per image)
  bool translation = false;  // an integer shift of up to 1/8 of each side, zero padded
  bool cutout = false;       // a zeroed rectangle of half of each side
  bool active() const { return color || translation || cutout; }
  bool operator==(const AugmentPolicy&) const = default;
};

// The transform names in the order they run: color, translation, cutout.
const std::vector<std::string>& AugmentTransformNames();

// "off" or the canonical comma list ("color,translation,cutout", "translation", ...):
// what run.json and checkpoints record and what ParseAugmentPolicy reads back.
std::string AugmentPolicyName(const AugmentPolicy& policy);

// Reads a setting's value. Errors name `setting` (with its "--"), the value and what is
// accepted: an unknown transform (listing the valid ones), an empty entry, a transform
// given twice, or `off` combined with transforms.
absl::StatusOr<AugmentPolicy> ParseAugmentPolicy(const std::string& setting, const std::string& text);

}  // namespace gantry
