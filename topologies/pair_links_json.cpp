#include "topologies/pair_links_json.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <unordered_map>

#include "base/error.hpp"
#include "base/units.hpp"
#include "topologies/link_ranges.hpp"

namespace hetsim {

namespace {

// One matrix, rows and columns in the order of `machines`; `to_si` turns an entry into SI units.
// Off the diagonal an entry must lie in [low, high]; on it, 0.
std::vector<std::vector<double>> matrix(const JsonInput& in, std::size_t machines, double low,
                                        double high, double to_si) {
  if (in.array_size() != machines)
    in.fail(
        fmt::format("an array of {} rows, one per machine (got {})", machines, in.array_size()));
  std::vector<std::vector<double>> out(machines, std::vector<double>(machines, 0));
  for (std::size_t i = 0; i < machines; ++i) {
    const JsonInput row = in.at(i);
    if (row.array_size() != machines)
      row.fail(
          fmt::format("a row of {} numbers, one per machine (got {})", machines, row.array_size()));
    for (std::size_t j = 0; j < machines; ++j) {
      const JsonInput cell = row.at(j);
      const bool number = cell.value().is_number();
      const double v = number ? cell.value().get<double>() : 0;
      if (i == j) {
        if (!number || v != 0)
          cell.fail("0 on the diagonal (a machine has no pair link to itself)");
      } else if (!number || !(v >= low && v <= high)) {
        cell.fail(fmt::format("a number between {:g} and {:g}", low, high));
      }
      out[i][j] = v * to_si;
    }
  }
  return out;
}

}  // namespace

PairLinksSpec read_pair_links(const JsonInput& in, const std::vector<std::string>& node_names) {
  in.reject_unknown_keys({"machines", "bandwidth_Gbps", "latency_ms", "source", "description"});
  std::unordered_map<std::string, int> node_index;
  for (std::size_t n = 0; n < node_names.size(); ++n)
    node_index.emplace(node_names[n], static_cast<int>(n));

  PairLinksSpec spec;
  const JsonInput machines = in.at("machines");
  if (machines.array_size() < 2)
    machines.fail("an array of at least two node names (\"site/group<k>\")");
  for (std::size_t m = 0; m < machines.array_size(); ++m) {
    const JsonInput name = machines.at(m);
    if (!name.value().is_string()) name.fail("a node name (a string, \"site/group<k>\")");
    const std::string text = name.value().get<std::string>();
    const auto it = node_index.find(text);
    if (it == node_index.end()) {
      const std::string nearest = nearest_word(text, node_names);
      name.fail("the name of a node of /sites, \"site/group<k>\" with k from 0" +
                (nearest.empty() ? std::string()
                                 : "; did you mean " + nlohmann::json(nearest).dump() + "?"));
    }
    if (std::find(spec.nodes.begin(), spec.nodes.end(), it->second) != spec.nodes.end())
      name.fail("a node not listed before in machines");
    spec.nodes.push_back(it->second);
  }
  const std::size_t n = spec.nodes.size();
  const auto bandwidth = matrix(in.at("bandwidth_Gbps"), n, link_ranges::kMinGbps, link_ranges::kMaxGbps,
                                units::gbit_per_s_to_bytes(1));
  const auto latency = matrix(in.at("latency_ms"), n, 0, link_ranges::kMaxLatencyS / units::kMillisecond,
                              units::kMillisecond);
  spec.figures.assign(n, std::vector<LinkFigures>(n));
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j) spec.figures[i][j] = {bandwidth[i][j], latency[i][j]};
  return spec;
}

}  // namespace hetsim
