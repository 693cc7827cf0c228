#include "sim/serving/router.hpp"

#include <algorithm>

#include "base/error.hpp"

namespace hetsim::serving {

const char* to_string(RouterKind kind) {
  return kind == RouterKind::kRoundRobin ? "round-robin" : "least-outstanding";
}

RouterKind router_from_string(const std::string& text) {
  if (text == "round-robin") return RouterKind::kRoundRobin;
  if (text == "least-outstanding") return RouterKind::kLeastOutstanding;
  throw InputError("command line", "--router", text, "one of round-robin, least-outstanding");
}

int Router::pick(const std::vector<int>& outstanding) {
  const long n = static_cast<long>(outstanding.size());
  if (kind_ == RouterKind::kRoundRobin) return static_cast<int>(routed_++ % n);
  return static_cast<int>(std::min_element(outstanding.begin(), outstanding.end()) - outstanding.begin());
}

}  // namespace hetsim::serving
