// TLS end to end: gantry-coordinator with a self-signed certificate, and the CLI
// verifying it with --tls-ca. Skipped when the openssl command is not installed.
#include <filesystem>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/coordinator/process_harness.h"

namespace gantry {
namespace {

TEST(CoordinatorTls, TheCliVerifiesTheServerCertificate) {
  if (!std::filesystem::exists("/usr/bin/openssl")) GTEST_FAIL() << "no /usr/bin/openssl (bash scripts/install_deps.sh installs it)";
  const testing::Folders s = testing::MakeFolders("e2e_tls");
  const testing::CommandResult made = testing::RunCommand(
      absl::StrCat("/usr/bin/openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 ",
                   "-subj /CN=localhost -addext subjectAltName=DNS:localhost,IP:127.0.0.1 -keyout ", s.dir,
                   "/key.pem -out ", s.dir, "/cert.pem"),
      30);
  ASSERT_EQ(made.exit_code, 0) << made.output;
  testing::CoordinatorProcess coordinator(s.dir, s.dir + "/gantry.db", s.root,
                                          {"--tls-cert", s.dir + "/cert.pem", "--tls-key", s.dir + "/key.pem"});
  ASSERT_TRUE(coordinator.started());
  const std::string gantry = std::string(GANTRY_CLI_BIN) + " --timeout 5 --coordinator " + coordinator.address();
  const testing::CommandResult verified = testing::RunCommand(gantry + " --tls-ca " + s.dir + "/cert.pem jobs", 30);
  EXPECT_EQ(verified.exit_code, 0) << verified.output;
  // Plain text to a TLS port, and TLS without the CA, both fail to connect.
  EXPECT_EQ(testing::RunCommand(gantry + " jobs", 30).exit_code, 5);
  EXPECT_EQ(testing::RunCommand(gantry + " --tls jobs", 30).exit_code, 5);
}

}  // namespace
}  // namespace gantry
