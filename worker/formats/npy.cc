#include "worker/formats/npy.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cerrno>
#include <cstring>
#include <optional>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/check.h"
#include "common/file_io.h"
#include "common/printable_text.h"
#include "common/status_macros.h"

namespace gantry {
namespace {

static_assert(std::endian::native == std::endian::little, "npy I/O assumes a little-endian host");

constexpr std::string_view kMagic = "\x93NUMPY";
constexpr size_t kAlign = 64;


absl::StatusOr<int64_t> NumElements(const std::string& path, const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0 || __builtin_mul_overflow(n, d, &n) || n > (int64_t{1} << 60)) {
      return absl::InvalidArgumentError(absl::StrCat(path, ": bad shape (", absl::StrJoin(shape, ", "),
                                                     "): dimensions must be >= 0 and not overflow"));
    }
  }
  return n;
}

std::string ShapeTuple(const std::vector<int64_t>& shape) {
  return absl::StrCat("(", absl::StrJoin(shape, ", "), shape.size() == 1 ? ",)" : ")");
}

// A parser for the Python dict literal numpy writes as the header, e.g.
// {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
class HeaderParser {
 public:
  HeaderParser(const std::string& path, std::string_view text) : path_(path), text_(text) {}

  absl::Status Parse(std::string* descr, bool* fortran_order, std::vector<int64_t>* shape) {
    bool seen_descr = false, seen_order = false, seen_shape = false;
    if (!Eat('{')) return Error("expected '{'");
    while (!Eat('}')) {
      std::optional<std::string> key = String();
      if (!key) return Error("expected a quoted key");
      if (!Eat(':')) return Error("expected ':'");
      if (*key == "descr") {
        std::optional<std::string> value = String();
        if (!value) return Error("expected a quoted dtype after 'descr'");
        *descr = *value;
        seen_descr = true;
      } else if (*key == "fortran_order") {
        if (Word("True")) {
          *fortran_order = true;
        } else if (Word("False")) {
          *fortran_order = false;
        } else {
          return Error("expected True or False after 'fortran_order'");
        }
        seen_order = true;
      } else if (*key == "shape") {
        if (!Shape(shape)) return Error("expected a tuple of integers after 'shape'");
        seen_shape = true;
      } else {
        return Error(absl::StrCat("unknown key '", *key, "'"));
      }
      if (!Eat(',') && !Peek('}')) return Error("expected ',' or '}'");
    }
    if (!seen_descr || !seen_order || !seen_shape) {
      return Error("missing 'descr', 'fortran_order' or 'shape'");
    }
    return absl::OkStatus();
  }

 private:
  void SkipSpace() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t' || text_[pos_] == '\n')) ++pos_;
  }
  bool Peek(char c) {
    SkipSpace();
    return pos_ < text_.size() && text_[pos_] == c;
  }
  bool Eat(char c) {
    if (!Peek(c)) return false;
    ++pos_;
    return true;
  }
  bool Word(std::string_view word) {
    SkipSpace();
    if (text_.substr(pos_, word.size()) != word) return false;
    pos_ += word.size();
    return true;
  }
  std::optional<std::string> String() {
    SkipSpace();
    if (pos_ >= text_.size() || (text_[pos_] != '\'' && text_[pos_] != '"')) return std::nullopt;
    const char quote = text_[pos_];
    const size_t close = text_.find(quote, pos_ + 1);
    if (close == std::string_view::npos) return std::nullopt;
    std::string s(text_.substr(pos_ + 1, close - pos_ - 1));
    pos_ = close + 1;
    return s;
  }
  // A Python tuple of non-negative integers; Python 2 numpy wrote longs as "3L".
  bool Shape(std::vector<int64_t>* shape) {
    shape->clear();
    if (!Eat('(')) return false;
    while (!Eat(')')) {
      SkipSpace();
      int64_t value = 0;
      size_t digits = 0;
      while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9' && digits < 18) {
        value = value * 10 + (text_[pos_++] - '0');
        ++digits;
      }
      if (digits == 0) return false;
      if (pos_ < text_.size() && text_[pos_] == 'L') ++pos_;
      shape->push_back(value);
      if (!Eat(',') && !Peek(')')) return false;
    }
    return true;
  }
  // Quotes the header around the fault only (a header may be 64 KiB of anything), escaped.
  absl::Status Error(const std::string& what) {
    constexpr size_t kContext = 24;
    const size_t from = pos_ > kContext ? pos_ - kContext : 0;
    const std::string_view near = text_.substr(std::min(from, text_.size()), 2 * kContext);
    return absl::InvalidArgumentError(absl::StrCat(path_, ": malformed .npy header (", what, " at offset ", pos_,
                                                   " of ", text_.size(), ", near \"", from > 0 ? "..." : "",
                                                   EscapeForTerminal(absl::string_view(near.data(), near.size())),
                                                   from + near.size() < text_.size() ? "..." : "", "\")"));
  }

  const std::string& path_;
  std::string_view text_;
  size_t pos_ = 0;
};

