// What `gantry` and `gantry-worker serve` make of --coordinator and --token (or
// GANTRY_COORDINATOR and GANTRY_TOKEN) before any gRPC call: gRPC aborts the process on
// a header value with a control character, and takes a port out of range modulo 65536.
#include "channel/coordinator_target.h"

#include <cstdlib>
#include <fstream>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace gantry {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kToken[] = "c0ffee0123456789c0ffee0123456789";

// Sets an environment variable for one test.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value) : name_(name) { ::setenv(name, value.c_str(), 1); }
  ~ScopedEnv() { ::unsetenv(name_); }

 private:
  const char* name_;
};

std::string WriteTemp(const std::string& name, const std::string& text) {
  const std::string path = ::testing::TempDir() + "/" + name;
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

absl::StatusOr<CoordinatorTarget> Resolve(const std::string& address, const std::string& token) {
  CoordinatorTarget given;
  given.address = address;
  given.token = token;
  return ResolveTarget(given);
}

TEST(ResolveTarget, TrimsTheNewlineOfATokenFromCatOrTheEnvironment) {
  EXPECT_EQ(Resolve("127.0.0.1:5", std::string(kToken) + "\n")->token, kToken);  // --token "$(cat tok)"$'\n'
  ScopedEnv env("GANTRY_TOKEN", std::string(kToken) + "\r\n");
  EXPECT_EQ(Resolve("127.0.0.1:5", "")->token, kToken);
  EXPECT_EQ(Resolve("127.0.0.1:5", WriteTemp("token_crlf", std::string(kToken) + "\r\n"))->token, kToken);
}

TEST(ResolveTarget, RefusesAControlCharacterInTheTokenNamingWhereItCameFrom) {
  const absl::StatusOr<CoordinatorTarget> flag = Resolve("127.0.0.1:5", "c0ffee\x07" "0123456789");
  ASSERT_FALSE(flag.ok());
  EXPECT_EQ(flag.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(flag.status().message(), HasSubstr("--token: the token holds a byte that is not printable ASCII"));
  {
    ScopedEnv env("GANTRY_TOKEN", "c0ffee\x1b[0m");
    EXPECT_THAT(Resolve("127.0.0.1:5", "").status().message(), HasSubstr("GANTRY_TOKEN: the token holds"));
  }
  const std::string file = WriteTemp("token_nul", std::string("c0ffee\0beef", 11));
  EXPECT_THAT(Resolve("127.0.0.1:5", file).status().message(), HasSubstr("--token file " + file + ": the token holds"));
  // A token longer than a file name may be is still a token, not an error of the file system.
  const absl::StatusOr<CoordinatorTarget> long_token = Resolve("127.0.0.1:5", std::string(300, 'a'));
  ASSERT_TRUE(long_token.ok()) << long_token.status();
  EXPECT_EQ(long_token->token, std::string(300, 'a'));
}

TEST(ResolveTarget, RefusesAPortOutOfRange) {
  EXPECT_THAT(Resolve("127.0.0.1:99999", "").status().message(),
              HasSubstr("--coordinator 127.0.0.1:99999: port 99999 is out of range"));
  EXPECT_THAT(Resolve("127.0.0.1:0", "").status().message(), HasSubstr("give a port in 1..65535"));
  ScopedEnv env("GANTRY_COORDINATOR", "gantry:65536");
  EXPECT_THAT(Resolve("", "").status().message(), HasSubstr("GANTRY_COORDINATOR gantry:65536: port 65536"));
  EXPECT_TRUE(Resolve("localhost:65535", "").ok());
}

}  // namespace
}  // namespace gantry
