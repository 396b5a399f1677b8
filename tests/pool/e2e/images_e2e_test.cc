// Your own images through the coordinator and a pool (`mpirun -np 2 gantry-worker serve`):
// a packed set inside the data root and a folder of pictures (packed by the pool into
// its runs' .image-cache) train to the end as jobs submitted with `gantry submit
// --dataset images`; the run folder holds the image DCGAN's run.json and colour samples;
// a generate job of the trained run makes colour samples; and what only an image run
// takes is refused at submission by name.
#include <filesystem>
#include <fstream>

#include "absl/strings/str_cat.h"
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

std::string SubmittedId(const CommandResult& r) {
  EXPECT_EQ(r.exit_code, 0) << r.output;
  return r.exit_code == 0 ? nlohmann::json::parse(r.output).at("id").get<std::string>() : "";
}

TEST(ImagesEndToEnd, PackedSetsAndFoldersTrainAsJobsAndGenerateInColour) {
  if (access(GANTRY_MPIEXEC, X_OK) != 0) GTEST_FAIL() << "no mpirun at " << GANTRY_MPIEXEC << " (bash scripts/install_deps.sh)";
  const std::string dir = testing::MakeTempDir("images_e2e");
  const std::string data = dir + "/data", pictures = data + "/pictures", packed = data + "/pictures.pack";
  std::filesystem::create_directories(data);
  // Two class folders of PNG, JPEG and WebP pictures (and files make-dataset skips).
  CommandResult made = RunCommand(absl::StrCat(GANTRY_MAKE_TEST_IMAGES_BIN, " ", pictures), 60);
  ASSERT_EQ(made.exit_code, 0) << made.output;
  made = RunCommand(absl::StrCat(GANTRY_WORKER_BIN, " make-dataset --from ", pictures, " --out ", packed,
                                 " --image-size 32"),
                    60);
  ASSERT_EQ(made.exit_code, 0) << made.output;

  testing::CoordinatorProcess coordinator(dir, dir + "/gantry.db", data);
  ASSERT_TRUE(coordinator.started());
  const int port = coordinator.port();
  const std::string common = " --ngf 8 --ndf 8 --batch-size 4 --epochs 1 --max-steps 2 --world-size 2";
  const std::string from_file =
      SubmittedId(RunCommand(Gantry(port, "--json submit --dataset images --data-dir " + packed + " --mirror" + common),
                             30, false));
  const std::string from_folder = SubmittedId(RunCommand(
      Gantry(port, "--json submit --dataset images --data-dir " + pictures + " --image-size 32" + common), 30, false));
  // Refused at submission, as the worker would: settings for images on MNIST, a set that
  // is neither a folder nor a file, the image DCGAN's sizes.
  CommandResult bad = RunCommand(Gantry(port, "submit --dataset fashion-mnist --mirror --world-size 2"), 30);
  EXPECT_EQ(bad.exit_code, 2) << bad.output;
  EXPECT_THAT(bad.output, HasSubstr("--mirror applies to --dataset images"));
  bad = RunCommand(Gantry(port, "submit --dataset images --data-dir " + packed + " --image-size 256"), 30);
  EXPECT_EQ(bad.exit_code, 2) << bad.output;
  EXPECT_THAT(bad.output, HasSubstr("the image DCGAN is built for 32, 64 or 128 px"));

  testing::PoolProcess pool(dir, coordinator.address(), {"--max-jobs", "3", "--report-seconds", "0.5"});
  for (const std::string& id : {from_file, from_folder}) {
    const CommandResult watched = RunCommand(Gantry(port, "watch " + id + " --for 120"), 150, false);
    ASSERT_EQ(watched.exit_code, 0) << watched.output << pool.process().Log();
    EXPECT_THAT(watched.output, HasSubstr(id + " succeeded"));
  }
  const std::string file_run = pool.runs_dir() + "/" + from_file;
  const nlohmann::json run_json = nlohmann::json::parse(testing::ReadFile(file_run + "/run.json"));
  EXPECT_EQ(run_json["config"]["image_dcgan"]["image_size"], 32);
  EXPECT_EQ(run_json["config"]["image_dcgan"]["channels"], 3);
  EXPECT_EQ(run_json["config"]["mirror"], true);
  EXPECT_TRUE(std::filesystem::exists(file_run + "/samples/epoch_001.png"));
  // The folder was packed beside the pool's runs, once.
  int packs = 0;
  for (const auto& e : std::filesystem::directory_iterator(pool.runs_dir() + "/.image-cache")) {
    packs += e.path().extension() == ".pack";
  }
  EXPECT_EQ(packs, 1);

  const std::string generated =
      SubmittedId(RunCommand(Gantry(port, "--json generate " + from_file + " --count 5 --world-size 2"), 30, false));
  const CommandResult watched = RunCommand(Gantry(port, "watch " + generated + " --for 120"), 150, false);
  ASSERT_EQ(watched.exit_code, 0) << watched.output << pool.process().Log();
  bool found = false;
  for (const auto& e : std::filesystem::directory_iterator(file_run)) {
    if (e.path().filename().string().starts_with("generate-") && std::filesystem::exists(e.path() / "samples.npy")) {
      found = true;
      EXPECT_THAT(testing::ReadFile((e.path() / "samples.npy").string()).substr(0, 128), HasSubstr("(5, 3, 32, 32)"));
    }
  }
  EXPECT_TRUE(found) << "no generate-* folder with samples.npy in " << file_run;
}

}  // namespace
}  // namespace gantry
