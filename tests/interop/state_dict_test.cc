#include "worker/interop/state_dict.h"

#include <cmath>
#include <cstring>
#include <map>
#include <memory>

#include "common/bf16.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runspec/train_config.h"
#include "worker/interop/module_metadata.h"
#include "worker/models/dcgan.h"
#include "worker/models/pix2pix.h"

namespace gantry {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

std::vector<float> Host(const Tensor& t) {
  const Tensor h = t.On(Device::kCpu);
  return std::vector<float>(h.data(), h.data() + h.numel());
}

std::map<std::string, std::vector<int64_t>> Shapes(const StFile& f) {
  std::map<std::string, std::vector<int64_t>> shapes;
  for (const StTensor& t : f.tensors) shapes[t.name] = t.shape;
  return shapes;
}

Pix2pixConfig SmallPix2pix(NormKind norm, NextFramePrediction predict) {
  Pix2pixConfig c;
  c.image_size = 32;
  c.ngf = 8;
  c.ndf = 8;
  c.norm = norm;
  c.predict = predict;
  return c;
}

// The file `p` exports to, through the bytes (encode, decode).
StFile ThroughBytes(const FlatParameters& p, const TorchNames& names, StDtype dtype) {
  absl::StatusOr<StFile> file = NetworkToSafetensors(p, names, dtype, 42);
  EXPECT_TRUE(file.ok()) << file.status();
  const std::string bytes = *EncodeSafetensors(*file);
  return *DecodeSafetensors({reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()}, "x");
}

// The DCGAN's keys carry the shapes of bench/torch/dcgan_model.py's modules.
TEST(StateDict, TheDcganExportsUnderItsPyTorchTwinsKeysAndShapes) {
  Dcgan model(DcganConfig{});
  const std::map<std::string, std::vector<int64_t>> g =
      Shapes(ThroughBytes(model.g_params(), model.TorchStateDictNames(GanNetwork::kGenerator), StDtype::kF32));
  EXPECT_EQ(g.size(), 10u + 6u + 3u);  // parameters, running statistics, counters
  EXPECT_EQ(g.at("fc.weight"), (std::vector<int64_t>{12544, 100}));
  EXPECT_EQ(g.at("bn0.running_var"), (std::vector<int64_t>{12544}));
  EXPECT_EQ(g.at("deconv1.weight"), (std::vector<int64_t>{256, 128, 5, 5}));
  EXPECT_EQ(g.at("deconv3.weight"), (std::vector<int64_t>{64, 1, 5, 5}));
  EXPECT_EQ(g.at("bn2.num_batches_tracked"), (std::vector<int64_t>{}));
  const std::map<std::string, std::vector<int64_t>> d =
      Shapes(ThroughBytes(model.d_params(), model.TorchStateDictNames(GanNetwork::kDiscriminator), StDtype::kF32));
  EXPECT_EQ(d.size(), 6u);
  EXPECT_EQ(d.at("conv2.weight"), (std::vector<int64_t>{128, 64, 5, 5}));
  EXPECT_EQ(d.at("fc.weight"), (std::vector<int64_t>{1, 6272}));
}

// The Pix2Pix keys follow bench/torch/pix2pix_model.py at depth 5 (32 px), either norm.
TEST(StateDict, ThePix2pixExportsUnderItsPyTorchTwinsKeysAndShapes) {
  Pix2pix batch(SmallPix2pix(NormKind::kBatch, NextFramePrediction::kDelta));
  const auto g = Shapes(ThroughBytes(batch.g_params(), batch.TorchStateDictNames(GanNetwork::kGenerator),
                                     StDtype::kF32));
  EXPECT_EQ(g.at("down.0.0.weight"), (std::vector<int64_t>{8, 4, 4, 4}));
  EXPECT_EQ(g.at("down.3.1.running_mean"), (std::vector<int64_t>{64}));
  EXPECT_FALSE(g.contains("down.4.1.weight")) << "the bottleneck has no norm";
  EXPECT_EQ(g.at("up.0.0.weight"), (std::vector<int64_t>{64, 64, 4, 4}));
  EXPECT_EQ(g.at("up.3.1.weight"), (std::vector<int64_t>{8}));
  EXPECT_EQ(g.at("out.weight"), (std::vector<int64_t>{16, 3, 4, 4}));
  EXPECT_EQ(g.at("out.bias"), (std::vector<int64_t>{3}));
  const auto d = Shapes(ThroughBytes(batch.d_params(), batch.TorchStateDictNames(GanNetwork::kDiscriminator),
                                     StDtype::kF32));
  EXPECT_EQ(d.at("net.0.weight"), (std::vector<int64_t>{8, 7, 4, 4}));
  EXPECT_EQ(d.at("net.9.running_var"), (std::vector<int64_t>{64}));
  EXPECT_EQ(d.at("net.11.bias"), (std::vector<int64_t>{1}));
  Pix2pix instance(SmallPix2pix(NormKind::kInstance, NextFramePrediction::kFrame));
  const TorchNames in = instance.TorchStateDictNames(GanNetwork::kGenerator);
  EXPECT_TRUE(in.buffers.empty());
  EXPECT_TRUE(NetworkToSafetensors(instance.g_params(), in, StDtype::kF32, 0).ok());
}

TEST(StateDict, AnExportLoadsBackIntoAFreshModelBitForBit) {
  for (const NextFramePrediction predict : {NextFramePrediction::kFrame, NextFramePrediction::kDelta}) {
    Pix2pix trained(SmallPix2pix(NormKind::kBatch, predict)), fresh(SmallPix2pix(NormKind::kBatch, predict));
    trained.Initialize(InitScheme::kNormal002, 1);
    fresh.Initialize(InitScheme::kNormal002, 2);
    // Running statistics other than the initial ones.
    trained.g_params().buffers().CopyFrom(Tensor::FromVector(
        trained.g_params().buffers().shape(), std::vector<float>(trained.g_params().buffers().numel(), 0.25f)));
    for (const GanNetwork n : {GanNetwork::kGenerator, GanNetwork::kDiscriminator}) {
      FlatParameters& from = n == GanNetwork::kGenerator ? trained.g_params() : trained.d_params();
      FlatParameters& to = n == GanNetwork::kGenerator ? fresh.g_params() : fresh.d_params();
      const TorchNames names = trained.TorchStateDictNames(n);
      ASSERT_TRUE(LoadSafetensorsIntoNetwork(ThroughBytes(from, names, StDtype::kF32), "x", names, to).ok());
      EXPECT_EQ(Host(to.params()), Host(from.params()));
      EXPECT_EQ(Host(to.buffers()), Host(from.buffers()));
    }
  }
}

TEST(StateDict, Bf16ExportsRoundTheWeightsToNearestEvenAndKeepStatisticsFp32) {
  Dcgan model(DcganConfig{}), back(DcganConfig{});
  model.Initialize(InitScheme::kGlorotUniform, 3);
  const TorchNames names = model.TorchStateDictNames(GanNetwork::kGenerator);
  const StFile file = ThroughBytes(model.g_params(), names, StDtype::kBf16);
  EXPECT_EQ(file.tensors[0].dtype, StDtype::kBf16);
  for (const StTensor& t : file.tensors) {
    if (t.name.ends_with("running_mean")) EXPECT_EQ(t.dtype, StDtype::kF32);
    if (t.name.ends_with("num_batches_tracked")) {
      int64_t count = 0;
      std::memcpy(&count, t.bytes.data(), 8);
      EXPECT_EQ(count, 42);
    }
  }
  ASSERT_TRUE(LoadSafetensorsIntoNetwork(file, "x", names, back.g_params()).ok());
  const std::vector<float> want = Host(model.g_params().params()), got = Host(back.g_params().params());
  for (size_t i = 0; i < want.size(); i += 997) ASSERT_EQ(got[i], bf16::FromFloat(want[i]).ToFloat()) << i;
}

class StateDictRefusal : public ::testing::Test {
 protected:
  void SetUp() override {
    model_.Initialize(InitScheme::kGlorotUniform, 5);
    file_ = ThroughBytes(model_.d_params(), names_, StDtype::kF32);
    before_ = Host(target_.d_params().params());
  }
  absl::Status Load() { return LoadSafetensorsIntoNetwork(file_, "w.safetensors", names_, target_.d_params()); }
  StTensor& Named(const std::string& name) {
    for (StTensor& t : file_.tensors) {
      if (t.name == name) return t;
    }
    return file_.tensors[0];
  }
  void ExpectRefused(const std::string& says) {
    const absl::Status s = Load();
    EXPECT_TRUE(absl::IsInvalidArgument(s)) << s;
    EXPECT_THAT(s.message(), AllOf(HasSubstr("w.safetensors"), HasSubstr(says)));
    EXPECT_EQ(Host(target_.d_params().params()), before_) << "a refused file changed the network";
  }

