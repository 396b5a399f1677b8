#include "worker/tensor/conv_problem.h"

#include <sstream>

#include "common/check.h"

namespace gantry {

std::string ConvProblem::ToString() const {
  std::ostringstream s;
  s << "conv[" << batch << "x" << in_channels << "x" << in_height << "x" << in_width << " -> " << out_channels
    << "x" << out_height << "x" << out_width << ", k" << kernel << " s" << stride << " p" << padding << ", "
    << MathPrecisionName(precision) << "]";
  return s.str();
}

void CheckConvProblem(const ConvProblem& p) {
  CHECK(p.batch > 0 && p.in_channels > 0 && p.out_channels > 0 && p.in_height > 0 && p.in_width > 0 &&
        p.kernel > 0 && p.stride > 0 && p.padding >= 0)
      << "bad " << p.ToString();
  CHECK(p.in_height + 2 * p.padding >= p.kernel && p.in_width + 2 * p.padding >= p.kernel)
      << p.ToString() << ": kernel larger than the padded input";
  CHECK(p.out_height == ConvOutSize(p.in_height, p.kernel, p.stride, p.padding) &&
        p.out_width == ConvOutSize(p.in_width, p.kernel, p.stride, p.padding))
      << p.ToString() << ": output size does not follow from the input size";
}

}  // namespace gantry
