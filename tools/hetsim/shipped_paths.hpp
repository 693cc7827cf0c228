#pragma once
// Paths of the shipped data, relative to hetsim::data_directory().
#include <string>

#include "base/data_directory.hpp"

namespace hetsim::cli {

inline std::string shipped(const std::string& relative) { return data_directory() + "/" + relative; }
inline std::string gpu_catalog_dir() { return shipped("models/gpus"); }
inline const char* kDefaultCluster = "topologies/clusters/dgx-h100-4node.json";
inline const char* kDefaultModel = "models/configs/llama-3-8b.json";

}  // namespace hetsim::cli