  Dcgan model_{DcganConfig{}}, target_{DcganConfig{}};
  TorchNames names_ = model_.TorchStateDictNames(GanNetwork::kDiscriminator);
  StFile file_;
  std::vector<float> before_;
};

TEST_F(StateDictRefusal, AMissingTensorIsNamed) {
  file_.tensors.erase(file_.tensors.begin() + 2);
  ExpectRefused("missing 1: conv2.weight");
}

TEST_F(StateDictRefusal, AnUnexpectedTensorIsNamed) {
  file_.tensors.push_back({"conv3.weight", StDtype::kF32, {1}, std::string(4, '\0')});
  ExpectRefused("unexpected 1: conv3.weight");
}

TEST_F(StateDictRefusal, AShapeThatDoesNotFitIsNamed) {
  Named("fc.bias").shape = {1, 1};
  ExpectRefused("'fc.bias' has shape [1, 1]; the network's is [1]");
}

TEST_F(StateDictRefusal, ANonFiniteWeightIsRefused) {
  const float nan = std::nanf("");
  std::memcpy(Named("conv1.bias").bytes.data(), &nan, 4);
  ExpectRefused("'conv1.bias' holds nan");
}

// Issue 45, item 9: finite values that cannot be a trained network's, named by file and tensor.
TEST_F(StateDictRefusal, AHugeFiniteWeightIsRefusedNamingTheTensor) {
  const float huge = 1e30f;
  std::memcpy(Named("conv2.weight").bytes.data() + 8, &huge, 4);
  ExpectRefused("tensor 'conv2.weight' holds 1e+30; a weight of a trained network lies within +-10000");
}

TEST(StateDictValues, ANegativeRunningVarianceIsRefusedNamingTheFileAndTheTensor) {
  Dcgan model{DcganConfig{}}, target{DcganConfig{}};
  model.Initialize(InitScheme::kGlorotUniform, 5);
  const TorchNames names = model.TorchStateDictNames(GanNetwork::kGenerator);
  ASSERT_FALSE(names.buffers.empty());
  StFile file = ThroughBytes(model.g_params(), names, StDtype::kF32);
  const std::string var = names.buffers[1];
  ASSERT_TRUE(var.ends_with("running_var")) << var;
  for (StTensor& t : file.tensors) {
    if (t.name != var) continue;
    const float negative = -0.5f;
    std::memcpy(t.bytes.data() + 4, &negative, 4);
  }
  const absl::Status s = LoadSafetensorsIntoNetwork(file, "g.safetensors", names, target.g_params());
  EXPECT_TRUE(absl::IsInvalidArgument(s)) << s;
  EXPECT_THAT(s.message(), HasSubstr("g.safetensors: tensor '" + var +
                                     "' holds -0.5; a BatchNorm running variance "
                                     "cannot be negative"));
}

// Issue 45, item 10: a name from a file is escaped and cut wherever a message quotes it.
TEST_F(StateDictRefusal, TensorNamesInMessagesAreEscapedAndCut) {
  file_.tensors.push_back({std::string("fc.bias\0x", 9), StDtype::kF32, {1}, std::string(4, '\0')});
  ExpectRefused("unexpected 1: fc.bias\\x00x");
  file_.tensors.back().name = std::string(100000, 'n');
  const std::string message(Load().message());
  EXPECT_THAT(message, HasSubstr(std::string(200, 'n') + "\u2026 (100000 bytes)"));
  EXPECT_LT(message.size(), 1000u);
}

TEST_F(StateDictRefusal, PyTorchsBatchCountersAndOtherFloatTypesAreAccepted) {
  file_.tensors.push_back({"conv1.num_batches_tracked", StDtype::kI64, {}, std::string(8, '\0')});
  StTensor& bias = Named("fc.bias");
  const double one = 1.0;
  bias = {"fc.bias", StDtype::kF64, {1}, std::string(reinterpret_cast<const char*>(&one), 8)};
  const absl::Status loaded = Load();
  ASSERT_TRUE(loaded.ok()) << loaded;
  EXPECT_EQ(Host(target_.d_params().params()).back(), 1.0f);
  EXPECT_TRUE(HoldsNetwork(file_, names_));
  EXPECT_FALSE(HoldsNetwork(file_, model_.TorchStateDictNames(GanNetwork::kGenerator)));
}

TEST(ModuleMetadata, NamesTheModelAndItsShapingSettingsInPyTorchsConventions) {
  TrainConfig config;
  config.model = "pix2pix";
  config.pix2pix = SmallPix2pix(NormKind::kInstance, NextFramePrediction::kDelta);
  const std::map<std::string, std::string> m = TorchModuleMetadata(config, GanNetwork::kGenerator);
  EXPECT_EQ(m.at("model"), "pix2pix");
  EXPECT_EQ(m.at("network"), "generator");
  EXPECT_EQ(m.at("norm"), "instance");
  EXPECT_EQ(m.at("predict"), "delta");
  EXPECT_EQ(m.at("image_size"), "32");
  EXPECT_NEAR(std::stod(m.at("bn_momentum")), 0.01, 1e-7);
  EXPECT_TRUE(CheckMetadataFitsModel(m, "f", "pix2pix").ok());
  EXPECT_THAT(CheckMetadataFitsModel(m, "f", "dcgan").message(), HasSubstr("f holds a --model pix2pix network"));
  EXPECT_TRUE(CheckMetadataFitsModel({}, "f", "dcgan").ok()) << "a PyTorch-made file may name no model";
}

}  // namespace
}  // namespace gantry
