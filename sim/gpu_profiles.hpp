#pragma once
// The measured profile each GPU's ops are costed from, each file loaded once: its node group's
// own, else a default (run's --profile), else none (roofline only). Training and serving both
// cost through it.
#include <map>
#include <string>

#include "models/calibration/profile.hpp"
#include "topologies/cluster.hpp"

namespace hetsim {

class GpuProfiles {
 public:
  GpuProfiles(const Cluster& cluster, const std::string& default_path)
      : cluster_(cluster), default_path_(default_path) {}
  // Empty: none.
  const std::string& path_of(GpuId gpu) const {
    const std::string& own = cluster_.gpu(gpu).profile;
    return own.empty() ? default_path_ : own;
  }
  const calibration::Profile* of(GpuId gpu) {
    const std::string& path = path_of(gpu);
    if (path.empty()) return nullptr;
    auto it = loaded_.find(path);
    if (it == loaded_.end()) it = loaded_.emplace(path, calibration::Profile::load(path)).first;
    return &it->second;
  }

 private:
  const Cluster& cluster_;
  std::string default_path_;
  std::map<std::string, calibration::Profile> loaded_;
};

}  // namespace hetsim
