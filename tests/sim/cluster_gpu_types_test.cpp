// A cluster file's own GPU types ("gpu_types"): a catalog type with figures changed, or a whole
// new type, costed like the catalog's; every class of bad entry an error naming the file and the
// JSON path. Before, a cluster could only name the catalog's 13 (now 27) types.
#include <doctest/doctest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "base/error.hpp"
#include "sim/cluster_gpu_types.hpp"
#include "sim/training_run.hpp"
#include "shipped_inputs.hpp"

using namespace hetsim;

namespace {

// dgx-h100-4node.json with `types` as its gpu_types and its node group on `gpu`, written to a
// file of its own.
std::string cluster_with(const std::string& name, const nlohmann::json& types, const std::string& gpu) {
  nlohmann::json doc;
  std::ifstream(test::source_root() + "/topologies/clusters/dgx-h100-4node.json") >> doc;
  doc["gpu_types"] = types;
  doc["sites"][0]["node_groups"][0]["gpu"] = gpu;
  const std::string path = "/tmp/hetsim_cluster_gpu_types_" + name + ".json";
  std::ofstream(path) << doc.dump(2);
  return path;
}

std::string error_of(const std::string& path) {
  try {
    const ClusterSpec spec = load_cluster_spec(path, test::shipped_catalog().keys());
    const GpuCatalog catalog = catalog_with_cluster_types(test::shipped_catalog(), spec);
    catalog.at(spec.sites.at(0).node_groups.at(0).gpu_type);
  } catch (const InputError& e) {
    return std::string(e.what()).substr(path.size() + 2);  // the file is named first
  }
  return "(no error)";
}

const nlohmann::json kGrandTeton = {
    {"h100-96gb", {{"base", "h100-sxm"},
                   {"display_name", "NVIDIA H100 SXM 96GB HBM2e"},
                   {"hbm_GiB", 96},
                   {"sources", {{"hbm_GiB", "a test's figure"}}}}}};

}  // namespace

TEST_CASE("a derived GPU type keeps its base's figures and takes the ones it changes") {
  const std::string path = cluster_with("derived", kGrandTeton, "h100-96gb");
  const ClusterSpec spec = load_cluster_spec(path, test::shipped_catalog().keys());
  const GpuCatalog catalog = catalog_with_cluster_types(test::shipped_catalog(), spec);
  const GpuSpec& derived = catalog.at("h100-96gb");
  const GpuSpec& base = catalog.at("h100-sxm");
  CHECK(derived.key == "h100-96gb");
  CHECK(derived.display_name == "NVIDIA H100 SXM 96GB HBM2e");
  CHECK(derived.hbm_bytes == 96.0 * (1ull << 30));
  CHECK(derived.peak_flops == base.peak_flops);
  CHECK(derived.hbm_bytes_per_s == base.hbm_bytes_per_s);
  CHECK(derived.max_power_w == base.max_power_w);
  const auto keys = catalog.keys();
  CHECK(std::find(keys.begin(), keys.end(), "h100-96gb") != keys.end());
  // A run on it: the same time as on the base (only memory changed), and its capacity is 96 GiB.
  const Cluster cluster = build_cluster(spec);
  RunOptions options;
  options.plan.tp = 8;
  options.plan.pp = 2;
  options.plan.global_batch_size = 16;
  options.plan.seq_length = 4096;
  const RunResult on_derived = simulate_training(cluster, catalog, test::shipped_model("llama-3-8b"), options);
  const RunResult on_base = simulate_training(test::shipped_cluster("dgx-h100-4node"), test::shipped_catalog(),
                                              test::shipped_model("llama-3-8b"), options);
  std::printf("Llama-3-8B tp 8 x pp 2 on H100 96GB: %.6f s (80 GB: %.6f s), capacity %.2f GiB\n",
              on_derived.iteration_time_s, on_base.iteration_time_s,
              on_derived.memory.at(0).capacity_bytes / double(1ull << 30));
  CHECK(on_derived.iteration_time_s == on_base.iteration_time_s);
  CHECK(on_derived.memory.at(0).capacity_bytes == 96.0 * (1ull << 30));
}

TEST_CASE("a whole new GPU type is read as a catalog file is") {
  nlohmann::json gpu;
  std::ifstream(test::source_root() + "/models/gpus/a100-80gb.json") >> gpu;
  gpu["display_name"] = "An accelerator of the user's";
  gpu["peak_tflops"]["bf16"] = 400;
  const std::string path = cluster_with("whole", {{"my-npu", gpu}}, "my-npu");
  CHECK(error_of(path) == "(no error)");
  const ClusterSpec spec = load_cluster_spec(path, test::shipped_catalog().keys());
  CHECK(catalog_with_cluster_types(test::shipped_catalog(), spec).at("my-npu").peak(Dtype::kBf16) == 400e12);
}

TEST_CASE("bad GPU types: a catalog name, an unknown base, a figure without source, bad figures") {
  CHECK(error_of(cluster_with("catalog_name", {{"h100-sxm", kGrandTeton["h100-96gb"]}}, "h100-sxm")) ==
        "/gpu_types/h100-sxm: got \"h100-sxm\"; expected a name the catalog does not hold (to change the "
        "catalog's \"h100-sxm\", name a new type with \"base\": \"h100-sxm\")");
  nlohmann::json unknown_base = kGrandTeton;
  unknown_base["h100-96gb"]["base"] = "h100-sxn";
  CHECK(error_of(cluster_with("base", unknown_base, "h100-96gb")) ==
        "/gpu_types/h100-96gb/base: got \"h100-sxn\"; expected a GPU type of the catalog (models/gpus); "
        "did you mean \"h100-sxm\"?");
  nlohmann::json unsourced = kGrandTeton;
  unsourced["h100-96gb"].erase("sources");
  CHECK(error_of(cluster_with("unsourced", unsourced, "h100-96gb")) ==
        "/gpu_types/h100-96gb/sources/hbm_GiB: got nothing (missing); expected a source for the changed "
        "figure \"hbm_GiB\"");
  nlohmann::json negative = kGrandTeton;
  negative["h100-96gb"]["hbm_GiB"] = -1;
  CHECK(error_of(cluster_with("negative", negative, "h100-96gb")) ==
        "/gpu_types/h100-96gb/hbm_GiB: got -1; expected a number > 0");
  nlohmann::json typo = kGrandTeton;
  typo["h100-96gb"]["hbm_GB"] = 96;
  CHECK(error_of(cluster_with("typo", typo, "h100-96gb")) ==
        "/gpu_types/h100-96gb/hbm_GB: got unknown key \"hbm_GB\"; expected a known key; did you mean "
        "\"hbm_GiB\"?");
  CHECK(error_of(cluster_with("not_object", {{"h100-96gb", 5}}, "h100-96gb")) ==
        "/gpu_types/h100-96gb: got 5; expected an object: a GPU file's fields, or \"base\" and the "
        "figures it changes");
  CHECK(error_of(cluster_with("unused_name", kGrandTeton, "h100-96g")).find(
            "/sites/0/node_groups/0/gpu: got \"h100-96g\"") == 0);
}
