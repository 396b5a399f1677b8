// PEM files are checked before gRPC gets them, so a wrong or damaged file is named at
// once instead of failing every connection.
#include "common/pem_text.h"

#include <string>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace gantry {
namespace {

using ::testing::HasSubstr;

// A PEM block of `label` around one DER SEQUENCE of `payload` bytes.
std::string Block(const std::string& label, size_t payload = 300) {
  std::string der = payload < 128 ? std::string{'\x30', static_cast<char>(payload)}
                                  : std::string{'\x30', '\x82', static_cast<char>(payload >> 8),
                                                static_cast<char>(payload & 0xff)};
  der += std::string(payload, '\x05');
  std::string base64 = absl::Base64Escape(der), wrapped;
  for (size_t i = 0; i < base64.size(); i += 64) wrapped += base64.substr(i, 64) + "\n";
  return absl::StrCat("-----BEGIN ", label, "-----\n", wrapped, "-----END ", label, "-----\n");
}

TEST(CheckPemText, AcceptsCertificatesAndKeys) {
  EXPECT_TRUE(CheckPemText(Block("CERTIFICATE"), PemContent::kCertificates, "--tls-ca ca.pem").ok());
  // A chain, with the text openssl puts between blocks.
  EXPECT_TRUE(CheckPemText("subject=CN=x\n" + Block("CERTIFICATE") + "\n" + Block("CERTIFICATE", 90),
                           PemContent::kCertificates, "--tls-ca ca.pem")
                  .ok());
  for (const char* label : {"PRIVATE KEY", "RSA PRIVATE KEY", "EC PRIVATE KEY"}) {
    EXPECT_TRUE(CheckPemText(Block(label), PemContent::kPrivateKey, "--tls-key k.pem").ok()) << label;
  }
}

TEST(CheckPemText, RefusesJunkAndDamageNamingTheFile) {
  const std::string cert = Block("CERTIFICATE");
  struct Case {
    std::string text;
    PemContent kind;
    std::string expected;
  };
  const std::vector<Case> cases = {
      {"junk\n", PemContent::kCertificates, "holds no PEM block"},
      {"", PemContent::kCertificates, "holds no PEM block"},
      {cert.substr(0, cert.size() / 2), PemContent::kCertificates, "has no END line"},
      {"-----BEGIN CERT", PemContent::kCertificates, "cut short"},
      {"-----BEGIN CERTIFICATE-----\n!!!!\n-----END CERTIFICATE-----\n", PemContent::kCertificates, "damaged"},
      // A line lost from the middle: base64 still, but the DER length no longer matches.
      {cert.substr(0, 40) + cert.substr(40 + 65), PemContent::kCertificates, "damaged"},
      {Block("PRIVATE KEY"), PemContent::kCertificates, "none of the kind needed"},
      {cert, PemContent::kPrivateKey, "none of the kind needed"},
      {Block("ENCRYPTED PRIVATE KEY"), PemContent::kPrivateKey, "encrypted"},
  };
  for (const Case& c : cases) {
    const absl::Status s = CheckPemText(c.text, c.kind, "--tls-ca /x/junk.pem");
    EXPECT_TRUE(absl::IsInvalidArgument(s)) << c.expected << ": " << s;
    EXPECT_THAT(std::string(s.message()), HasSubstr("--tls-ca /x/junk.pem: ")) << c.expected;
    EXPECT_THAT(std::string(s.message()), HasSubstr(c.expected)) << s;
  }
}

}  // namespace
}  // namespace gantry
