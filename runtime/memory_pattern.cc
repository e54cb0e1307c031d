#include "runtime/memory_pattern.h"

#include <algorithm>
#include <iterator>
#include <map>

namespace onnxmini {

MemoryPattern AllocationTrace::layout(const std::vector<bool>& alive) const {
  MemoryPattern p;
  p.blocks.resize(num_blocks_);
  if (num_blocks_ > kMaxPlannedBlocks) return p;  // nothing planned: the layout would cost more than it saves
  std::map<size_t, size_t> free_ranges;  // offset -> bytes, coalesced
  size_t end = 0;                        // arena size so far
  auto take = [&](size_t bytes) {
    auto best = free_ranges.end();
    for (auto it = free_ranges.begin(); it != free_ranges.end(); ++it)
      if (it->second >= bytes && (best == free_ranges.end() || it->second < best->second)) best = it;
    if (best == free_ranges.end()) {
      // Grow the arena, absorbing a free range that ends at the current end.
      size_t offset = end;
      if (!free_ranges.empty()) {
        auto last = std::prev(free_ranges.end());
        if (last->first + last->second == end) {
          offset = last->first;
          free_ranges.erase(last);
        }
      }
      end = offset + bytes;
      return offset;
    }
    const size_t offset = best->first, size = best->second;
    free_ranges.erase(best);
    if (size > bytes) free_ranges.emplace(offset + bytes, size - bytes);
    return offset;
  };
  auto give_back = [&](size_t offset, size_t bytes) {
    auto next = free_ranges.lower_bound(offset);
    if (next != free_ranges.end() && offset + bytes == next->first) {
      bytes += next->second;
      next = free_ranges.erase(next);
    }
    if (next != free_ranges.begin()) {
      auto prev = std::prev(next);
      if (prev->first + prev->second == offset) {
        prev->second += bytes;
        return;
      }
    }
    free_ranges.emplace(offset, bytes);
  };
  for (const Event& e : events_) {
    MemoryPattern::Block& b = p.blocks[e.block];
    if (e.capacity) {
      b.capacity = e.capacity;
      b.planned = e.block < alive.size() && !alive[e.block];
      if (b.planned) b.offset = take(e.capacity);
    } else if (b.planned) {
      give_back(b.offset, b.capacity);
    }
  }
  p.arena_bytes = end;
  // Which earlier blocks must be gone before each block is handed out. Enough: the
  // latest earlier owner of each of its bytes. Any other earlier block j sharing bytes
  // with it shares them with such a later owner k too, and k was handed out from the
  // arena in this run (the replay stops at the first block that is not) only once j was
  // released, which it stays. Keeping the latest owners alone makes each block's check
  // O(1) for a chain (two blocks taking turns) instead of O(position in the run).
  std::map<size_t, int64_t> owner;  // arena offset -> block owning the bytes from there (-1: none yet)
  owner.emplace(0, -1);
  owner.emplace(end, -1);  // sentinel: bytes at and past `end` belong to no block
  auto split_at = [&](size_t offset) {
    auto it = owner.upper_bound(offset);
    const int64_t who = std::prev(it)->second;
    return owner.emplace(offset, who).first;
  };
  for (uint32_t i = 0; i < p.blocks.size(); ++i) {
    MemoryPattern::Block& b = p.blocks[i];
    if (!b.planned) continue;
    auto first = split_at(b.offset), last = split_at(b.offset + b.capacity);
    for (auto it = first; it != last; ++it) {
      const int64_t j = it->second;
      if (j >= 0 && (b.must_be_free.empty() || b.must_be_free.back() != static_cast<uint32_t>(j)))
        b.must_be_free.push_back(static_cast<uint32_t>(j));
    }
    std::sort(b.must_be_free.begin(), b.must_be_free.end());
    b.must_be_free.erase(std::unique(b.must_be_free.begin(), b.must_be_free.end()), b.must_be_free.end());
    owner.erase(std::next(first), last);
    first->second = i;
  }
  return p;
}

}  // namespace onnxmini
