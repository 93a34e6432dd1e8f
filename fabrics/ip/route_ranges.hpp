// A switch's routes by destination address, kept as ranges of consecutive
// addresses that lead to the same ECMP set. The addressing plan numbers
// hosts in order (fabrics/ip/l3_network.cpp) and topologies number a
// leaf's, a pod's hosts together, so a fat-tree switch's routes to 1,024
// hosts are a few dozen ranges: a few hundred bytes, where a hash map and
// a tree of one entry an address held about 100 KiB a switch, on every
// rank of a split run (docs/parallel.md). A lookup is a binary search
// over the ranges.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace rdmasim {

template <typename Key>
class RouteRanges {
 public:
  // The route to `k` leads to `value` from now on.
  void set(Key k, uint32_t value) {
    // Addresses set in ascending order (a switch's routes to every host)
    // land behind the last range: no search.
    size_t i = ranges_.empty() || ranges_.back().last < k ? ranges_.size() : first_after(k);
    if (i > 0 && ranges_[i - 1].last >= k) {
      // Inside range i - 1: take k out of it (it may split in two).
      Range& r = ranges_[i - 1];
      if (r.value == value) return;
      if (r.first == k && r.last == k) {
        ranges_.erase(ranges_.begin() + static_cast<ptrdiff_t>(i - 1));
        --i;
      } else if (r.first == k) {
        ++r.first;
        --i;
      } else if (r.last == k) {
        --r.last;
      } else {
        const Range right{k + 1, r.last, r.value};
        r.last = k - 1;
        ranges_.insert(ranges_.begin() + static_cast<ptrdiff_t>(i), right);
      }
    }
    // Range i is the first after k; join a neighbour that continues it.
    const bool left = i > 0 && ranges_[i - 1].last + 1 == k && ranges_[i - 1].value == value;
    const bool right =
        i < ranges_.size() && k != kMax && ranges_[i].first == k + 1 && ranges_[i].value == value;
    if (left && right) {
      ranges_[i - 1].last = ranges_[i].last;
      ranges_.erase(ranges_.begin() + static_cast<ptrdiff_t>(i));
    } else if (left) {
      ranges_[i - 1].last = k;
    } else if (right) {
      ranges_[i].first = k;
    } else {
      ranges_.insert(ranges_.begin() + static_cast<ptrdiff_t>(i), Range{k, k, value});
    }
  }

  // The routes to [first, last] lead to `value` from now on.
  void set(Key first, Key last, uint32_t value) {
    if (ranges_.empty() || ranges_.back().last < first) {  // behind every range: no search
      if (!ranges_.empty() && ranges_.back().last + 1 == first && ranges_.back().value == value)
        ranges_.back().last = last;
      else
        ranges_.push_back(Range{first, last, value});
      return;
    }
    for (Key k = first;; ++k) {
      set(k, value);
      if (k == last) return;
    }
  }

  // Where the route to `k` leads, or null: no route.
  const uint32_t* find(Key k) const {
    const size_t i = first_after(k);
    if (i == 0 || ranges_[i - 1].last < k) return nullptr;
    return &ranges_[i - 1].value;
  }

  size_t ranges() const { return ranges_.size(); }
  // Heap bytes the table holds.
  size_t bytes() const { return ranges_.capacity() * sizeof(Range); }
  // Gives back the room insertions left over (once the routes are set).
  void shrink() { ranges_.shrink_to_fit(); }

 private:
  static constexpr Key kMax = static_cast<Key>(~Key{0});  // keys are unsigned
  struct Range {
    Key first, last;  // inclusive
    uint32_t value;
  };
  // The index of the first range that starts after k.
  size_t first_after(Key k) const {
    return static_cast<size_t>(std::upper_bound(ranges_.begin(), ranges_.end(), k,
                                                [](Key a, const Range& r) { return a < r.first; }) -
                               ranges_.begin());
  }

  std::vector<Range> ranges_;  // ascending, disjoint
};

}  // namespace rdmasim
