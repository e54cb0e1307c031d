// The run's memory: intermediates come from a pool of 64-byte aligned blocks.
// A block goes back to the pool when the last tensor viewing it is dropped
// (after the value's last consumer), and the next allocation of a similar size
// reuses it. The pool counts the bytes handed out, so the executor can report
// live intermediate bytes after each node and the run's peak.
//
// With a memory pattern (runtime/memory_pattern.h) the pool first records a run,
// then replays the layout: request i of a run gets its fixed offset in one arena.
// A pool serves one run at a time (the session keeps one per concurrent run).
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "onnxmini/tensor.h"
#include "runtime/memory_pattern.h"

namespace onnxmini {

class BufferPool : public std::enable_shared_from_this<BufferPool> {
 public:
  ~BufferPool();
  Tensor allocate(DType dtype, const Shape& shape);
  size_t live_bytes() const;
  size_t peak_bytes() const;
  void reset_peak();
  size_t cached_bytes() const;
  // The most bytes the run's live intermediates may hold (SessionOptions::max_intermediate_bytes):
  // a request that would pass it fails before allocating, naming the shape and the sizes.
  void set_live_limit(size_t bytes);

  // Starts a run: replay `pattern` (may be null) and/or record this run's requests.
  void start_run(std::shared_ptr<const MemoryPattern> pattern, bool record);
  // Ends it: the recorded pattern (null when not recording); call once the run's
  // intermediates are released and only what it returns is still held.
  std::shared_ptr<const MemoryPattern> finish_run();
  // This run's requests served from the arena / from the pool.
  size_t planned_requests() const;
  size_t pooled_requests() const;

 private:
  Tensor from_pool(DType dtype, const Shape& shape, size_t bytes, size_t capacity, uint32_t index);
  void release(void* block, size_t capacity, uint32_t index, uint64_t run);
  void release_planned(size_t capacity, uint32_t index, uint64_t run);
  static void release_block(void* owner, void* block, const uint64_t* words);
  static void release_planned_block(void* owner, void* block, const uint64_t* words);
  Buffer::Release release_of(void (*fn)(void*, void*, const uint64_t*), size_t capacity, uint32_t index, uint64_t run);
  mutable std::mutex mu_;
  // (capacity, block), sorted by capacity: a vector, not a multimap, so that handing a
  // block back and taking it again allocate nothing (a node per release otherwise).
  std::vector<std::pair<size_t, void*>> free_;
  size_t cached_ = 0;
  size_t live_ = 0;
  size_t peak_ = 0;
  size_t live_limit_ = SIZE_MAX;
  // Counts `capacity` more live bytes, or throws when that passes live_limit_ (mu_ held).
  void add_live_locked(size_t capacity, DType dtype, const Shape& shape);

  // The current run (guarded by mu_): releases of tensors from earlier runs are ignored here.
  uint64_t run_ = 0;
  uint32_t next_request_ = 0;
  size_t planned_ = 0, pooled_ = 0;
  std::unique_ptr<AllocationTrace> recording_;
  std::vector<bool> alive_;  // per request of this run: not yet released
  std::shared_ptr<const MemoryPattern> pattern_;
  bool replaying_ = false;
  std::shared_ptr<void> arena_;  // held by every tensor in it; replaced when one outlives its run
  size_t arena_bytes_ = 0;
};

}  // namespace onnxmini
