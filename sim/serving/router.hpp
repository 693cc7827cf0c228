#pragma once
// Which replica a new request goes to.
#include <string>
#include <vector>

namespace hetsim::serving {

enum class RouterKind {
  kRoundRobin,        // replicas in turn, whatever their load
  kLeastOutstanding,  // the replica with the fewest unfinished requests (lowest index on a tie)
};
const char* to_string(RouterKind kind);
// Throws InputError (command line, --router) for an unknown name.
RouterKind router_from_string(const std::string& text);

class Router {
 public:
  explicit Router(RouterKind kind) : kind_(kind) {}
  // `outstanding[r]`: unfinished requests on replica r (at least one replica).
  int pick(const std::vector<int>& outstanding);

 private:
  RouterKind kind_;
  long routed_ = 0;
};

}  // namespace hetsim::serving
