#include "runtime/thread_pool.h"

#include <algorithm>

namespace onnxmini {

namespace {
// Set while a thread runs chunks, so nested parallel_for calls run inline
// instead of deadlocking on the pool.
thread_local bool t_inside_pool = false;
}  // namespace

ThreadPool::ThreadPool(int num_threads)
    : num_threads_(std::max(1, num_threads)), chunk_counts_(static_cast<size_t>(std::max(1, num_threads))) {
  for (int i = 1; i < num_threads_; ++i) workers_.emplace_back([this, i] { worker_loop(i); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lk(mu_);
    stop_ = true;
  }
  cv_work_.notify_all();
  for (auto& t : workers_) t.join();
}

void ThreadPool::run_chunks(int thread_index) {
  bool was_inside = t_inside_pool;
  t_inside_pool = true;
  int64_t done = 0;
  for (;;) {
    int64_t begin = next_.fetch_add(chunk_, std::memory_order_relaxed);
    if (begin >= n_) break;
    (*fn_)(begin, std::min(n_, begin + chunk_));
    ++done;
  }
  chunk_counts_[thread_index].fetch_add(done, std::memory_order_relaxed);
  t_inside_pool = was_inside;
}

void ThreadPool::worker_loop(int index) {
  uint64_t seen = 0;
  for (;;) {
    {
      std::unique_lock<std::mutex> lk(mu_);
      cv_work_.wait(lk, [&] { return stop_ || generation_ != seen; });
      if (stop_) return;
      seen = generation_;
    }
    run_chunks(index);
    {
      std::lock_guard<std::mutex> lk(mu_);
      if (--active_ == 0) cv_done_.notify_one();
    }
  }
}

void ThreadPool::parallel_for(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn) {
  if (n <= 0) return;
  grain = std::max<int64_t>(1, grain);
  calls_.fetch_add(1, std::memory_order_relaxed);
  if (num_threads_ == 1 || n <= grain || t_inside_pool) {
    inline_calls_.fetch_add(1, std::memory_order_relaxed);
    fn(0, n);
    return;
  }
  std::lock_guard<std::mutex> call_lock(call_mu_);
  // About 4 chunks per thread balances uneven chunks without much overhead.
  int64_t chunk = std::max(grain, (n + 4 * num_threads_ - 1) / (4 * num_threads_));
  {
    std::lock_guard<std::mutex> lk(mu_);
    fn_ = &fn;
    n_ = n;
    chunk_ = chunk;
    next_.store(0, std::memory_order_relaxed);
    active_ = num_threads_ - 1;
    ++generation_;
  }
  cv_work_.notify_all();
  run_chunks(0);
  std::unique_lock<std::mutex> lk(mu_);
  cv_done_.wait(lk, [&] { return active_ == 0; });
  fn_ = nullptr;
}

ThreadPool::Stats ThreadPool::stats() const {
  Stats s;
  s.parallel_for_calls = calls_.load();
  s.inline_calls = inline_calls_.load();
  for (const auto& c : chunk_counts_) {
    s.chunks_per_thread.push_back(c.load());
    s.chunks += c.load();
  }
  return s;
}

void ThreadPool::reset_stats() {
  calls_ = 0;
  inline_calls_ = 0;
  for (auto& c : chunk_counts_) c = 0;
}

void parallel_for(ThreadPool* pool, int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn) {
  if (n <= 0) return;
  if (pool && pool->num_threads() > 1)
    pool->parallel_for(n, grain, fn);
  else
    fn(0, n);
}

}  // namespace onnxmini
