// schedule_svg: one box per op, a legend entry per kind present, balanced tags, deterministic.
#include "traces/schedule_svg.hpp"

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "base/error.hpp"

namespace {

std::size_t count(const std::string& text, const std::string& needle) {
  std::size_t n = 0;
  for (std::size_t at = text.find(needle); at != std::string::npos;
       at = text.find(needle, at + needle.size())) {
    ++n;
  }
  return n;
}

// True when every element opened is closed in order (self-closing tags count as both).
bool tags_balance(const std::string& svg) {
  std::vector<std::string> open;
  for (std::size_t at = svg.find('<'); at != std::string::npos; at = svg.find('<', at + 1)) {
    const std::size_t end = svg.find('>', at);
    if (end == std::string::npos) return false;
    const std::string tag = svg.substr(at + 1, end - at - 1);
    if (tag.empty()) return false;
    if (tag[0] == '/') {
      if (open.empty() || open.back() != tag.substr(1)) return false;
      open.pop_back();
    } else if (tag.back() != '/') {
      open.push_back(tag.substr(0, tag.find(' ')));
    }
  }
  return open.empty();
}

// ZB-H1-like fragment on two ranks with F, B and W, chunk 1 on one op, in seconds.
std::vector<hetsim::TimedOp> zero_bubble_ops() {
  return {
      {0, 'F', 0, 0, 0.000, 0.001}, {0, 'F', 1, 0, 0.001, 0.002}, {1, 'F', 0, 0, 0.001, 0.002},
      {1, 'B', 0, 0, 0.002, 0.003}, {1, 'W', 0, 0, 0.003, 0.004}, {0, 'B', 0, 0, 0.003, 0.004},
      {0, 'F', 2, 1, 0.004, 0.005},
  };
}

}  // namespace

TEST_CASE("one box per op plus one legend swatch per kind and chunk shade present") {
  const std::string svg = hetsim::schedule_svg(zero_bubble_ops(), 2, "ZB-H1, p=2");
  // 7 ops; legend: F chunk 0, F chunk 1, B chunk 0, W chunk 0.
  CHECK(count(svg, "<rect") == 7 + 4);
  CHECK(count(svg, "<title>") == 7);
  CHECK(count(svg, ">F forward (chunk 0)</text>") == 1);
  CHECK(count(svg, ">F forward (chunk 1)</text>") == 1);
  CHECK(count(svg, ">B backward (chunk 0)</text>") == 1);
  CHECK(count(svg, ">W weight grad (chunk 0)</text>") == 1);
  CHECK(count(svg, "rank 0</text>") == 1);
  CHECK(count(svg, "rank 1</text>") == 1);
  CHECK(count(svg, "time (ms)</text>") == 1);
  CHECK(tags_balance(svg));
  CHECK(svg.rfind("<svg xmlns=\"http://www.w3.org/2000/svg\"", 0) == 0);
  CHECK(svg.substr(svg.size() - 7) == "</svg>\n");
}

TEST_CASE("kinds get distinct fills; odd chunks a darker shade of their kind") {
  const std::string svg = hetsim::schedule_svg(zero_bubble_ops(), 2, "t");
  CHECK(count(svg, "fill=\"#9fc5e8\"") == 3 + 1);  // F chunk 0: 3 ops and the swatch
  CHECK(count(svg, "fill=\"#3d85c6\"") == 1 + 1);  // F chunk 1
  CHECK(count(svg, "fill=\"#b6d7a8\"") == 2 + 1);  // B
  CHECK(count(svg, "fill=\"#c9b8e8\"") == 1 + 1);  // W
}

TEST_CASE("boxes sit at their times: 960 px for the 5 ms schedule, 70 px left margin") {
  const std::string svg = hetsim::schedule_svg(zero_bubble_ops(), 2, "t");
  // The chunk-1 F of microbatch 2 runs 4 to 5 ms: x = 70 + 960 * 4/5, width 192.
  CHECK(count(svg,
              "<rect x=\"838.00\" y=\"40.00\" width=\"192.00\" height=\"24.00\" "
              "fill=\"#3d85c6\"") == 1);
  CHECK(count(svg, "<title>F microbatch 2 chunk 1: 4 to 5 ms</title>") == 1);
  // The microbatch number is written in the box's centre.
  CHECK(count(svg,
              "<text x=\"934.00\" y=\"56.00\" font-size=\"11\" text-anchor=\"middle\">2</text>") ==
        1);
}

TEST_CASE("offloads and reloads get their own lane; titles are escaped; output is deterministic") {
  const std::vector<hetsim::TimedOp> ops{{0, 'F', 0, 0, 0.0, 2.0},
                                         {0, 'O', 0, 0, 2.0, 3.0},
                                         {0, 'R', 0, 0, 5.0, 6.0},
                                         {0, 'B', 0, 0, 6.0, 8.0}};
  const std::string svg = hetsim::schedule_svg(ops, 1, "a<b & \"c\"");
  CHECK(count(svg, ">a&lt;b &amp; &quot;c&quot;</text>") == 1);
  CHECK(count(svg, "<rect") == 4 + 4);
  CHECK(count(svg, "y=\"66.00\" width=\"120.00\" height=\"11.00\" fill=\"#f9cb9c\"") == 1);
  CHECK(count(svg, "time (s)</text>") == 1);
  CHECK(tags_balance(svg));
  CHECK(svg == hetsim::schedule_svg(ops, 1, "a<b & \"c\""));
}

TEST_CASE("an empty schedule still draws its rows and axis") {
  const std::string svg = hetsim::schedule_svg({}, 3, "idle");
  CHECK(count(svg, "<rect") == 0);
  CHECK(count(svg, "rank 2</text>") == 1);
  CHECK(tags_balance(svg));
  CHECK_THROWS_AS(hetsim::schedule_svg({{3, 'F', 0, 0, 0, 1}}, 3, "t"), hetsim::Error);
}
