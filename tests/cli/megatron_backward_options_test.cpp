// --no-async-tensor-model-parallel-allreduce and --no-gradient-accumulation-fusion through
// `hetsim run` (the default job: Llama-3-8B, tp 4 on DGX H100): each makes the backward slower,
// is named in the report and in its JSON plan, and leaves reports without them as they were.
#include <doctest/doctest.h>

#include <string>

#include "cli_test_support.hpp"

namespace {

using Run = hetsim::test::RunReport;

Run run(const std::string& args) { return hetsim::test::run_report("--gbs 16 " + args); }

double seconds(const Run& r) { return r.json["iteration_time_s"].get<double>(); }

}  // namespace

TEST_CASE("Megatron-LM's older backward: waited-for TP all-reduces and unfused accumulation") {
  const Run base = run("");
  CHECK_FALSE(base.json["plan"].contains("async_tp_allreduce"));
  CHECK_FALSE(base.json["plan"].contains("gradient_accumulation_fusion"));
  CHECK(base.table.find("tp backward") == std::string::npos);

  const Run sync = run("--no-async-tensor-model-parallel-allreduce");
  CHECK(sync.json["plan"]["async_tp_allreduce"] == false);
  CHECK(sync.table.find("input-gradient all-reduces waited for") != std::string::npos);
  MESSAGE("iteration: default " << seconds(base) << " s, no async TP all-reduce " << seconds(sync) << " s");
  CHECK(seconds(sync) > seconds(base));

  const Run unfused = run("--no-gradient-accumulation-fusion");
  CHECK(unfused.json["plan"]["gradient_accumulation_fusion"] == false);
  CHECK(unfused.table.find("added into the main grads by a kernel per weight") != std::string::npos);
  MESSAGE("iteration: default " << seconds(base) << " s, no fusion " << seconds(unfused) << " s");
  CHECK(seconds(unfused) > seconds(base));

  // With sequence parallelism the TP collectives overlap whatever the flag says (as Megatron).
  CHECK(seconds(run("--sequence-parallel --no-async-tensor-model-parallel-allreduce")) ==
        seconds(run("--sequence-parallel")));
}
