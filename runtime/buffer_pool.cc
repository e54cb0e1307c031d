#include "runtime/buffer_pool.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>

namespace onnxmini {

namespace {
constexpr size_t kAlign = Buffer::kAlignment;
// Cached blocks above this total are freed instead of kept.
constexpr size_t kMaxCached = size_t(1) << 31;
}  // namespace

// What a pooled or planned tensor's buffer does when it dies: hands its block (or its
// arena slot) back to the pool, or frees a pooled block once the pool is gone.
void BufferPool::release_block(void* owner, void* block, const uint64_t* words) {
  if (owner) static_cast<BufferPool*>(owner)->release(block, words[0], static_cast<uint32_t>(words[1]), words[2]);
  else std::free(block);
}

void BufferPool::release_planned_block(void* owner, void*, const uint64_t* words) {
  if (owner) static_cast<BufferPool*>(owner)->release_planned(words[0], static_cast<uint32_t>(words[1]), words[2]);
}

Buffer::Release BufferPool::release_of(void (*fn)(void*, void*, const uint64_t*), size_t capacity, uint32_t index,
                                       uint64_t run) {
  Buffer::Release r;
  r.fn = fn;
  r.owner = weak_from_this();
  r.words[0] = capacity;
  r.words[1] = index;
  r.words[2] = run;
  return r;
}

BufferPool::~BufferPool() {
  for (auto& kv : free_) std::free(kv.second);
}

void BufferPool::start_run(std::shared_ptr<const MemoryPattern> pattern, bool record) {
  std::lock_guard<std::mutex> lk(mu_);
  ++run_;
  next_request_ = 0;
  planned_ = pooled_ = 0;
  alive_.clear();
  recording_ = record ? std::make_unique<AllocationTrace>() : nullptr;
  pattern_ = std::move(pattern);
  replaying_ = pattern_ && pattern_->arena_bytes > 0;
  if (!replaying_) return;
  // A new arena when the last one is too small or a tensor of an earlier run still lives in it.
  if (!arena_ || arena_bytes_ < pattern_->arena_bytes || arena_.use_count() > 1) {
    void* block = std::aligned_alloc(kAlign, pattern_->arena_bytes);
    if (!block) {
      replaying_ = false;
      return;
    }
    arena_ = std::shared_ptr<void>(block, std::free);
    arena_bytes_ = pattern_->arena_bytes;
  }
}

std::shared_ptr<const MemoryPattern> BufferPool::finish_run() {
  std::lock_guard<std::mutex> lk(mu_);
  replaying_ = false;
  pattern_.reset();
  if (!recording_) return nullptr;
  auto pattern = std::make_shared<const MemoryPattern>(recording_->layout(alive_));
  recording_.reset();
  return pattern;
}

size_t BufferPool::planned_requests() const {
  std::lock_guard<std::mutex> lk(mu_);
  return planned_;
}
size_t BufferPool::pooled_requests() const {
  std::lock_guard<std::mutex> lk(mu_);
  return pooled_;
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

  std::unique_lock<std::mutex> lk(mu_);
  const uint32_t index = next_request_++;
  if (recording_ || replaying_) alive_.push_back(true);
  if (recording_) recording_->allocated(capacity);
  if (replaying_) {
    const auto& blocks = pattern_->blocks;
    const MemoryPattern::Block* b = index < blocks.size() ? &blocks[index] : nullptr;
    bool fits = b && b->capacity == capacity;
    if (fits && b->planned)
      for (uint32_t j : b->must_be_free) fits = fits && !alive_[j];
    if (!fits) replaying_ = false;  // the run left the recorded sequence: pool only from here on
    if (fits && b->planned) {
      add_live_locked(capacity, dtype, shape);
      ++planned_;
      void* data = static_cast<char*>(arena_.get()) + b->offset;
      auto buffer = Buffer::with_release(data, bytes, release_of(release_planned_block, capacity, index, run_), arena_);
      return Tensor(dtype, shape, std::move(buffer), 0);
    }
  }
  lk.unlock();
  return from_pool(dtype, shape, bytes, capacity, index);
}

Tensor BufferPool::from_pool(DType dtype, const Shape& shape, size_t bytes, size_t capacity, uint32_t index) {
  void* block = nullptr;
  uint64_t run;
  {
    std::lock_guard<std::mutex> lk(mu_);
    run = run_;
    // Best fit among blocks no more than twice the request.
    auto it = std::lower_bound(free_.begin(), free_.end(), capacity,
                               [](const std::pair<size_t, void*>& e, size_t c) { return e.first < c; });
    const bool reuse = it != free_.end() && it->first <= 2 * capacity;
    add_live_locked(reuse ? it->first : capacity, dtype, shape);  // before taking anything: nothing to undo
    ++pooled_;
    if (reuse) {
      capacity = it->first;
      block = it->second;
      cached_ -= capacity;
      free_.erase(it);
    }
  }
  if (!block) {
    block = std::aligned_alloc(kAlign, capacity);
    if (!block) {
      std::lock_guard<std::mutex> lk(mu_);
      live_ -= capacity;
      throw Error(ErrorCode::RuntimeError, "out of memory allocating " + std::to_string(bytes) + " bytes");
    }
  }
  auto buffer = Buffer::with_release(block, bytes, release_of(release_block, capacity, index, run));
  return Tensor(dtype, shape, std::move(buffer), 0);
}

void BufferPool::release_planned(size_t capacity, uint32_t index, uint64_t run) {
  std::lock_guard<std::mutex> lk(mu_);
  live_ -= capacity;
  if (run == run_ && index < alive_.size()) {
    alive_[index] = false;
    if (recording_) recording_->released(index);
  }
}

void BufferPool::release(void* block, size_t capacity, uint32_t index, uint64_t run) {
  std::lock_guard<std::mutex> lk(mu_);
  live_ -= capacity;
  if (run == run_ && index < alive_.size()) {
    alive_[index] = false;
    if (recording_) recording_->released(index);
  }
  if (cached_ + capacity > kMaxCached) {
    std::free(block);
    return;
  }
  auto at = std::upper_bound(free_.begin(), free_.end(), capacity,
                             [](size_t c, const std::pair<size_t, void*>& e) { return c < e.first; });
  free_.insert(at, {capacity, block});
  cached_ += capacity;
}

void BufferPool::set_live_limit(size_t bytes) {
  std::lock_guard<std::mutex> lk(mu_);
  live_limit_ = bytes;
}

void BufferPool::add_live_locked(size_t capacity, DType dtype, const Shape& shape) {
  if (capacity > live_limit_ || live_ > live_limit_ - capacity)
    throw Error(ErrorCode::RuntimeError,
                fmt::format("{} tensor of shape {} ({} bytes) would bring the run's live intermediates to {} bytes, "
                            "more than max_intermediate_bytes {}",
                            dtype_name(dtype), shape_to_string(shape), capacity, live_ + capacity, live_limit_));
  live_ += capacity;
  if (live_ > peak_) peak_ = live_;
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
