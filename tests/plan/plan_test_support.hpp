#pragma once
// What the plan-search tests share: the source root and the shipped GPU catalog, loaded once.
#include <string>

#include "models/gpu_catalog.hpp"

namespace hetsim::test {

inline const std::string kRoot = HETSIM_SOURCE_DIR;

inline const GpuCatalog& catalog() {
  static const GpuCatalog c = GpuCatalog::load(kRoot + "/models/gpus");
  return c;
}

}  // namespace hetsim::test
