#include "runtime/buffer_pool.h"

#include <cstdlib>

namespace onnxmini {

namespace {
constexpr size_t kAlign = Buffer::kAlignment;
// Cached blocks above this total are freed instead of kept.
constexpr size_t kMaxCached = size_t(1) << 31;
}  // namespace

BufferPool::~BufferPool() {
  for (auto& kv : free_) std::free(kv.second);
}

Tensor BufferPool::allocate(DType dtype, const Shape& shape) {
  if (dtype == DType::String) return Tensor(dtype, shape);  // strings own objects: not pooled
  int64_t n = shape_numel(shape);
  size_t esize = dtype_size(dtype);
  if (esize == 0) throw Error(ErrorCode::InvalidArgument, "cannot allocate a tensor of an unknown dtype");
  if (static_cast<uint64_t>(n) > (uint64_t(1) << 60) / esize)
    throw Error(ErrorCode::RuntimeError, "tensor of shape " + shape_to_string(shape) + " is too large");
  size_t bytes = static_cast<size_t>(n) * esize;
  size_t capacity = std::max(kAlign, (bytes + kAlign - 1) / kAlign * kAlign);
  void* block = nullptr;
  {
    std::lock_guard<std::mutex> lk(mu_);
    // Best fit among blocks no more than twice the request.
    auto it = free_.lower_bound(capacity);
    if (it != free_.end() && it->first <= 2 * capacity) {
      capacity = it->first;
      block = it->second;
      cached_ -= capacity;
      free_.erase(it);
    }
    live_ += capacity;
    if (live_ > peak_) peak_ = live_;
  }
  if (!block) {
    block = std::aligned_alloc(kAlign, capacity);
    if (!block) {
      std::lock_guard<std::mutex> lk(mu_);
      live_ -= capacity;
      throw Error(ErrorCode::RuntimeError, "out of memory allocating " + std::to_string(bytes) + " bytes");
    }
  }
  std::weak_ptr<BufferPool> weak = weak_from_this();
  auto buffer = Buffer::with_releaser(block, bytes, [weak, capacity](void* p, size_t b) {
    if (auto pool = weak.lock()) pool->release(p, capacity, b);
    else std::free(p);
  });
  return Tensor(dtype, shape, std::move(buffer), 0);
}

void BufferPool::release(void* block, size_t capacity, size_t) {
  std::lock_guard<std::mutex> lk(mu_);
  live_ -= capacity;
  if (cached_ + capacity > kMaxCached) {
    std::free(block);
    return;
  }
  free_.emplace(capacity, block);
  cached_ += capacity;
}

size_t BufferPool::live_bytes() const {
  std::lock_guard<std::mutex> lk(mu_);
  return live_;
}
size_t BufferPool::peak_bytes() const {
  std::lock_guard<std::mutex> lk(mu_);
  return peak_;
}
void BufferPool::reset_peak() {
  std::lock_guard<std::mutex> lk(mu_);
  peak_ = live_;
}
size_t BufferPool::cached_bytes() const {
  std::lock_guard<std::mutex> lk(mu_);
  return cached_;
}

}  // namespace onnxmini
