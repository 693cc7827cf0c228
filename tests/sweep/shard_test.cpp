// Shards of a sweep: "i/N" parsing and the split, which must give every point to exactly one part.
#include <doctest/doctest.h>

#include <algorithm>
#include <numeric>
#include <set>

#include "base/error.hpp"
#include "tools/sweep/shard.hpp"

using namespace hetsim::sweep;

TEST_CASE("i/N parses, and anything else is refused naming the flag") {
  const Shard shard = parse_shard("2/5", "--shard");
  CHECK(shard.index == 2);
  CHECK(shard.count == 5);
  CHECK(shard.text() == "2/5");
  // 0/2147483648 used to run the whole sweep unsharded: the count overflowed int unnoticed.
  for (const char* bad : {"5/5", "-1/2", "1/0", "1", "/2", "1/", "a/b", "1/2x", "1//2", "0/2147483648",
                          "99999999999/2"}) {
    CAPTURE(bad);
    CHECK_THROWS_WITH_AS(
        parse_shard(bad, "--shard"),
        ("--shard: got \"" + std::string(bad) + "\"; expected i/N with 0 <= i < N, e.g. 0/4")
            .c_str(),
        hetsim::Error);
  }
}

TEST_CASE("the parts of a split hold every item once, in order, sizes within one") {
  std::vector<std::size_t> items(23);
  std::iota(items.begin(), items.end(), 100);
  std::multiset<std::size_t> seen;
  for (int part = 0; part < 4; ++part) {
    const auto share = share_of(items, part, 4);
    CHECK(share.size() == (part < 3 ? 6u : 5u));
    CHECK(std::is_sorted(share.begin(), share.end()));
    seen.insert(share.begin(), share.end());
  }
  CHECK(seen == std::multiset<std::size_t>(items.begin(), items.end()));
  CHECK(share_of(items, 0, 1) == items);
  CHECK(share_of({1, 2}, 3, 4).empty());
}
