// The datasets a run can name (--dataset) and where each lives when no --data-dir is given.
#pragma once

#include <string>
#include <vector>

namespace gantry {

// "mnist", "fashion-mnist": the names --dataset accepts.
const std::vector<std::string>& DatasetNames();

// Where a dataset lives when no --data-dir is given: "fashion-mnist" is the Debian
// package dataset-fashion-mnist's folder; "mnist" and any other name have no default
// and give "".
std::string DefaultDataDir(const std::string& dataset);

}  // namespace gantry
