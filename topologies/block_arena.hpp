#pragma once
// Sequences of values stored end to end in blocks that never move: what store() returns stays
// valid as more is stored, and a stored sequence costs no heap block of its own. The cluster
// keeps its link names and its cached routes this way: at 65,536 GPUs that is 262,144 names and
// a few hundred thousand routes, each of which was a heap block to build, free and chase.
#include <algorithm>
#include <cstddef>
#include <memory>
#include <span>
#include <vector>

namespace hetsim {

template <class T, std::size_t kBlockValues>
class BlockArena {
 public:
  // A copy of `values`, in one block (a sequence never straddles two).
  std::span<const T> store(std::span<const T> values) {
    if (static_cast<std::size_t>(end_ - next_) < values.size()) {
      const std::size_t size = std::max(kBlockValues, values.size());
      blocks_.push_back(std::make_unique_for_overwrite<T[]>(size));
      next_ = blocks_.back().get();
      end_ = next_ + size;
    }
    T* const first = next_;
    next_ = std::copy(values.begin(), values.end(), first);
    return {first, values.size()};
  }
  std::size_t blocks() const { return blocks_.size(); }

 private:
  std::vector<std::unique_ptr<T[]>> blocks_;
  T* next_ = nullptr;  // the last block's first free value
  T* end_ = nullptr;
};

}  // namespace hetsim
