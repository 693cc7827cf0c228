#include "base/data_directory.hpp"

#include <cstdlib>

namespace hetsim {

std::string data_directory() {
  if (const char* from_env = std::getenv("HETSIM_DATA_DIR"); from_env && *from_env) return from_env;
  return HETSIM_SOURCE_DIR;
}

}  // namespace hetsim
