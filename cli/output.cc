#include "cli/output.h"

#include <cstdio>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/time/time.h"
#include "cli/rpc_exit_codes.h"
#include "common/printable_text.h"
#include "report/state_names.h"
#include "nlohmann/json.hpp"
#include "runspec/generate_spec_check.h"
#include "runspec/rollout_spec_check.h"

namespace gantry::cli {
namespace {

std::string ProgressText(const v1::Job& job) {
  if (!job.has_progress()) return "-";
  const v1::Progress& p = job.progress();
  if (job.has_rollout() || job.has_generate()) return absl::StrFormat("step %d/%d", p.step(), p.steps_per_epoch());
  return absl::StrFormat("b%d e%d %d/%d", p.batch_size(), p.epoch(), p.step(), p.steps_per_epoch());
}

}  // namespace

std::string ToJson(const google::protobuf::Message& message) { return DumpJson(ToJsonValue(message)); }

std::string Shown(absl::string_view text) { return EscapeForTerminal(text); }

std::string FormatTime(int64_t unix_ms) {
  if (unix_ms == 0) return "-";
  return absl::FormatTime("%Y-%m-%d %H:%M:%S", absl::FromUnixMillis(unix_ms), absl::LocalTimeZone());
}

std::string JobsTable(const std::vector<v1::Job>& jobs) {
  std::string out = absl::StrFormat("%-10s %-10s %-5s %-8s %-6s %-16s %-19s %s\n", "ID", "STATE", "RANKS", "ATTEMPTS",
                                    "EPOCHS", "PROGRESS", "SUBMITTED", "NAME");
  for (const v1::Job& job : jobs) {
    absl::StrAppendFormat(&out, "%-10s %-10s %-5s %-8s %-6d %-16s %-19s %s\n", Shown(job.id()),
                          JobStateName(job.state()), job.world_size() == 0 ? "any" : absl::StrCat(job.world_size()),
                          absl::StrCat(job.attempts(), "/", job.max_attempts()), job.epochs_reported(),
                          ProgressText(job), FormatTime(job.created_unix_ms()), Shown(job.name()));
  }
  for (const v1::Job& job : jobs) {
    if (job.waiting_reason().empty()) continue;
    absl::StrAppend(&out, Shown(job.id()), " waits: ", Shown(job.waiting_reason()), "\n");
  }
  return out;
}

std::string UnreadableJobText(const v1::UnreadableJob& bad) {
  return absl::StrCat(bad.job_id(), " (row ", bad.number(), "): its stored record cannot be read (", bad.reason(),
                      "); the coordinator set it aside and lists the rest");
}

std::string JobStatusText(const v1::Job& job) {
  std::string out;
  auto line = [&](const char* key, const std::string& value) { absl::StrAppendFormat(&out, "%-12s %s\n", key, value); };
  line("id", Shown(job.id()));
  if (!job.name().empty()) line("name", Shown(job.name()));
  line("state", JobStateName(job.state()));
  if (!job.waiting_reason().empty()) line("waiting", Shown(job.waiting_reason()));
  line("ranks", job.world_size() == 0 ? "any" : absl::StrCat(job.world_size()));
  line("attempts", absl::StrCat(job.attempts(), " of ", job.max_attempts()));
  if (!job.group_id().empty()) line("group", Shown(job.group_id()));
  line("submitted", FormatTime(job.created_unix_ms()));
  line("started", FormatTime(job.started_unix_ms()));
  line("finished", FormatTime(job.finished_unix_ms()));
  if (job.has_rollout()) {
    const v1::RolloutSpec& r = job.rollout();
    line("rollout", Shown(absl::StrCat("of ", r.source_job_id(), ": ", r.steps(), " step(s) over ", r.case_dir())));
    line("outputs", Shown(absl::StrCat(job.checkpoint().host(), ":",
                                       RolloutJobOutputFolder(job.checkpoint().run_folder(), r.case_dir(), job.id()))));
  } else if (job.has_generate()) {
    const v1::GenerateSpec& g = job.generate();
    line("generate", Shown(absl::StrCat("of ", g.source_job_id(),
                                        g.has_count() ? absl::StrCat(": ", g.count().value(), " sample(s)") : "",
                                        g.interpolate().empty() ? "" : absl::StrCat(": a walk ", g.interpolate()))));
    line("outputs", Shown(absl::StrCat(job.checkpoint().host(), ":",
                                       GenerateOutputFolder(job.checkpoint().run_folder(), g.name()))));
  } else {
    line("epochs", absl::StrCat(job.epochs_reported(), " reported"));
  }
  if (job.has_progress() && job.has_rollout()) {
    const v1::Progress& p = job.progress();
    line("progress", absl::StrFormat("step %d/%d, %.1f tiles/s", p.step(), p.steps_per_epoch(), p.samples_per_s()));
  } else if (job.has_progress()) {
    const v1::Progress& p = job.progress();
    line("progress", absl::StrFormat("batch %d epoch %d step %d/%d, %.1f samples/s, d_loss %.4f g_loss %.4f",
                                     p.batch_size(), p.epoch(), p.step(), p.steps_per_epoch(), p.samples_per_s(),
                                     p.d_loss(), p.g_loss()));
  }
  if (job.has_plan()) {
    line("shard plan", absl::StrCat("batch ", job.plan().batch_size(), " epoch ", job.plan().epoch(), ": shares ",
                                    absl::StrJoin(job.plan().shares(), "/"),
                                    job.plan().rebalanced() ? " (rebalanced)" : ""));
  }
  if (job.has_checkpoint()) {
    const v1::CheckpointRef& c = job.checkpoint();
    line("run folder", Shown(absl::StrCat(c.host(), ":", c.run_folder())));
    line("checkpoint", c.run_step() == 0 ? "none yet"
                                         : absl::StrFormat("step %d (resumes at batch %d epoch %d after step %d), %s",
                                                           c.run_step(), c.batch_size(), c.epoch(), c.step_in_epoch(),
                                                           FormatTime(c.unix_ms())));
  }
  if (!job.error().empty()) line("error", Shown(job.error()));
  return out;
}

std::string GroupsTable(const v1::ListGroupsResponse& groups) {
  std::string out = absl::StrFormat("%-10s %-5s %-6s %-10s %-9s %-20s %-20s %s\n", "ID", "RANKS", "STATE", "JOB",
                                    "HEARTBEAT", "NAME", "HOSTS", "DEVICES");
  for (const v1::Group& g : groups.groups()) {
    absl::StrAppendFormat(&out, "%-10s %-5d %-6s %-10s %-9s %-20s %-20s %s\n", Shown(g.id()), g.world_size(),
                          GroupStateName(g.state()), g.job_id().empty() ? "-" : Shown(g.job_id()),
                          absl::StrFormat("%.0fs ago", g.seconds_since_heartbeat()),
                          g.name().empty() ? "-" : Shown(g.name()), Shown(absl::StrJoin(g.hosts(), ",")),
                          g.devices().empty() ? "-" : Shown(absl::StrJoin(g.devices(), ",")));
  }
  return out;
}

int Fail(const grpc::Status& status, bool json) {
  std::fprintf(stderr, "gantry: %s\n", Shown(status.error_message()).c_str());
  if (json) {
    nlohmann::json j;
    j["error"]["code"] = absl::StatusCodeToString(static_cast<absl::StatusCode>(status.error_code()));
    j["error"]["message"] = status.error_message();
    std::printf("%s\n", DumpJson(j).c_str());
  }
  return ExitCodeFor(status.error_code());
}

int Fail(const absl::Status& status, bool json) {
  return Fail(grpc::Status(static_cast<grpc::StatusCode>(status.code()), std::string(status.message())), json);
}

int FailCall(const Connection& client, const grpc::Status& status) {
  if (status.error_code() != grpc::StatusCode::UNAVAILABLE) return Fail(status, client.flags().json);
  return Fail(grpc::Status(status.error_code(),
                           absl::StrCat("cannot reach the coordinator at ", client.flags().coordinator, " (",
                                        status.error_message(),
                                        "); is gantry-coordinator running there? Set --coordinator or "
                                        "GANTRY_COORDINATOR")),
              client.flags().json);
}

}  // namespace gantry::cli