uint32_t LittleEndian(const std::string& bytes, size_t at, int width) {
  uint32_t v = 0;
  for (int i = width - 1; i >= 0; --i) v = (v << 8) | static_cast<uint8_t>(bytes[at + i]);
  return v;
}

}  // namespace

namespace {

absl::Status WriteOrCreateNpy(const std::string& path, const float* data, const std::vector<int64_t>& shape,
                              bool replace) {
  ASSIGN_OR_RETURN(const int64_t numel, NumElements(path, shape));
  CHECK(data != nullptr || numel == 0) << "WriteNpy(" << path << ") with no data";
  std::string dict =
      absl::StrCat("{'descr': '<f4', 'fortran_order': False, 'shape': ", ShapeTuple(shape), ", }");
  const size_t unpadded = kMagic.size() + 4 + dict.size() + 1;
  dict.append((kAlign - unpadded % kAlign) % kAlign, ' ');
  dict.push_back('\n');
  if (dict.size() > 0xffff) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": shape of ", shape.size(), " dims is too long for npy v1.0"));
  }
  std::string header(kMagic);
  header.push_back('\x01');
  header.push_back('\x00');
  header.push_back(static_cast<char>(dict.size() & 0xff));
  header.push_back(static_cast<char>(dict.size() >> 8));
  header += dict;
  const ByteSpan head{header.data(), header.size()};
  const ByteSpan body{data, static_cast<size_t>(numel) * sizeof(float)};
  return replace ? WriteFileAtomically(path, {head, body}) : CreateFileAtomically(path, {head, body});
}

}  // namespace

absl::Status WriteNpy(const std::string& path, const float* data, const std::vector<int64_t>& shape) {
  return WriteOrCreateNpy(path, data, shape, /*replace=*/true);
}

absl::Status CreateNpy(const std::string& path, const float* data, const std::vector<int64_t>& shape) {
  return WriteOrCreateNpy(path, data, shape, /*replace=*/false);
}

absl::StatusOr<NpyArray> ReadNpy(const std::string& path, size_t max_bytes) {
  ASSIGN_OR_RETURN(const std::vector<uint8_t> raw, ReadFileBytes(path, max_bytes));
  const std::string bytes(raw.begin(), raw.end());
  if (bytes.size() < 10 || std::string_view(bytes).substr(0, kMagic.size()) != kMagic) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": not a .npy file (it does not start with \\x93NUMPY)"));
  }
  const int major = static_cast<uint8_t>(bytes[6]);
  if (major < 1 || major > 3) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": unsupported .npy format version ", major, ".",
                                                   static_cast<int>(static_cast<uint8_t>(bytes[7])),
                                                   " (1.x to 3.x are read)"));
  }
  const size_t len_width = major == 1 ? 2 : 4;
  const size_t header_begin = 8 + len_width;
  if (bytes.size() < header_begin) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": truncated .npy header"));
  }
  const size_t header_len = LittleEndian(bytes, 8, static_cast<int>(len_width));
  if (bytes.size() < header_begin + header_len) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": truncated: the .npy header says ", header_len,
                                                   " bytes but the file ends before"));
  }

  std::string descr;
  bool fortran_order = false;
  NpyArray array;
  HeaderParser parser(path, std::string_view(bytes).substr(header_begin, header_len));
  RETURN_IF_ERROR(parser.Parse(&descr, &fortran_order, &array.shape));
  if (descr != "<f4" && descr != "<f8") {
    return absl::InvalidArgumentError(absl::StrCat(
        path, ": unsupported dtype '", descr, "' (only '<f4' and '<f8' are read; save arr.astype('<f4'))"));
  }
  if (fortran_order) {
    return absl::InvalidArgumentError(absl::StrCat(
        path, ": fortran_order arrays are not supported; save np.ascontiguousarray(arr) instead"));
  }
  ASSIGN_OR_RETURN(const int64_t numel, NumElements(path, array.shape));
  const size_t item = descr == "<f4" ? 4 : 8;
  const size_t expected = static_cast<size_t>(numel) * item;
  const size_t present = bytes.size() - header_begin - header_len;
  if (present != expected) {
    return absl::InvalidArgumentError(absl::StrCat(
        path, ": ", present < expected ? "truncated" : "trailing bytes", ": shape ", ShapeTuple(array.shape),
        " of ", descr, " needs ", expected, " data bytes but ", present, " follow the header"));
  }
  const char* payload = bytes.data() + header_begin + header_len;
  array.data.resize(static_cast<size_t>(numel));
  if (item == 4) {
    // (memcpy with the null data() of an empty array is undefined, even for 0 bytes.)
    if (expected > 0) std::memcpy(array.data.data(), payload, expected);
  } else {
    for (int64_t i = 0; i < numel; ++i) {
      double v;
      std::memcpy(&v, payload + i * 8, 8);
      array.data[static_cast<size_t>(i)] = static_cast<float>(v);
    }
  }
  return array;
}

}  // namespace gantry
