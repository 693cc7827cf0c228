#pragma once
// Helpers shared by the topologies tests: the catalog's GPU names as a literal list, paths of the
// shipped clusters, and writing a cluster JSON to a scratch file.
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "base/error.hpp"
#include "topologies/cluster_loader.hpp"

namespace hetsim::test {

inline const std::vector<std::string> kGpuTypes = {"h100-sxm", "a100-80gb"};

inline std::string shipped_cluster(const std::string& file) {
  return std::string(HETSIM_SOURCE_DIR) + "/topologies/clusters/" + file;
}

// Writes `text` to <tmp>/hetsim-topologies-tests/<name> and returns the path.
inline std::string write_scratch_file(const std::string& name, const std::string& text) {
  const auto dir = std::filesystem::temp_directory_path() / "hetsim-topologies-tests";
  std::filesystem::create_directories(dir);
  const auto path = dir / name;
  std::ofstream(path, std::ios::binary) << text;
  return path.string();
}

// The one-line message of the InputError loading the cluster file at `path` throws, or
// "(no error)" when it loads.
inline std::string load_error(const std::string& path) {
  try {
    (void)load_cluster(path, kGpuTypes);
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace hetsim::test
