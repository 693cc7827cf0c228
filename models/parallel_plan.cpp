#include "models/parallel_plan.hpp"

namespace hetsim {

const char* to_string(Recompute r) {
  switch (r) {
    case Recompute::kNone: return "none";
    case Recompute::kSelective: return "selective";
    case Recompute::kFull: return "full";
  }
  return "none";
}

}  // namespace hetsim
