// The dashboard end to end: a real gantry-coordinator with --http-listen, `mpirun -np 2
// gantry-worker serve` training a small Fashion-MNIST sweep, and the page opened in
// headless Chromium once the job has ended. The DOM Chromium built (after running the
// page's script against the live JSON endpoints) must show the job, its state and one
// row per (batch size, epoch); the screenshot is kept under
// build/Testing/artifacts/dashboard.png for a person to look at. Fails without
// Chromium, mpirun or the dataset (scripts/test.sh installs them).
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <regex>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/coordinator/coordinator_harness.h"
#include "tests/pool/e2e/pool_harness.h"

namespace gantry {
namespace {

using ::testing::HasSubstr;
using testing::CommandResult;
using testing::Gantry;
using testing::RunCommand;

// Debian's chromium, or "" when it is not installed.
std::string FindChromium() {
  for (const char* path : {"/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"}) {
    if (access(path, X_OK) == 0) return path;
  }
  return "";
}

// `chromium --headless` with a profile of its own in `dir`, and `what` (--dump-dom or
// --screenshot=...) of `url` after the page's script had `budget_ms` of virtual time.
std::string Headless(const std::string& chromium, const std::string& dir, const std::string& what,
                     const std::string& url, int budget_ms) {
  return chromium + " --headless --disable-gpu --no-sandbox --no-first-run --disable-dev-shm-usage " +
         "--user-data-dir=" + dir + "/chromium --window-size=1280,1700 --hide-scrollbars " +
         "--virtual-time-budget=" + std::to_string(budget_ms) + " " + what + " '" + url + "'";
}

TEST(DashboardEndToEnd, ChromiumShowsATrainedJobAndItsEpochRows) {
  const std::string chromium = FindChromium();
  if (chromium.empty()) GTEST_FAIL() << "no chromium (apt-get install chromium, or GANTRY_WITH_BROWSER=1 "
                                        "scripts/install_deps.sh; scripts/test.sh installs it)";
  if (const std::string missing = testing::MissingPrerequisite(); !missing.empty()) GTEST_FAIL() << missing;
  const std::string dir = testing::MakeTempDir("dashboard_e2e");
  const std::string http_port_file = dir + "/http_port";
  testing::CoordinatorProcess coordinator(dir, dir + "/gantry.db", testing::kDataRoot,
                                          {"--http-listen", "127.0.0.1:0", "--http-port-file", http_port_file});
  ASSERT_TRUE(coordinator.started());
  int http_port = 0;
  ASSERT_TRUE(testing::WaitUntil([&] { return (std::ifstream(http_port_file) >> http_port) && http_port > 0; }, 10));
  const int port = coordinator.port();

  const CommandResult submitted = RunCommand(
      Gantry(port, "--json submit --dataset fashion-mnist --world-size 2 --limit-images 128 --batch-size 32,64 "
                   "--epochs 2 --name dashboard-e2e"),
      30, /*with_stderr=*/false);
  ASSERT_EQ(submitted.exit_code, 0) << submitted.output;
  const std::string id = nlohmann::json::parse(submitted.output).at("id").get<std::string>();
  testing::PoolProcess pool(dir, coordinator.address(), {"--max-jobs", "1", "--report-seconds", "0.5"});
  const CommandResult watched = RunCommand(Gantry(port, "watch " + id + " --for 40"), 50, false);
  ASSERT_THAT(watched.output, HasSubstr(id + " succeeded")) << pool.process().Log();
  EXPECT_EQ(pool.process().Wait(30), 0) << pool.process().Log();

  const std::string url = "http://127.0.0.1:" + std::to_string(http_port) + "/#" + id;
  const CommandResult dom = RunCommand(Headless(chromium, dir, "--dump-dom", url, 8000), 60, /*with_stderr=*/false);
  ASSERT_EQ(dom.exit_code, 0) << dom.output;
  const std::string& html = dom.output;
  EXPECT_THAT(html, HasSubstr(id + " — dashboard-e2e")) << html;
  EXPECT_THAT(html, HasSubstr("state-succeeded"));
  // One row per (batch size, epoch), in sweep order: "<tr><td>32</td><td>1</td>...".
  const std::string epochs_table = html.substr(html.find("<table id=\"epochs\">"));
  const std::string epochs_body = epochs_table.substr(0, epochs_table.find("</table>"));
  std::vector<std::string> rows;
  const std::regex row_start("<tr><td>([0-9]+)</td><td>([0-9]+)</td>");
  for (auto it = std::sregex_iterator(epochs_body.begin(), epochs_body.end(), row_start);
       it != std::sregex_iterator(); ++it) {
    rows.push_back((*it)[1].str() + "/" + (*it)[2].str());
  }
  EXPECT_EQ(rows, (std::vector<std::string>{"32/1", "32/2", "64/1", "64/2"})) << epochs_body;
  EXPECT_THAT(html, HasSubstr("Newest sample grid (batch 64, epoch 2)"));
  EXPECT_THAT(html, HasSubstr("<svg")) << "the charts were drawn";

  // The screenshot, kept for a person to look at.
  std::filesystem::create_directories(GANTRY_ARTIFACTS_DIR);
  const std::string png = std::string(GANTRY_ARTIFACTS_DIR) + "/dashboard.png";
  std::filesystem::remove(png);
  const CommandResult shot = RunCommand(Headless(chromium, dir, "--screenshot=" + png, url, 8000), 60);
  EXPECT_EQ(shot.exit_code, 0) << shot.output;
  ASSERT_TRUE(std::filesystem::exists(png)) << shot.output;
  EXPECT_GT(std::filesystem::file_size(png), 10000u) << "a screenshot of a drawn page, not a blank one";
}

}  // namespace
}  // namespace gantry
