#include "common/printable_text.h"

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace gantry {
namespace {

bool IsContinuation(unsigned char b) { return (b & 0xC0) == 0x80; }

// The length of the well-formed UTF-8 sequence starting at `text[i]`, or 0 when it is
// malformed, overlong, a UTF-16 surrogate or above U+10FFFF.
size_t Utf8Length(absl::string_view text, size_t i) {
  const auto at = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char b = at(i);
  if (b < 0x80) return 1;
  size_t length = 0;
  unsigned char lo = 0x80, hi = 0xBF;  // the allowed range of the second byte
  if (b >= 0xC2 && b <= 0xDF) {
    length = 2;
  } else if (b >= 0xE0 && b <= 0xEF) {
    length = 3;
    if (b == 0xE0) lo = 0xA0;  // overlong
    if (b == 0xED) hi = 0x9F;  // UTF-16 surrogates
  } else if (b >= 0xF0 && b <= 0xF4) {
    length = 4;
    if (b == 0xF0) lo = 0x90;  // overlong
    if (b == 0xF4) hi = 0x8F;  // above U+10FFFF
  } else {
    return 0;
  }
  if (i + length > text.size() || at(i + 1) < lo || at(i + 1) > hi) return 0;
  for (size_t k = i + 2; k < i + length; ++k) {
    if (!IsContinuation(at(k))) return 0;
  }
  return length;
}

// The length of the printable character starting at `text[i]`, or 0 when that byte
// starts nothing printable (a control, DEL, a C1 control, or what Utf8Length refuses).
size_t PrintableLength(absl::string_view text, size_t i, bool ascii_only) {
  const auto at = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char b = at(i);
  if (b < 0x20 || b == 0x7F) return 0;
  if (b < 0x80) return 1;
  if (ascii_only) return 0;
  const size_t length = Utf8Length(text, i);
  if (length == 2 && b == 0xC2 && at(i + 1) <= 0x9F) return 0;  // U+0080-U+009F: C1 controls (0x9B is a CSI)
  return length;
}

}  // namespace

UnprintableByte FindUnprintable(absl::string_view text, bool ascii_only) {
  for (size_t i = 0; i < text.size();) {
    const size_t n = PrintableLength(text, i, ascii_only);
    if (n == 0) return {true, i, static_cast<unsigned char>(text[i])};
    i += n;
  }
  return {};
}

UnprintableByte FindInvalidUtf8(absl::string_view text) {
  for (size_t i = 0; i < text.size();) {
    const size_t n = Utf8Length(text, i);
    if (n == 0) return {true, i, static_cast<unsigned char>(text[i])};
    i += n;
  }
  return {};
}

std::string DescribeUnprintable(const UnprintableByte& bad) {
  return absl::StrFormat("byte 0x%02x at position %d", bad.value, bad.position);
}

absl::Status CheckPrintableField(absl::string_view field, absl::string_view text, absl::string_view what) {
  const UnprintableByte bad = FindUnprintable(text, /*ascii_only=*/false);
  if (!bad.found) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(field, ": holds a control character or invalid UTF-8 (",
                                                 DescribeUnprintable(bad), "); ", what,
                                                 " is one line of printable text"));
}

absl::StatusOr<std::string> CleanToken(absl::string_view raw, absl::string_view source) {
  const absl::string_view token = absl::StripAsciiWhitespace(raw);
  if (token.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(source, ": the token is empty; give the coordinator's token (make one with `openssl rand -hex 32`)"));
  }
  const UnprintableByte bad = FindUnprintable(token, /*ascii_only=*/true);
  if (bad.found) {
    return absl::InvalidArgumentError(absl::StrCat(
        source, ": the token holds a byte that is not printable ASCII (", DescribeUnprintable(bad),
        " after trimming surrounding whitespace); a token is printable ASCII, e.g. from `openssl rand -hex 32`: "
        "check the file or variable it came from"));
  }
  return std::string(token);
}

std::string EscapeForTerminal(absl::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    const size_t n = PrintableLength(text, i, /*ascii_only=*/false);
    if (n > 0) {
      if (text[i] == '\\') out += '\\';
      out.append(text.data() + i, n);
      i += n;
      continue;
    }
    switch (text[i]) {
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '\x1b': out += "\\e"; break;
      default: absl::StrAppendFormat(&out, "\\x%02x", static_cast<unsigned char>(text[i]));
    }
    ++i;
  }
  return out;
}

std::string NameForMessage(absl::string_view name) {
  std::string out = EscapeForTerminal(name.substr(0, kMaxQuotedNameBytes));
  if (name.size() > kMaxQuotedNameBytes) absl::StrAppend(&out, "\u2026 (", name.size(), " bytes)");
  return out;
}

}  // namespace gantry
