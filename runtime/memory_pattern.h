// The memory plan of a graph for one set of input shapes (onnxruntime's "memory
// pattern"). The first run with new input shapes records its allocation
// requests and their releases, in order; from them a layout in one arena is
// computed (best fit over the free ranges, each block at a fixed offset).
// Later runs with the same shapes take block i of the arena for their i-th
// request instead of searching the pool's free list.
//
// The layout is only a prediction: shapes that depend on data (NonZero, the
// branch an If takes) can change the sequence. So a request is served from the
// arena only while the sequence matches (same size at the same position) and
// every block recorded as overlapping it has been released in this run; the
// first mismatch ends the replay for the rest of the run (back to the pool).
// Blocks still alive when the recorded run ended (its outputs) are never
// planned, and an arena some tensor still holds is never reused.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

namespace onnxmini {

struct MemoryPattern {
  struct Block {
    size_t capacity = 0;  // bytes, 64-byte multiple
    size_t offset = 0;    // in the arena
    bool planned = false;
    // Earlier planned blocks sharing bytes with this one that must be released first: the
    // latest earlier owner of each of its bytes (the others follow, memory_pattern.cc).
    std::vector<uint32_t> must_be_free;
  };
  std::vector<Block> blocks;  // by request index within the run
  size_t arena_bytes = 0;
};

// One run's allocation requests (capacity) and releases, in order.
class AllocationTrace {
 public:
  // Runs with more requests (long loops) are not planned: the layout is quadratic.
  static constexpr size_t kMaxPlannedBlocks = 20000;
  void allocated(size_t capacity) { events_.push_back({static_cast<uint32_t>(num_blocks_++), capacity}); }
  void released(uint32_t block) { events_.push_back({block, 0}); }
  size_t num_blocks() const { return num_blocks_; }
  // The layout; `alive[i]`: block i was still held when the run ended (not planned).
  MemoryPattern layout(const std::vector<bool>& alive) const;

 private:
  struct Event {
    uint32_t block;
    size_t capacity;  // 0: a release
  };
  std::vector<Event> events_;
  size_t num_blocks_ = 0;
};

}  // namespace onnxmini
