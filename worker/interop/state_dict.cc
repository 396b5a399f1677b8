#include "worker/interop/state_dict.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/bf16.h"
#include "common/fp16.h"
#include "common/printable_text.h"
#include "common/status_macros.h"

namespace gantry {
namespace {

// The entries of both buffers, parameters first, with the flat buffer each lives in.
struct NamedEntry {
  const std::string* key;
  const FlatParameters::Entry* entry;
  bool buffer;
};

absl::StatusOr<std::vector<NamedEntry>> Pair(const FlatParameters& p, const TorchNames& names) {
  if (names.params.size() != p.param_entries().size() || names.buffers.size() != p.buffer_entries().size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the network has ", p.param_entries().size(), " parameter tensors and ", p.buffer_entries().size(),
        " buffers, but its PyTorch twin names ", names.params.size(), " and ", names.buffers.size(),
        names.empty() ? " (this model has no PyTorch twin)" : ""));
  }
  std::vector<NamedEntry> pairs;
  for (size_t i = 0; i < names.params.size(); ++i) pairs.push_back({&names.params[i], &p.param_entries()[i], false});
  for (size_t i = 0; i < names.buffers.size(); ++i) {
    pairs.push_back({&names.buffers[i], &p.buffer_entries()[i], true});
  }
  return pairs;
}

std::string Encode(const float* values, int64_t n, StDtype dtype) {
  if (dtype == StDtype::kF32) return std::string(reinterpret_cast<const char*>(values), n * sizeof(float));
  std::string bytes(n * sizeof(uint16_t), '\0');
  for (int64_t i = 0; i < n; ++i) {
    const uint16_t bits = bf16::FromFloat(values[i]).bits;
    std::memcpy(bytes.data() + i * sizeof(uint16_t), &bits, sizeof(bits));
  }
  return bytes;
}

std::vector<float> Decode(const StTensor& t) {
  const size_t n = t.bytes.size() / StDtypeSize(t.dtype);
  std::vector<float> values(n);
  const char* src = t.bytes.data();
  for (size_t i = 0; i < n; ++i) {
    switch (t.dtype) {
      case StDtype::kF64: {
        double v;
        std::memcpy(&v, src + i * 8, 8);
        values[i] = static_cast<float>(v);
        break;
      }
      case StDtype::kF32: std::memcpy(&values[i], src + i * 4, 4); break;
      case StDtype::kF16:
      case StDtype::kBf16: {
        uint16_t bits;
        std::memcpy(&bits, src + i * 2, 2);
        values[i] = t.dtype == StDtype::kF16 ? fp16::FromBits(bits).ToFloat() : bf16::FromBits(bits).ToFloat();
        break;
      }
      case StDtype::kI64: break;  // refused before decoding
    }
  }
  return values;
}

std::set<std::string> ExpectedKeys(const TorchNames& names) {
  std::set<std::string> keys(names.params.begin(), names.params.end());
  keys.insert(names.buffers.begin(), names.buffers.end());
  return keys;
}

// The file's tensors by name, PyTorch's BatchNorm counters left out.
std::map<std::string, const StTensor*> TensorsByName(const StFile& file) {
  std::map<std::string, const StTensor*> by_name;
  for (const StTensor& t : file.tensors) {
    if (!t.name.ends_with(".num_batches_tracked")) by_name[t.name] = &t;
  }
  return by_name;
}

absl::Status CheckKeys(const std::map<std::string, const StTensor*>& found, const TorchNames& names,
                       const std::string& path) {
  const std::set<std::string> expected = ExpectedKeys(names);
  std::vector<std::string> missing, unexpected;
  for (const std::string& k : expected) {
    if (!found.contains(k)) missing.push_back(k);
  }
  for (const auto& [k, t] : found) {
    if (!expected.contains(k)) unexpected.push_back(k);
  }
  if (missing.empty() && unexpected.empty()) return absl::OkStatus();
  auto some = [](const std::vector<std::string>& keys) {
    const size_t shown = std::min<size_t>(keys.size(), 5);
    std::vector<std::string> quoted;
    for (size_t i = 0; i < shown; ++i) quoted.push_back(NameForMessage(keys[i]));
    return absl::StrCat(absl::StrJoin(quoted, ", "), keys.size() > shown ? ", ..." : "");
  };
  return absl::InvalidArgumentError(absl::StrCat(
      path, ": the tensors do not match the network's PyTorch state_dict (docs/export.md)",
      missing.empty() ? "" : absl::StrCat("; missing ", missing.size(), ": ", some(missing)),
      unexpected.empty() ? "" : absl::StrCat("; unexpected ", unexpected.size(), ": ", some(unexpected))));
}

