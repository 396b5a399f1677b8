// The pieces under the coordinator's HTTP listener: the Prometheus text writer (checked
// with the strict reader in prometheus_parser.h, which is itself checked to refuse bad
// text), the RPC latency histogram, a job's progress and ETA, and the run-folder reader
// that must not leave the run folder.
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>

#include <regex>

#include "coordinator/http/dashboard_assets.h"
#include "coordinator/jobs/job_outlook.h"
#include "common/prometheus_text.h"
#include "coordinator/service/rpc_metrics.h"
#include "coordinator/http/run_folder_files.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/coordinator/coordinator_harness.h"
#include "tests/coordinator/prometheus_parser.h"

namespace gantry {
namespace {

namespace fs = std::filesystem;
using testing::Exposition;
using testing::ParsePrometheusText;

Exposition Parse(const std::string& text) {
  std::string error;
  std::optional<Exposition> parsed = ParsePrometheusText(text, &error);
  EXPECT_TRUE(parsed.has_value()) << error << "\n" << text;
  return parsed.value_or(Exposition());
}

TEST(PrometheusText, EscapesLabelValuesAndHelpAndRoundTripsThroughTheReader) {
  PrometheusText out;
  out.Family("gantry_test_value", PrometheusText::Type::kGauge, "A help text with a \\ backslash\nand a newline.");
  out.Sample({{"name", "a \"quoted\" \\ name\nsecond line"}, {"rank", "1"}}, 0.25);
  out.Sample({}, std::numeric_limits<double>::infinity());
  out.Family("gantry_test_total", PrometheusText::Type::kCounter, "Counted.");
  out.Sample({{"code", "OK"}}, 12345678901.0);
  EXPECT_NE(out.text().find(R"(name="a \"quoted\" \\ name\nsecond line")"), std::string::npos) << out.text();
  EXPECT_NE(out.text().find("# HELP gantry_test_value A help text with a \\\\ backslash\\nand a newline.\n"),
            std::string::npos)
      << out.text();
  const Exposition e = Parse(out.text());
  EXPECT_EQ(e.families.at("gantry_test_value").type, "gauge");
  EXPECT_EQ(e.families.at("gantry_test_total").type, "counter");
  EXPECT_EQ(e.Value("gantry_test_value", {{"name", "a \"quoted\" \\ name\nsecond line"}, {"rank", "1"}}), 0.25);
  EXPECT_EQ(e.Find("gantry_test_value").size(), 2u);
  EXPECT_EQ(e.Value("gantry_test_total", {{"code", "OK"}}), 12345678901.0);
  EXPECT_EQ(PrometheusText::FormatValue(std::nan("")), "NaN");
  EXPECT_EQ(PrometheusText::FormatValue(-std::numeric_limits<double>::infinity()), "-Inf");
  EXPECT_EQ(PrometheusText::FormatValue(0.1), "0.1");
}

TEST(PrometheusText, TheReaderRefusesMalformedText) {
  const char* bad[] = {
      "gantry_x 1\n",                                                              // no TYPE
      "# TYPE gantry_x gauge\ngantry_x{a=\"b\\t\"} 1\n",                           // unknown escape
      "# TYPE gantry_x gauge\ngantry_x{a=\"b} 1\n",                                // unterminated value
      "# TYPE gantry_x gauge\ngantry_x one\n",                                     // not a number
      "# TYPE gantry_x gauge\n# TYPE gantry_x gauge\n",                            // TYPE twice
      "# TYPE gantry_x gauge\ngantry_x 1\n# TYPE gantry_y gauge\ngantry_y 1\ngantry_x 2\n",  // split family
      "# TYPE gantry_x gauge\ngantry_x 1",                                         // no final newline
      "# TYPE gantry_h histogram\ngantry_h_bucket{le=\"1\"} 3\ngantry_h_bucket{le=\"+Inf\"} 2\n"
      "gantry_h_sum 1\ngantry_h_count 2\n",                                        // not cumulative
      "# TYPE gantry_h histogram\ngantry_h_bucket{le=\"+Inf\"} 2\ngantry_h_sum 1\ngantry_h_count 3\n",  // +Inf != count
  };
  for (const char* text : bad) {
    std::string error;
    EXPECT_FALSE(ParsePrometheusText(text, &error).has_value()) << text;
  }
}

TEST(RpcMetrics, CountsByCodeAndKeepsACumulativeHistogramPerMethod) {
  RpcMetrics metrics;
  metrics.Record("/gantry.v1.Coordinator/ListJobs", 0, 0.0007);
  metrics.Record("/gantry.v1.Coordinator/ListJobs", 0, 0.2);
  metrics.Record("/gantry.v1.Coordinator/ListJobs", 16, 0.0001);
  metrics.Record("/gantry.v1.Coordinator/AcquireJob", 0, 45);  // beyond the largest bucket
  metrics.Record("/evil.Service/" + std::string(100, 'x'), 12, 0.001);
  PrometheusText out;
  metrics.Write(out);
  const Exposition e = Parse(out.text());
  EXPECT_EQ(e.Value("gantry_rpc_requests_total", {{"method", "ListJobs"}, {"code", "OK"}}), 2);
  EXPECT_EQ(e.Value("gantry_rpc_requests_total", {{"method", "ListJobs"}, {"code", "UNAUTHENTICATED"}}), 1);
  EXPECT_EQ(e.Value("gantry_rpc_requests_total", {{"service", "other"}, {"method", "other"}, {"code", "UNIMPLEMENTED"}}),
            1)
      << "an unknown method must not become a label of its own";
  EXPECT_EQ(e.Value("gantry_rpc_duration_seconds_bucket", {{"method", "ListJobs"}, {"le", "0.0005"}}), 1);
  EXPECT_EQ(e.Value("gantry_rpc_duration_seconds_bucket", {{"method", "ListJobs"}, {"le", "0.001"}}), 2);
  EXPECT_EQ(e.Value("gantry_rpc_duration_seconds_bucket", {{"method", "ListJobs"}, {"le", "0.25"}}), 3);
  EXPECT_EQ(e.Value("gantry_rpc_duration_seconds_count", {{"method", "ListJobs"}}), 3);
  EXPECT_NEAR(*e.Value("gantry_rpc_duration_seconds_sum", {{"method", "ListJobs"}}), 0.2008, 1e-12);
  EXPECT_EQ(e.Value("gantry_rpc_duration_seconds_bucket", {{"method", "AcquireJob"}, {"le", "30"}}), 0);
  EXPECT_EQ(e.Value("gantry_rpc_duration_seconds_bucket", {{"method", "AcquireJob"}, {"le", "+Inf"}}), 1);
}

v1::Job RunningJob(const std::vector<int64_t>& sweep, int64_t epochs) {
  v1::Job job;
  job.set_state(v1::JOB_STATE_RUNNING);
  for (int64_t b : sweep) job.mutable_spec()->add_batch_sizes(b);
  job.mutable_spec()->mutable_epochs()->set_value(epochs);
  return job;
}

TEST(JobOutlook, CountsSamplesAcrossTheSweepAndTheEtaAtTheCurrentRate) {
  // Batch 64 then 128, 2 epochs each, 100 steps of 64 per epoch (6400 images).
  v1::Job job = RunningJob({64, 128}, 2);
  EXPECT_FALSE(OutlookOf(job).has_value()) << "no progress yet";
  v1::Progress* p = job.mutable_progress();
  p->set_batch_size(128);
  p->set_epoch(1);
  p->set_step(10);
  p->set_steps_per_epoch(50);
  p->set_global_step(10);
  p->set_samples_per_s(640);
  std::optional<JobOutlook> o = OutlookOf(job);
  ASSERT_TRUE(o.has_value());
  // Done: all of batch 64 (2 x 6400) + 10 x 128; total 4 x 6400.
  EXPECT_DOUBLE_EQ(o->fraction_done, (12800.0 + 1280.0) / 25600.0);
  ASSERT_TRUE(o->eta_seconds.has_value());
  EXPECT_DOUBLE_EQ(*o->eta_seconds, (25600.0 - 14080.0) / 640.0);

  job.mutable_spec()->mutable_max_steps()->set_value(20);  // per batch size
  p->set_global_step(5);
  o = OutlookOf(job);
  EXPECT_DOUBLE_EQ(o->fraction_done, (20.0 * 64 + 5.0 * 128) / (20.0 * 64 + 20.0 * 128));

  job.set_state(v1::JOB_STATE_FAILED);
  o = OutlookOf(job);
  EXPECT_FALSE(o->eta_seconds.has_value()) << "an ended job has no ETA";
  job.set_state(v1::JOB_STATE_SUCCEEDED);
  EXPECT_EQ(OutlookOf(job)->fraction_done, 1.0);
}

class RunFolderFilesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::MakeTempDir("run_folder_files");
    run_ = dir_ + "/run";
    fs::create_directories(run_ + "/samples");
    std::ofstream(run_ + "/run.json") << "{}";
    std::ofstream(run_ + "/samples/epoch_001.png") << kPng << "grid 1";
    std::ofstream(dir_ + "/outside.png") << kPng << "secret";
  }

