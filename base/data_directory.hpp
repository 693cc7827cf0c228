#pragma once
#include <string>

namespace hetsim {

// Where the shipped data (models/gpus, models/configs, topologies/clusters) lives: the
// HETSIM_DATA_DIR environment variable when set, else the source tree this binary was built from.
std::string data_directory();

}  // namespace hetsim