// The largest magnitude a loaded weight or BatchNorm statistic may have. Trained DCGAN
// and Pix2Pix weights stay within +-10 and their running statistics far within 1e8; a
// weight of 1e30 is finite but overflows fp32 in the first products, so it is refused by
// the file and tensor instead of failing later as a diverging run.
constexpr float kMaxWeightMagnitude = 1e4f;
constexpr float kMaxBufferMagnitude = 1e8f;

// The values of `t` for `entry` (`buffer`: a BatchNorm statistic), or why they do not
// fit it: a dtype or shape of another tensor, a value that is not finite, a negative
// running variance, or a magnitude past the bounds above.
absl::StatusOr<std::vector<float>> ValuesFor(const StTensor& t, const FlatParameters::Entry& entry, bool buffer,
                                             const std::string& path) {
  const std::vector<int64_t>& want = entry.spec.shape.dims();
  if (t.dtype == StDtype::kI64) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": tensor '", NameForMessage(t.name),
                                                   "' is I64; a weight must be F32, BF16, "
                                                   "F16 or F64"));
  }
  if (t.shape != want) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": tensor '", NameForMessage(t.name), "' has shape [",
                                                   absl::StrJoin(t.shape, ", "), "]; the network's is [",
                                                   absl::StrJoin(want, ", "), "] (another model size?)"));
  }
  std::vector<float> values = Decode(t);
  const bool variance = t.name.ends_with("running_var");
  const float bound = buffer ? kMaxBufferMagnitude : kMaxWeightMagnitude;
  for (float v : values) {
    if (!std::isfinite(v)) {
      return absl::InvalidArgumentError(absl::StrCat(path, ": tensor '", NameForMessage(t.name), "' holds ", v,
                                                     "; a network's weights must be finite"));
    }
    if (variance && v < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, ": tensor '", NameForMessage(t.name), "' holds ", v,
                       "; a BatchNorm running variance cannot be negative (every "
                       "sample would be NaN): the file is damaged or not a trained network"));
    }
    if (std::fabs(v) > bound) {
      return absl::InvalidArgumentError(absl::StrCat(path, ": tensor '", NameForMessage(t.name), "' holds ", v, "; ",
                                                     buffer ? "a BatchNorm statistic" : "a weight",
                                                     " of a trained network lies within +-", bound,
                                                     " (larger ones overflow the first steps): the file is "
                                                     "damaged or not a trained network"));
    }
  }
  return values;
}

}  // namespace

absl::StatusOr<StFile> NetworkToSafetensors(const FlatParameters& p, const TorchNames& names, StDtype dtype,
                                            int64_t batches_tracked) {
  if (dtype != StDtype::kF32 && dtype != StDtype::kBf16) {
    return absl::InvalidArgumentError(absl::StrCat("cannot export as ", StDtypeName(dtype), ": use F32 or BF16"));
  }
  ASSIGN_OR_RETURN(const std::vector<NamedEntry> pairs, Pair(p, names));
  const Tensor params = p.params().On(Device::kCpu);
  const Tensor buffers = p.buffers().On(Device::kCpu);
  StFile file;
  for (const NamedEntry& e : pairs) {
    // Running statistics stay fp32 whatever the weights' dtype: PyTorch keeps them so.
    const StDtype as = e.buffer ? StDtype::kF32 : dtype;
    const float* values = (e.buffer ? buffers : params).data() + e.entry->offset;
    file.tensors.push_back(
        {*e.key, as, e.entry->spec.shape.dims(), Encode(values, e.entry->spec.shape.numel(), as)});
  }
  for (const std::string& counter : BatchCounterNames(names)) {
    file.tensors.push_back(
        {counter, StDtype::kI64, {}, std::string(reinterpret_cast<const char*>(&batches_tracked), sizeof(int64_t))});
  }
  return file;
}

bool HoldsNetwork(const StFile& file, const TorchNames& names) {
  const std::map<std::string, const StTensor*> found = TensorsByName(file);
  return !names.empty() && CheckKeys(found, names, "").ok();
}

absl::Status LoadSafetensorsIntoNetwork(const StFile& file, const std::string& path, const TorchNames& names,
                                        FlatParameters& p) {
  ASSIGN_OR_RETURN(const std::vector<NamedEntry> pairs, Pair(p, names));
  const std::map<std::string, const StTensor*> found = TensorsByName(file);
  RETURN_IF_ERROR(CheckKeys(found, names, path));
  std::vector<float> params(p.params().numel()), buffers(p.buffers().numel());
  for (const NamedEntry& e : pairs) {
    ASSIGN_OR_RETURN(const std::vector<float> values, ValuesFor(*found.at(*e.key), *e.entry, e.buffer, path));
    std::copy(values.begin(), values.end(), (e.buffer ? buffers : params).begin() + e.entry->offset);
  }
  p.params().CopyFrom(Tensor::FromVector(p.params().shape(), params));
  if (!buffers.empty()) p.buffers().CopyFrom(Tensor::FromVector(p.buffers().shape(), buffers));
  return absl::OkStatus();
}

}  // namespace gantry
