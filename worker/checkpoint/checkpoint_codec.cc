#include "worker/checkpoint/checkpoint_codec.h"

#include <map>
#include <tuple>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/byte_codec.h"
#include "common/status_macros.h"
#include "runspec/resume_rules.h"
#include "worker/checkpoint/checkpoint_format.h"

namespace gantry {
namespace {

void PutPosition(ByteWriter& w, const SweepPosition& p) {
  for (int64_t v : {p.batch_index, p.batch_size, p.epoch, p.step_in_epoch, p.batch_step, p.run_step, p.steps_left}) {
    w.I64(v);
  }
  w.U64(p.seed);
  w.I64(p.dataset_images);
  w.I64(p.world_size);
  w.U64(p.noise_rng_state);
  w.I64(p.skips_logged);
}

SweepPosition GetPosition(ByteReader& r) {
  SweepPosition p;
  p.batch_index = r.I64("batch index");
  p.batch_size = r.I64("batch size");
  p.epoch = r.I64("epoch");
  p.step_in_epoch = r.I64("step in epoch");
  p.batch_step = r.I64("batch step");
  p.run_step = r.I64("run step");
  p.steps_left = r.I64("steps left");
  p.seed = r.U64("seed");
  p.dataset_images = r.I64("dataset images");
  p.world_size = static_cast<int>(r.I64("world size"));
  p.noise_rng_state = r.U64("noise rng state");
  p.skips_logged = r.I64("skips logged");
  return p;
}

void PutLayout(ByteWriter& w, const std::vector<LayoutEntry>& layout) {
  w.U64(layout.size());
  for (const LayoutEntry& e : layout) {
    w.String(e.name);
    w.I64s(e.dims);
  }
}

std::vector<LayoutEntry> GetLayout(ByteReader& r) {
  std::vector<LayoutEntry> layout;
  const uint64_t n = r.U64("layout size");
  for (uint64_t i = 0; i < n && r.status().ok(); ++i) {
    LayoutEntry e;
    e.name = r.String("tensor name");
    e.dims = r.I64s("tensor dims");
    layout.push_back(std::move(e));
  }
  return layout;
}

// The number of values a layout describes, or -1 when a dimension is negative or the
// count overflows (a corrupt file can announce any dims; none of them is trusted).
int64_t LayoutNumel(const std::vector<LayoutEntry>& layout) {
  int64_t total = 0;
  for (const LayoutEntry& e : layout) {
    int64_t n = 1;
    for (int64_t d : e.dims) {
      if (d < 0 || __builtin_mul_overflow(n, d, &n)) return -1;
    }
    if (__builtin_add_overflow(total, n, &total)) return -1;
  }
  return total;
}

void PutNetwork(ByteWriter& w, const NetworkState& n) {
  w.Reserve((n.params.size() + n.buffers.size()) * sizeof(float) + 4096);
  PutLayout(w, n.param_layout);
  PutLayout(w, n.buffer_layout);
  w.Floats(n.params);
  w.Floats(n.buffers);
}

NetworkState GetNetwork(ByteReader& r) {
  NetworkState n;
  n.param_layout = GetLayout(r);
  n.buffer_layout = GetLayout(r);
  n.params = r.Floats("parameters");
  n.buffers = r.Floats("buffers");
  return n;
}

absl::Status CheckNetwork(const NetworkState& n, const std::string& source) {
  if (LayoutNumel(n.param_layout) != static_cast<int64_t>(n.params.size()) ||
      LayoutNumel(n.buffer_layout) != static_cast<int64_t>(n.buffers.size())) {
    return absl::DataLossError(absl::StrCat(source, ": the values do not match the layout (", n.params.size(),
                                            " parameters for ", LayoutNumel(n.param_layout), ", ", n.buffers.size(),
                                            " buffer values for ", LayoutNumel(n.buffer_layout), ")"));
  }
  return absl::OkStatus();
}

void PutOptimizer(ByteWriter& w, const OptimizerState& o) {
  size_t values = 0;
  for (const std::vector<float>& b : o.buffers) values += b.size();
  w.Reserve(values * sizeof(float) + 256);
  w.String(o.kind);
  w.I64(o.steps_taken);
  w.U64(o.buffers.size());
  for (const std::vector<float>& b : o.buffers) w.Floats(b);
}

OptimizerState GetOptimizer(ByteReader& r) {
  OptimizerState o;
  o.kind = r.String("kind");
  o.steps_taken = r.I64("steps taken");
  const uint64_t n = r.U64("buffer count");
  for (uint64_t i = 0; i < n && r.status().ok(); ++i) o.buffers.push_back(r.Floats("state buffer"));
  return o;
}

void PutScaler(ByteWriter& w, const LossScalerState& s) {
  w.F32(s.scale);
  w.I64(s.clean_streak);
  w.I64(s.skipped);
}

LossScalerState GetScaler(ByteReader& r) {
  LossScalerState s;
  s.scale = r.F32("scale");
  s.clean_streak = r.I64("clean streak");
  s.skipped = r.I64("skipped");
  return s;
}

void PutEpoch(ByteWriter& w, const EpochInProgress& e) {
  w.Doubles(e.sums.step_seconds);
  for (double v : {e.sums.data_wait_s, e.sums.allreduce_s, e.sums.d_loss, e.sums.g_loss}) w.F64(v);
  w.I64(e.sums.skipped_g);
  w.I64(e.sums.skipped_d);
  w.F64(e.seconds);
  w.I64(e.straggler_flags);
}

EpochInProgress GetEpoch(ByteReader& r) {
  EpochInProgress e;
  e.sums.step_seconds = r.Doubles("step seconds");
  e.sums.data_wait_s = r.F64("data wait");
  e.sums.allreduce_s = r.F64("all-reduce time");
  e.sums.d_loss = r.F64("d loss sum");
  e.sums.g_loss = r.F64("g loss sum");
  e.sums.skipped_g = r.I64("skipped g");
  e.sums.skipped_d = r.I64("skipped d");
  e.seconds = r.F64("seconds");
  e.straggler_flags = r.I64("straggler flags");
  return e;
}

// Every EpochRow field, in declaration order; version 1 of the row record.
void PutRows(ByteWriter& w, const std::vector<EpochRow>& rows) {
  w.U64(rows.size());
  for (const EpochRow& r : rows) {
    for (int64_t v : {r.batch_size, r.epoch, r.steps}) w.I64(v);
    for (double v : {r.seconds, r.steady_step_ms, r.samples_per_s, r.d_loss, r.g_loss, r.step_p50_ms, r.step_p99_ms,
                     r.data_wait_ms}) {
      w.F64(v);
    }
    w.I64(r.world_size);
    w.F64(r.allreduce_ms);
    w.F64(r.allreduce_share);
    w.I64(r.straggler_flags);
    w.F64(r.loss_scale_g);
    w.F64(r.loss_scale_d);
    w.I64(r.skipped_steps_g);
    w.I64(r.skipped_steps_d);
    w.F64(r.peak_rss_mb);
  }
}

std::vector<EpochRow> GetRows(ByteReader& r) {
  std::vector<EpochRow> rows;
  const uint64_t n = r.U64("row count");
  for (uint64_t i = 0; i < n && r.status().ok(); ++i) {
    EpochRow row;
    row.batch_size = r.I64("batch_size");
    row.epoch = r.I64("epoch");
    row.steps = r.I64("steps");
    for (double* v : {&row.seconds, &row.steady_step_ms, &row.samples_per_s, &row.d_loss, &row.g_loss,
                      &row.step_p50_ms, &row.step_p99_ms, &row.data_wait_ms}) {
      *v = r.F64("row timing or loss");
    }
    row.world_size = static_cast<int>(r.I64("world_size"));
    row.allreduce_ms = r.F64("allreduce_ms");
    row.allreduce_share = r.F64("allreduce_share");
    row.straggler_flags = r.I64("straggler_flags");
    row.loss_scale_g = r.F64("loss_scale_g");
    row.loss_scale_d = r.F64("loss_scale_d");
    row.skipped_steps_g = r.I64("skipped_steps_g");
    row.skipped_steps_d = r.I64("skipped_steps_d");
    row.peak_rss_mb = r.F64("peak_rss_mb");
    rows.push_back(row);
  }
  return rows;
}

// Columns past those of the version 1 row record (new columns are appended: see
// EpochColumns) travel by name and as doubles, so a column added later needs no new
// record version, and a checkpoint holding a column this build lacks still loads.
constexpr size_t kRowRecordV1Columns = 20;

void PutAppendedColumns(ByteWriter& w, const std::vector<EpochRow>& rows) {
  const std::vector<EpochColumn>& columns = EpochColumns();
  w.U64(rows.size());
  for (const EpochRow& row : rows) {
    w.U64(columns.size() - kRowRecordV1Columns);
    for (size_t i = kRowRecordV1Columns; i < columns.size(); ++i) {
      w.String(columns[i].name);
      std::visit([&](auto member) { w.F64(static_cast<double>(row.*member)); }, columns[i].member);
    }
  }
}

void GetAppendedColumns(ByteReader& r, std::vector<EpochRow>& rows) {
  const uint64_t n = r.U64("row count");
  for (uint64_t i = 0; i < n && r.status().ok(); ++i) {
    const uint64_t count = r.U64("column count");
    for (uint64_t c = 0; c < count && r.status().ok(); ++c) {
      const std::string name = r.String("column name");
      const double value = r.F64("column value");
      if (i >= rows.size()) continue;  // more rows than the rows section: ignored
      for (const EpochColumn& column : EpochColumns()) {
        if (name != column.name) continue;
        std::visit([&](auto member) { rows[i].*member = static_cast<std::remove_reference_t<decltype(rows[i].*member)>>(value); },
                   column.member);
      }
    }
  }
}

void PutSettings(ByteWriter& w, const std::map<std::string, std::string>& record) {
  w.String(SettingsDigest(record));
  w.U64(record.size());
  for (const auto& [name, value] : record) {
    w.String(name);
    w.String(value);
  }
}

// The record, checked against its digest (a section whose pairs and digest disagree was
// not written by gantry: the CRC alone cannot tell an edit that recomputed it).
std::map<std::string, std::string> GetSettings(ByteReader& r, std::string* digest) {
  *digest = r.String("settings digest");
  std::map<std::string, std::string> record;
  const uint64_t n = r.U64("settings count");
  for (uint64_t i = 0; i < n && r.status().ok(); ++i) {
    std::string name = r.String("setting name");
    record[std::move(name)] = r.String("setting value");
  }
  return record;
}

template <typename Fn>
SectionBytes Section(SectionTag tag, Fn put) {
  ByteWriter w;
  put(w);
  return {tag, w.Take()};
}

}  // namespace

std::vector<uint8_t> EncodeCheckpoint(const TrainingState& s) {
  std::vector<SectionBytes> sections = {
      Section(SectionTag::kPosition, [&](ByteWriter& w) { PutPosition(w, s.position); }),
      Section(SectionTag::kGenerator, [&](ByteWriter& w) { PutNetwork(w, s.g); }),
      Section(SectionTag::kDiscriminator, [&](ByteWriter& w) { PutNetwork(w, s.d); }),
      Section(SectionTag::kGeneratorOptimizer, [&](ByteWriter& w) { PutOptimizer(w, s.g_opt); }),
      Section(SectionTag::kDiscriminatorOptimizer, [&](ByteWriter& w) { PutOptimizer(w, s.d_opt); }),
      Section(SectionTag::kLossScalers, [&](ByteWriter& w) { PutScaler(w, s.g_scaler); PutScaler(w, s.d_scaler); }),
      Section(SectionTag::kShares, [&](ByteWriter& w) { w.I64s(s.shares); }),
      Section(SectionTag::kEpochInProgress, [&](ByteWriter& w) { PutEpoch(w, s.epoch); }),
      Section(SectionTag::kEpochRows, [&](ByteWriter& w) { PutRows(w, s.rows); }),
      Section(SectionTag::kStragglerRows, [&](ByteWriter& w) { w.String(s.straggler_rows); }),
      Section(SectionTag::kModel, [&](ByteWriter& w) { w.String(s.model); }),
      Section(SectionTag::kEpochRowColumns, [&](ByteWriter& w) { PutAppendedColumns(w, s.rows); }),
  };
  if (s.g_average) {
    sections.push_back(Section(SectionTag::kGeneratorAverage, [&](ByteWriter& w) { PutNetwork(w, *s.g_average); }));
  }
  // Only a run that augments writes the section: a run without keeps the bytes it had.
  if (s.augment != kAugmentOfCheckpointsWithout) {
    sections.push_back(Section(SectionTag::kAugment, [&](ByteWriter& w) { w.String(s.augment); }));
  }
  if (s.settings) {
    sections.push_back(Section(SectionTag::kSettings, [&](ByteWriter& w) { PutSettings(w, *s.settings); }));
  }
  // Only an overlapped run hides all-reduce time: a run without keeps the bytes it had.
  if (s.epoch.sums.allreduce_hidden_s != 0) {
    sections.push_back(
        Section(SectionTag::kEpochHiddenAllReduce, [&](ByteWriter& w) { w.F64(s.epoch.sums.allreduce_hidden_s); }));
  }
  return FrameCheckpoint(sections);
}

absl::StatusOr<TrainingState> DecodeCheckpoint(std::span<const uint8_t> file, const std::string& name) {
  ASSIGN_OR_RETURN(const std::vector<SectionView> views, UnframeCheckpoint(file, name));
  std::map<SectionTag, std::span<const uint8_t>> by_tag;
  for (const SectionView& v : views) by_tag[v.tag] = v.bytes;
  TrainingState s;
  // Reads one whole section with `get`, which must consume it exactly.
  auto read = [&](SectionTag tag, auto get) -> absl::Status {
    const std::string source = absl::StrCat(name, ": ", SectionName(tag), " section");
    const auto it = by_tag.find(tag);
    if (it == by_tag.end()) return absl::DataLossError(absl::StrCat(name, ": has no ", SectionName(tag), " section"));
    ByteReader r(it->second, source);
    get(r);
    return r.Finish();
  };
  RETURN_IF_ERROR(read(SectionTag::kPosition, [&](ByteReader& r) { s.position = GetPosition(r); }));
  RETURN_IF_ERROR(read(SectionTag::kGenerator, [&](ByteReader& r) { s.g = GetNetwork(r); }));
  RETURN_IF_ERROR(CheckNetwork(s.g, absl::StrCat(name, ": generator section")));
  RETURN_IF_ERROR(read(SectionTag::kDiscriminator, [&](ByteReader& r) { s.d = GetNetwork(r); }));
  RETURN_IF_ERROR(CheckNetwork(s.d, absl::StrCat(name, ": discriminator section")));
  RETURN_IF_ERROR(read(SectionTag::kGeneratorOptimizer, [&](ByteReader& r) { s.g_opt = GetOptimizer(r); }));
  RETURN_IF_ERROR(read(SectionTag::kDiscriminatorOptimizer, [&](ByteReader& r) { s.d_opt = GetOptimizer(r); }));
  RETURN_IF_ERROR(read(SectionTag::kLossScalers, [&](ByteReader& r) {
    s.g_scaler = GetScaler(r);
    s.d_scaler = GetScaler(r);
  }));
  RETURN_IF_ERROR(read(SectionTag::kShares, [&](ByteReader& r) { s.shares = r.I64s("shares"); }));
  RETURN_IF_ERROR(read(SectionTag::kEpochInProgress, [&](ByteReader& r) { s.epoch = GetEpoch(r); }));
  RETURN_IF_ERROR(read(SectionTag::kEpochRows, [&](ByteReader& r) { s.rows = GetRows(r); }));
  RETURN_IF_ERROR(read(SectionTag::kStragglerRows, [&](ByteReader& r) { s.straggler_rows = r.String("rows"); }));
  // Checkpoints written before models were named hold the DCGAN, the only model then.
  if (by_tag.contains(SectionTag::kModel)) {
    RETURN_IF_ERROR(read(SectionTag::kModel, [&](ByteReader& r) { s.model = r.String("model name"); }));
  } else {
    s.model = kModelOfUnnamedCheckpoints;
  }
  if (by_tag.contains(SectionTag::kEpochRowColumns)) {
    RETURN_IF_ERROR(read(SectionTag::kEpochRowColumns, [&](ByteReader& r) { GetAppendedColumns(r, s.rows); }));
  }
  if (by_tag.contains(SectionTag::kGeneratorAverage)) {
    RETURN_IF_ERROR(read(SectionTag::kGeneratorAverage, [&](ByteReader& r) { s.g_average = GetNetwork(r); }));
    RETURN_IF_ERROR(CheckNetwork(*s.g_average, absl::StrCat(name, ": generator average section")));
  }
  if (by_tag.contains(SectionTag::kAugment)) {
    RETURN_IF_ERROR(read(SectionTag::kAugment, [&](ByteReader& r) { s.augment = r.String("augment policy"); }));
  }
  if (by_tag.contains(SectionTag::kEpochHiddenAllReduce)) {
    RETURN_IF_ERROR(read(SectionTag::kEpochHiddenAllReduce,
                         [&](ByteReader& r) { s.epoch.sums.allreduce_hidden_s = r.F64("hidden all-reduce time"); }));
  }
  if (by_tag.contains(SectionTag::kSettings)) {
    std::string digest;
    RETURN_IF_ERROR(read(SectionTag::kSettings, [&](ByteReader& r) { s.settings = GetSettings(r, &digest); }));
    if (digest != SettingsDigest(*s.settings)) {
      return absl::DataLossError(absl::StrCat(name, ": settings section: its digest ", digest,
                                              " does not match its settings (", SettingsDigest(*s.settings),
                                              "); the file is damaged"));
    }
  }
  return s;
}

}  // namespace gantry
