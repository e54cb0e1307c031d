// The run's memory: intermediates come from a pool of 64-byte aligned blocks.
// A block goes back to the pool when the last tensor viewing it is dropped
// (after the value's last consumer), and the next allocation of a similar size
// reuses it. The pool counts the bytes handed out, so the executor can report
// live intermediate bytes after each node and the run's peak.
#pragma once
#include <cstddef>
#include <map>
#include <memory>
#include <mutex>

#include "onnxmini/tensor.h"

namespace onnxmini {

class BufferPool : public std::enable_shared_from_this<BufferPool> {
 public:
  ~BufferPool();
  Tensor allocate(DType dtype, const Shape& shape);
  size_t live_bytes() const;
  size_t peak_bytes() const;
  void reset_peak();
  size_t cached_bytes() const;

 private:
  void release(void* block, size_t capacity, size_t bytes);
  mutable std::mutex mu_;
  std::multimap<size_t, void*> free_;  // capacity -> block
  size_t cached_ = 0;
  size_t live_ = 0;
  size_t peak_ = 0;
};

}  // namespace onnxmini
