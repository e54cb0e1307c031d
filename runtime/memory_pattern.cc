#include "runtime/memory_pattern.h"

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
  // Which earlier blocks share bytes with each block: they must be gone before it is handed out.
  for (uint32_t i = 0; i < p.blocks.size(); ++i) {
    MemoryPattern::Block& b = p.blocks[i];
    if (!b.planned) continue;
    for (uint32_t j = 0; j < i; ++j) {
      const MemoryPattern::Block& o = p.blocks[j];
      if (o.planned && o.offset < b.offset + b.capacity && b.offset < o.offset + o.capacity) b.must_be_free.push_back(j);
    }
  }
  return p;
}

}  // namespace onnxmini
