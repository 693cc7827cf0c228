#pragma once
// The Chrome/Perfetto trace of a serving run: a process per replica with a track per GPU (one
// slice per iteration, with its prefill and decode tokens) and request lanes, and a "router"
// process where each request waits from arrival to its first iteration; a flow arrow per request
// leads from its wait at the router to its generation on the replica that served it.
#include <string>
#include <vector>

#include "sim/serving/serving_run.hpp"
#include "topologies/cluster.hpp"
#include "traces/chrome_trace_writer.hpp"

namespace hetsim {

class ServingTrace : public serving::ServingObserver {
 public:
  ServingTrace(const std::string& path, const Cluster& cluster, int requests, int tp, int pp);
  void iteration(int replica, const std::vector<double>& stage_start_s, const std::vector<double>& stage_s,
                 const serving::Step& step) override;
  // A slice "re-split" on each of the replica's GPUs for the transfer, with the bytes moved.
  void reconfiguration(const serving::Reconfiguration& r) override;
  // Writes the request slices and flows and renames the file into place.
  void commit(const serving::ServingResult& result);
  std::size_t events_written() const { return writer_.events_written(); }

 private:
  // The replica's process gets its name with its first event.
  void name_replica(int replica);

  const Cluster& cluster_;
  ChromeTraceWriter writer_;
  std::vector<double> first_scheduled_s_;  // by request; -1 until its first iteration
  std::vector<bool> named_replica_;
  int tp_, pp_;
};

}  // namespace hetsim
