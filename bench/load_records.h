// What the load test's clients saw (bench/coordinator_load.cc): latency per RPC, and per
// job who was handed it and how often its success was acknowledged. Thread-safe: every
// client thread records into the same two objects.
#pragma once

#include <algorithm>
#include <cstdio>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"

namespace gantry {

class Latencies {
 public:
  void Add(const std::string& rpc, double ms) {
    absl::MutexLock lock(&mu_);
    ms_[rpc].push_back(ms);
  }
  void Print() {
    absl::MutexLock lock(&mu_);
    std::printf("| RPC | calls | p50 ms | p99 ms | max ms |\n|---|---:|---:|---:|---:|\n");
    for (auto& [rpc, v] : ms_) {
      std::sort(v.begin(), v.end());
      auto at = [&](double q) { return v[std::min(v.size() - 1, static_cast<size_t>(q * (v.size() - 1) + 0.5))]; };
      std::printf("| %s | %zu | %.2f | %.2f | %.2f |\n", rpc.c_str(), v.size(), at(0.5), at(0.99), v.back());
    }
  }

 private:
  absl::Mutex mu_;
  std::map<std::string, std::vector<double>> ms_ ABSL_GUARDED_BY(mu_);
};

// Per job: who was handed it, and how often its success was acknowledged.
class Ledger {
 public:
  void Acquired(const std::string& job, const std::string& group, int attempt) {
    absl::MutexLock lock(&mu_);
    handouts_[job].insert(absl::StrCat(group, "/", attempt));
    running_.push_back(job);
  }
  void Succeeded(const std::string& job) {
    absl::MutexLock lock(&mu_);
    ++succeeded_[job];
    ++finished_;
  }
  void Anomaly(const std::string& what) {
    absl::MutexLock lock(&mu_);
    if (anomalies_.size() < 20) anomalies_.push_back(what);
    ++anomaly_count_;
  }
  int finished() {
    absl::MutexLock lock(&mu_);
    return finished_;
  }
  // A job handed out lately, for a watcher to follow ("" when none yet).
  std::string RecentJob(std::mt19937& rng) {
    absl::MutexLock lock(&mu_);
    if (running_.empty()) return "";
    const size_t window = std::min<size_t>(running_.size(), 100);
    return running_[running_.size() - 1 - rng() % window];
  }

  // Every submitted job handed out once and acknowledged once; no anomaly.
  std::vector<std::string> Check(const std::set<std::string>& submitted) {
    absl::MutexLock lock(&mu_);
    std::vector<std::string> problems = anomalies_;
    if (anomaly_count_ > static_cast<int>(anomalies_.size())) {
      problems.push_back(absl::StrCat(anomaly_count_ - anomalies_.size(), " more anomalies"));
    }
    for (const std::string& job : submitted) {
      const size_t handouts = handouts_.count(job) ? handouts_[job].size() : 0;
      const int acks = succeeded_.count(job) ? succeeded_[job] : 0;
      if (handouts != 1) problems.push_back(absl::StrCat(job, " was handed out ", handouts, " times"));
      if (acks != 1) problems.push_back(absl::StrCat(job, " succeeded ", acks, " times"));
    }
    return problems;
  }

 private:
  absl::Mutex mu_;
  std::map<std::string, std::set<std::string>> handouts_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, int> succeeded_ ABSL_GUARDED_BY(mu_);
  std::vector<std::string> running_ ABSL_GUARDED_BY(mu_);
  std::vector<std::string> anomalies_ ABSL_GUARDED_BY(mu_);
  int anomaly_count_ ABSL_GUARDED_BY(mu_) = 0;
  int finished_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace gantry