  v1::JobReport Report(std::vector<int64_t> epochs) {
    v1::JobReport report;
    report.mutable_job()->mutable_checkpoint()->set_run_folder(run_);
    report.mutable_job()->mutable_spec()->add_batch_sizes(64);
    for (int64_t e : epochs) *report.add_epochs() = testing::EpochRow(64, e, 2);
    return report;
  }

  static constexpr char kPng[] = "\x89PNG\r\n\x1a\n";
  std::string dir_, run_;
};

TEST_F(RunFolderFilesTest, ServesTheNewestReadableGrid) {
  std::ofstream(run_ + "/samples/epoch_002.png") << kPng << "grid 2";
  absl::StatusOr<SampleGrid> grid = ReadNewestSampleGrid(Report({1, 2, 3}));  // epoch 3 not written yet
  ASSERT_TRUE(grid.ok()) << grid.status();
  EXPECT_EQ(grid->epoch, 2);
  EXPECT_EQ(grid->png, std::string(kPng) + "grid 2");
  EXPECT_EQ(ReadNewestSampleGrid(Report({})).status().code(), absl::StatusCode::kNotFound);
}

TEST_F(RunFolderFilesTest, RefusesLinksFifosForeignFoldersAndOversizedFiles) {
  // A link as the file, and a link as the folder on the way to it.
  fs::create_symlink(dir_ + "/outside.png", run_ + "/samples/epoch_002.png");
  absl::StatusOr<SampleGrid> grid = ReadNewestSampleGrid(Report({1, 2}));
  EXPECT_EQ(grid.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(grid.status().message().find("symbolic link"), std::string::npos) << grid.status();
  fs::remove(run_ + "/samples/epoch_002.png");
  fs::create_directories(dir_ + "/elsewhere");
  std::ofstream(dir_ + "/elsewhere/epoch_001.png") << kPng << "secret";
  fs::rename(run_ + "/samples", run_ + "/samples.real");
  fs::create_directory_symlink(dir_ + "/elsewhere", run_ + "/samples");
  EXPECT_FALSE(ReadNewestSampleGrid(Report({1})).ok());
  EXPECT_EQ(ReadRunFolderFile(run_, {"samples", "epoch_001.png"}, 1 << 20).status().code(),
            absl::StatusCode::kPermissionDenied);

  // A FIFO is refused at once, not waited on.
  ASSERT_EQ(mkfifo((run_ + "/rollout.csv").c_str(), 0600), 0);
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(ReadRunFolderFile(run_, {"rollout.csv"}, 1 << 20).status().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));

  // A folder without run.json (say a group reported "/") exposes nothing.
  EXPECT_EQ(ReadRunFolderFile(dir_, {"outside.png"}, 1 << 20).status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(ReadRunFolderFile("relative/path", {"run.json"}, 1 << 20).status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(ReadRunFolderFile(run_, {"run.json"}, 1).status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_TRUE(ReadRunFolderFile(run_, {"run.json"}, 2).ok());
}

TEST_F(RunFolderFilesTest, ReadsARolloutCurveWhenThereIsOne) {
  v1::Job job = Report({}).job();
  EXPECT_EQ(ReadRolloutCurve(job).status().code(), absl::StatusCode::kNotFound);
  std::ofstream(run_ + "/rollout.csv") << "step,rel_l2,vorticity_corr\n1,0.01,0.999\n2,0.02,nan\n3,0.04,0.97\n";
  absl::StatusOr<nlohmann::json> curve = ReadRolloutCurve(job);
  ASSERT_TRUE(curve.ok()) << curve.status();
  EXPECT_EQ((*curve)["columns"], nlohmann::json({"step", "rel_l2", "vorticity_corr"}));
  ASSERT_EQ((*curve)["rows"].size(), 3u);
  EXPECT_EQ((*curve)["rows"][2][1], 0.04);
  EXPECT_TRUE((*curve)["rows"][1][2].is_null()) << "NaN is no point";
  std::ofstream(run_ + "/rollout.csv") << "step,rel_l2\n1,0.01,7\n";
  EXPECT_EQ(ReadRolloutCurve(job).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(RunFolderFilesTest, FindsTheRolloutThatGantryWorkerRolloutWrites) {
  v1::Job job = Report({}).job();
  // gantry-worker rollout's default output: RUN/rollout-<case>/rollout.csv.
  std::filesystem::create_directories(run_ + "/rollout-case-a");
  std::filesystem::create_directories(run_ + "/rollout-case-b");
  std::ofstream(run_ + "/rollout-case-a/rollout.csv") << "step,relative_l2\n1,0.5\n";
  std::ofstream(run_ + "/rollout-case-b/rollout.csv") << "step,relative_l2\n1,0.25\n2,0.5\n";
  absl::StatusOr<nlohmann::json> curve = ReadRolloutCurve(job);
  ASSERT_TRUE(curve.ok()) << curve.status();
  EXPECT_EQ((*curve)["rows"].size(), 2u) << "the last folder by name";
  // A link named like a rollout folder is refused, not followed.
  std::filesystem::create_symlink("/etc", run_ + "/rollout-zz");
  EXPECT_EQ(ReadRolloutCurve(job).status().code(), absl::StatusCode::kPermissionDenied);
}

TEST_F(RunFolderFilesTest, AddsTheRolloutSummaryBesideTheCurve) {
  v1::Job job = Report({}).job();
  std::filesystem::create_directories(run_ + "/rollout-case-a");
  std::ofstream(run_ + "/rollout-case-a/rollout.csv") << "step,relative_l2\n1,0.5\n";
  absl::StatusOr<nlohmann::json> curve = ReadRolloutCurve(job);
  ASSERT_TRUE(curve.ok()) << curve.status();
  EXPECT_FALSE(curve->contains("summary")) << "a rollout written before rollout.json existed";
  std::ofstream(run_ + "/rollout-case-a/rollout.json")
      << R"({"steps": 300, "first_below": 13, "first_below_loose": null, "blow_up": null, "note": "x"})";
  curve = ReadRolloutCurve(job);
  ASSERT_TRUE(curve.ok()) << curve.status();
  EXPECT_EQ((*curve)["summary"], nlohmann::json::parse(R"({"steps": 300, "first_below": 13,
                                                           "first_below_loose": null, "blow_up": null})"));
  std::ofstream(run_ + "/rollout-case-a/rollout.json") << R"({"first_below": "13"})";
  curve = ReadRolloutCurve(job);
  ASSERT_TRUE(curve.ok()) << "a bad summary still shows the curve";
  EXPECT_THAT((*curve)["summary_error"].get<std::string>(), ::testing::HasSubstr("\"first_below\" is not a number"));
  std::ofstream(run_ + "/rollout-case-a/rollout.json") << "{not json";
  EXPECT_EQ((*ReadRolloutCurve(job))["summary_error"], "rollout.json: not a JSON object");
}

TEST_F(RunFolderFilesTest, ServesTheNewestGeneratedGridAndRefusesLinks) {
  v1::Job job = Report({}).job();
  EXPECT_EQ(ReadNewestGeneratedGrid(job).status().code(), absl::StatusCode::kNotFound);
  // Two generate folders; the newer by modification time wins whatever the names.
  for (const char* name : {"generate-b", "generate-a"}) {
    fs::create_directories(run_ + "/" + name);
    std::ofstream(run_ + "/" + name + "/grid.png") << kPng << name;
  }
  fs::last_write_time(run_ + "/generate-b", fs::file_time_type::clock::now() - std::chrono::hours(1));
  absl::StatusOr<GeneratedGrid> grid = ReadNewestGeneratedGrid(job);
  ASSERT_TRUE(grid.ok()) << grid.status();
  EXPECT_EQ(grid->folder, "generate-a");
  EXPECT_EQ(grid->png, std::string(kPng) + "generate-a");
  // A folder without a grid yet, or with one that is not a PNG, is passed over.
  fs::create_directories(run_ + "/generate-c");
  EXPECT_EQ(ReadNewestGeneratedGrid(job)->folder, "generate-a");
  std::ofstream(run_ + "/generate-c/grid.png") << "not a png";
  EXPECT_EQ(ReadNewestGeneratedGrid(job)->folder, "generate-a");
  // A link named like a generate folder is refused, not followed.
  fs::remove_all(run_ + "/generate-c");
  fs::create_directories(dir_ + "/elsewhere-gen");
  std::ofstream(dir_ + "/elsewhere-gen/grid.png") << kPng << "secret";
  fs::create_directory_symlink(dir_ + "/elsewhere-gen", run_ + "/generate-zz");
  grid = ReadNewestGeneratedGrid(job);
  EXPECT_EQ(grid.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(grid.status().message().find("symbolic link"), std::string::npos) << grid.status();
}

TEST(DashboardAssets, AreCompiledInAndFetchNothingFromElsewhere) {
  std::map<std::string, const DashboardAsset*> by_path;
  for (const DashboardAsset& asset : DashboardAssets()) by_path[std::string(asset.path)] = &asset;
  ASSERT_TRUE(by_path.count("/index.html") && by_path.count("/app.js") && by_path.count("/style.css"));
  // The embedded bytes are the files' (the generator neither drops nor adds any).
  for (const auto& [path, asset] : by_path) {
    std::ifstream file(std::string(GANTRY_SOURCE_DIR) + "/coordinator/http/dashboard" + path, std::ios::binary);
    const std::string source((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
    EXPECT_EQ(std::string(asset->bytes), source) << path;
    // No CDN, font or analytics host: the only URL is the SVG namespace (a name, never fetched).
    std::string rest(asset->bytes);
    for (size_t at = rest.find("http"); at != std::string::npos; at = rest.find("http", at + 1)) {
      const std::string url = rest.substr(at, 34);
      if (url.rfind("http://", 0) == 0 || url.rfind("https://", 0) == 0) {
        EXPECT_EQ(url.substr(0, 26), "http://www.w3.org/2000/svg") << path;
      }
    }
  }
  // Every file the page loads is one of the embedded ones.
  const std::string html(by_path["/index.html"]->bytes);
  const std::regex reference(R"re((src|href)="([^"]*)")re");
  int references = 0;
  for (auto it = std::sregex_iterator(html.begin(), html.end(), reference); it != std::sregex_iterator(); ++it) {
    EXPECT_TRUE(by_path.count((*it)[2].str())) << (*it)[2].str();
    ++references;
  }
  EXPECT_EQ(references, 2);
}

}  // namespace
}  // namespace gantry
