#include "core/thread_pool.h"

#include <fcntl.h>
#include <sched.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace onnxmini {

namespace {
int64_t steady_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}
// Set while a thread runs chunks, so nested parallel_for calls run inline
// instead of deadlocking on the pool.
thread_local bool t_inside_pool = false;

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}
}  // namespace

ThreadPool::ThreadPool(int num_threads, int spin_us)
    : num_threads_(std::max(1, num_threads)),
      spin_us_(std::max(0, spin_us)),
      shares_(static_cast<size_t>(std::max(1, num_threads))),
      chunk_counts_(static_cast<size_t>(std::max(1, num_threads))),
      last_core_(static_cast<size_t>(std::max(1, num_threads))) {
  for (auto& c : last_core_) c = -1;
  if (const char* rule = std::getenv("ONNXMINI_PARALLEL_COST_RULE")) cost_rule_ = std::strcmp(rule, "0") != 0;
  if (const char* rule = std::getenv("ONNXMINI_SHARED_CORE_RULE")) shared_core_rule_.store(std::strcmp(rule, "0") != 0);
  cpus_ = static_cast<int>(std::max(1L, ::sysconf(_SC_NPROCESSORS_ONLN)));
  for (int i = 1; i < num_threads_; ++i) workers_.emplace_back([this, i] { worker_loop(i); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lk(mu_);
    stop_.store(true, std::memory_order_release);
  }
  cv_work_.notify_all();
  for (auto& t : workers_) t.join();
}

template <typename Pred>
bool ThreadPool::spin_until(Pred pred, bool may_yield) const {
  if (pred()) return true;
  if (spin_us_ == 0) return false;
  const int64_t start = steady_ns();
  const int64_t spin_ns = may_yield ? int64_t(spin_us_) * 1000 : idle_spin_ns(start);
  const int64_t deadline = start + spin_ns, polite = start + kSpinBeforeYieldNs;
  for (;;) {
    // The clock is read once per 32 polls; each poll pauses the core briefly
    // (lets a sibling hyper-thread run and saves power while spinning).
    for (int i = 0; i < 32; ++i) {
      if (pred()) return true;
      cpu_relax();
    }
    const int64_t now = steady_ns();
    if (now > deadline) return pred();
    // The caller (may_yield) gives its core away between poll rounds once it has
    // waited 50 us for the workers: a worker that holds a chunk but was
    // descheduled (more runnable threads than cores) needs that time slice.
    // Measured, 2-thread 256 Gemm pair with a compiler busy on the machine:
    // 0.78 ms when both sides spin purely, 0.23-0.62 ms with this yield, 0.38 ms
    // with sleeping workers (--no-spin).
    // Workers waiting for a job do not yield: two pool threads that start on
    // one core then share it politely and the scheduler was seen not to
    // separate them (a 2-thread Sqrt ran at 0.22 ms instead of 0.10 ms in
    // about half of the short runs).
    if (may_yield && now > polite) sched_yield();
  }
}

namespace {

// CPU time of every process of the machine (user, nice, system, irq, softirq of /proc/stat's
// first line; idle, iowait and steal, a hypervisor's share, are not), in ns; -1 unreadable.
int64_t machine_busy_ns() {
  const int fd = ::open("/proc/stat", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  char buf[256];
  const ssize_t got = ::read(fd, buf, sizeof(buf) - 1);
  ::close(fd);
  if (got <= 0) return -1;
  buf[got] = 0;
  unsigned long long user, nice, system, idle, iowait, irq, softirq;
  if (std::sscanf(buf, "cpu %llu %llu %llu %llu %llu %llu %llu", &user, &nice, &system, &idle, &iowait, &irq,
                  &softirq) != 7)
    return -1;
  static const double ns_per_tick = 1e9 / static_cast<double>(::sysconf(_SC_CLK_TCK));
  return static_cast<int64_t>(static_cast<double>(user + nice + system + irq + softirq) * ns_per_tick);
}

// This process's CPU time, all threads, in ns.
int64_t process_cpu_ns() {
  struct rusage ru;
  if (getrusage(RUSAGE_SELF, &ru) != 0) return -1;
  return (int64_t(ru.ru_utime.tv_sec) + ru.ru_stime.tv_sec) * 1'000'000'000 +
         (int64_t(ru.ru_utime.tv_usec) + ru.ru_stime.tv_usec) * 1000;
}

}  // namespace

void ThreadPool::check_machine_load(int64_t now) {
  if (now < next_load_check_ns_.load(std::memory_order_relaxed) || !shared_core_rule()) return;
  std::unique_lock<std::mutex> lk(load_mu_, std::try_to_lock);
  if (!lk.owns_lock() || now < next_load_check_ns_.load(std::memory_order_relaxed)) return;
  next_load_check_ns_.store(now + kLoadWindowNs, std::memory_order_relaxed);
  const int64_t busy = machine_busy_ns(), self = process_cpu_ns();
  if (busy < 0 || self < 0) return;
  if (load_sample_ns_ > 0) {
    // Other processes' CPU time over the window, in cores: more than the cores this pool
    // leaves free means some pool thread shares its core. A busy-looping process beside a
    // 2-thread pool on 2 cores gets 0.4-0.6 of a core (three threads share two); on the idle
    // machine the figure stays within +-0.12 (/proc/stat counts in 10 ms ticks).
    const double others = static_cast<double>((busy - load_busy_ns_) - (self - load_self_ns_)) /
                          static_cast<double>(now - load_sample_ns_);
    const bool shared = others > cpus_ - num_threads_ + kSharedCoreSlack;
    if (shared && !core_shared(now)) shared_core_events_.fetch_add(1, std::memory_order_relaxed);
    shared_core_until_ns_.store(shared ? now + 2 * kLoadWindowNs : 0, std::memory_order_relaxed);
  }
  load_sample_ns_ = now, load_busy_ns_ = busy, load_self_ns_ = self;
}

bool ThreadPool::core_shared_now() const { return core_shared(steady_ns()); }

// A worker on a shared core spins only kSharedSpinNs: back-to-back regions (an RNN's steps)
// still find it spinning, while between longer gaps it leaves the core to the other process.
int64_t ThreadPool::idle_spin_ns(int64_t now) const {
  const int64_t full = int64_t(spin_us_) * 1000;
  return core_shared(now) ? std::min<int64_t>(kSharedSpinNs, full) : full;
}

int64_t ThreadPool::idle_spin_ns() const { return idle_spin_ns(steady_ns()); }

bool ThreadPool::take_front(int owner, int64_t& chunk) {
  uint64_t s = shares_[owner].load(std::memory_order_relaxed);
  for (;;) {
    const uint64_t front = s >> 32, back = s & 0xffffffffu;
    if (front >= back) return false;
    if (shares_[owner].compare_exchange_weak(s, s + (uint64_t{1} << 32), std::memory_order_relaxed)) {
      chunk = static_cast<int64_t>(front);
      return true;
    }
  }
}

bool ThreadPool::take_back(int owner, int64_t& chunk) {
  uint64_t s = shares_[owner].load(std::memory_order_relaxed);
  for (;;) {
    const uint64_t front = s >> 32, back = s & 0xffffffffu;
    if (front >= back) return false;
    if (shares_[owner].compare_exchange_weak(s, s - 1, std::memory_order_relaxed)) {
      chunk = static_cast<int64_t>(back - 1);
      return true;
    }
  }
}

void ThreadPool::run_chunks(int thread_index) {
  bool was_inside = t_inside_pool;
  t_inside_pool = true;
  int64_t done = 0, chunk = 0;
  auto run = [&](int64_t c) {
    const int64_t begin = c * chunk_;
    // After a failure the chunks left are taken and dropped, so the job ends soon.
    if (!failed_.load(std::memory_order_relaxed)) {
      try {
        (*fn_)(begin, std::min(n_, begin + chunk_));
      } catch (...) {
        record_failure(std::current_exception());
      }
    }
    ++done;
  };
  // Its own share front to back, then the others' from their backs (the owner, if it
  // runs at all, is working at the front).
  while (take_front(thread_index, chunk)) run(chunk);
  for (int k = 1; k < num_threads_; ++k) {
    const int owner = (thread_index + k) % num_threads_;
    while (take_back(owner, chunk)) run(chunk);
  }
  chunk_counts_[thread_index].fetch_add(done, std::memory_order_relaxed);
  last_core_[thread_index].store(sched_getcpu(), std::memory_order_relaxed);
  t_inside_pool = was_inside;
}

void ThreadPool::record_failure(std::exception_ptr e) {
  std::lock_guard<std::mutex> lk(error_mu_);
  if (!error_) error_ = std::move(e);
  failed_.store(true, std::memory_order_relaxed);
}

bool ThreadPool::try_join(uint64_t generation) {
  uint64_t s = state_.load(std::memory_order_acquire);
  while ((s >> 32) == generation && !(s & kClosed)) {
    // acq_rel: the acquire pairs with the caller's release store of the job.
    if (state_.compare_exchange_weak(s, s + 1, std::memory_order_acq_rel, std::memory_order_acquire)) return true;
  }
  return false;
}

bool ThreadPool::try_close() {
  uint64_t s = state_.load(std::memory_order_acquire);
  while ((s & kJoinedMask) == 0) {
    if (s & kClosed) return true;
    if (state_.compare_exchange_weak(s, s | kClosed, std::memory_order_acq_rel, std::memory_order_acquire))
      return true;
  }
  return false;
}

// Two runnable threads of one pool on one CPU, the other CPU idle: seen on a 2-vCPU KVM
// guest (AMD EPYC), where a worker woken by the caller's notify was queued on the
// caller's CPU. Until the scheduler moved one of them, every parallel_for ran on the
// caller alone (the worker never got to join: 2-thread runs at 1-thread speed), and
// when the woken worker preempted the caller it took every chunk and then spun on
// that CPU while the caller waited behind it (a 72 us Conv took 690 us). The worker
// now checks, on waking, after its chunks and while it spins, whether it shares the
// caller's CPU; if so it narrows its affinity to the other allowed CPUs, which moves
// it at once, and restores the mask (the move has happened; the scheduler may place
// it anywhere later). A process pinned to one CPU has nowhere to go and stays.
bool ThreadPool::leave_caller_cpu() {
  const int caller = caller_cpu_.load(std::memory_order_relaxed);
  if (caller < 0 || sched_getcpu() != caller) return false;
  cpu_set_t allowed;
  if (sched_getaffinity(0, sizeof allowed, &allowed) != 0 || !CPU_ISSET(caller, &allowed) ||
      CPU_COUNT(&allowed) < 2)
    return false;
  cpu_set_t others = allowed;
  CPU_CLR(caller, &others);
  if (sched_setaffinity(0, sizeof others, &others) != 0) return false;
  sched_setaffinity(0, sizeof allowed, &allowed);
  migrations_.fetch_add(1, std::memory_order_relaxed);
  return true;
}

void ThreadPool::worker_loop(int index) {
  uint64_t seen = 0;
  auto has_job = [&] {
    return (state_.load(std::memory_order_acquire) >> 32) != seen || stop_.load(std::memory_order_acquire);
  };
  // While spinning, every 256th poll also looks at the CPU (sched_getcpu reads rseq's
  // cpu_id: a few ns).
  uint32_t polls = 0;
  auto spin_has_job = [&] {
    if ((++polls & 255) == 0) leave_caller_cpu();
    return has_job();
  };
  for (;;) {
    if (!spin_until(spin_has_job, false)) {
      std::unique_lock<std::mutex> lk(mu_);
      sleepers_.fetch_add(1, std::memory_order_relaxed);
      cv_work_.wait(lk, has_job);
      sleepers_.fetch_sub(1, std::memory_order_relaxed);
    }
    if (stop_.load(std::memory_order_acquire)) return;
    leave_caller_cpu();
    // Each generation is looked at once: joined and run, or found closed
    // (the caller finished without this worker) and skipped.
    seen = state_.load(std::memory_order_acquire) >> 32;
    if (skip_jobs_for_tests_.load(std::memory_order_relaxed) || !try_join(seen)) continue;
    run_chunks(index);
    const uint64_t left = state_.fetch_sub(1, std::memory_order_acq_rel) - 1;
    if ((left & kJoinedMask) == 0) {
      // Last one out: taking mu_ orders this with a caller that checked the
      // joined count under mu_ and is about to sleep, so the notify is not lost.
      std::lock_guard<std::mutex> lk(mu_);
      cv_done_.notify_one();
    }
    leave_caller_cpu();  // before spinning beside a caller that waits for this CPU
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
  check_machine_load(steady_ns());  // outside the profiler's timings: reads /proc/stat once per window
  std::lock_guard<std::mutex> call_lock(call_mu_);
  const int64_t t0 = steady_ns();
  caller_cpu_.store(sched_getcpu(), std::memory_order_relaxed);
  // About 4 chunks per thread balances uneven chunks without much overhead.
  int64_t chunk = std::max(grain, (n + 4 * num_threads_ - 1) / (4 * num_threads_));
  failed_.store(false, std::memory_order_relaxed);  // no worker is in a job here (the last one was closed)
  {
    std::lock_guard<std::mutex> lk(mu_);
    fn_ = &fn;
    n_ = n;
    chunk_ = chunk;
    // Thread i's share: chunks [i * C / T, (i + 1) * C / T) of C. Published by the release
    // store of the generation below (workers join with an acquire CAS).
    const int64_t chunks = (n + chunk - 1) / chunk, t = num_threads_;
    for (int64_t i = 0; i < t; ++i)
      shares_[i].store(static_cast<uint64_t>(i * chunks / t) << 32 | static_cast<uint64_t>((i + 1) * chunks / t),
                       std::memory_order_relaxed);
    const uint64_t generation = (state_.load(std::memory_order_relaxed) >> 32) + 1;
    state_.store(generation << 32, std::memory_order_release);  // open, no one joined: spinning workers start here
  }
  const int64_t t1 = steady_ns();
  // A worker counts itself as a sleeper under mu_ before it waits, so one that
  // went to sleep before the bump above is seen here.
  if (sleepers_.load(std::memory_order_relaxed) > 0) cv_work_.notify_all();
  const int64_t t2 = steady_ns();
  run_chunks(0);
  const int64_t t3 = steady_ns();
  // Every chunk is taken; wait for the workers that joined, then close.
  auto closed = [&] { return try_close(); };
  if (!spin_until(closed, true)) {
    std::unique_lock<std::mutex> lk(mu_);
    cv_done_.wait(lk, closed);
  }
  // Profiler statistics (call_mu_ is held, so one writer at a time).
  distribute_ns_.fetch_add(t1 - t0, std::memory_order_relaxed);
  enqueue_ns_.fetch_add(t2 - t1, std::memory_order_relaxed);
  run_ns_.fetch_add(t3 - t2, std::memory_order_relaxed);
  wait_ns_.fetch_add(steady_ns() - t3, std::memory_order_relaxed);
  const int64_t k = block_count_.load(std::memory_order_relaxed);
  block_log_[k % Stats::kBlockLog].store(chunk, std::memory_order_relaxed);
  block_count_.store(k + 1, std::memory_order_release);
  if (failed_.load(std::memory_order_relaxed)) {
    // Every worker that joined has left (the job is closed): error_ is no longer written.
    std::exception_ptr e;
    {
      std::lock_guard<std::mutex> lk(error_mu_);
      e = std::move(error_);
      error_ = nullptr;
    }
    std::rethrow_exception(e);
  }
}

void ThreadPool::parallel_for(int64_t n, int64_t grain, const ParallelCost& cost,
                              const std::function<void(int64_t, int64_t)>& fn) {
  // Every worker asleep: this call would pay a wake-up (a spinning worker just starts).
  const bool asleep = sleepers_.load(std::memory_order_relaxed) >= num_threads_ - 1;
  bool run_inline = n > 0 && num_threads_ > 1 && cost_rule() && !parallel_cost::pays(cost, num_threads_, asleep);
  if (run_inline && asleep && parallel_cost::pays(cost, num_threads_, false)) {
    // Worth splitting with a spinning worker, not worth a wake-up: kept inline every time, a
    // node like this keeps the workers asleep for good when nothing else wakes them (a
    // model whose only such node runs back to back: 128 x 28x28 3x3 depthwise at 2 threads
    // took its 1-thread time). So wake them anyway at most once per kWakeProbeNs: calls that
    // come back within the spin time then find them spinning and split; calls far apart lose
    // at most one wake-up (kWakeNs) per kWakeProbeNs.
    const int64_t now = steady_ns();
    int64_t last = last_wake_probe_ns_.load(std::memory_order_relaxed);
    if (now - last >= kWakeProbeNs &&
        last_wake_probe_ns_.compare_exchange_strong(last, now, std::memory_order_relaxed))
      run_inline = false;
  }
  if (run_inline) {
    calls_.fetch_add(1, std::memory_order_relaxed);
    inline_calls_.fetch_add(1, std::memory_order_relaxed);
    small_work_calls_.fetch_add(1, std::memory_order_relaxed);
    fn(0, n);
    return;
  }
  // The rule says the split pays, so the grain (a minimum chunk for uncosted calls) must not
  // leave the threads uneven: 37 800 floats with a 32 768 grain were 2 chunks of 87 % and
  // 13 %, 100 000 were 3 full chunks and a sliver (2 : 1 on 2 threads). Stretch the grain so
  // that n cuts into a multiple of T near-equal chunks (each at least the kernel's grain
  // when n >= T * grain; below that the rule has already judged the halves worth it).
  if (cost_rule() && num_threads_ > 1) {
    const int64_t t = num_threads_;
    const int64_t per_thread = std::max<int64_t>(1, n / t / std::max<int64_t>(1, grain));
    grain = (n + t * per_thread - 1) / (t * per_thread);
  }
  parallel_for(n, grain, fn);
}

ThreadPool::Stats ThreadPool::stats() const {
  Stats s;
  read_stats(s);
  return s;
}

void ThreadPool::read_stats(Stats& s) const {
  s.block_log_count = block_count_.load(std::memory_order_acquire);
  for (int i = 0; i < Stats::kBlockLog; ++i) s.block_log[i] = block_log_[i].load(std::memory_order_relaxed);
  s.parallel_for_calls = calls_.load();
  s.inline_calls = inline_calls_.load();
  s.small_work_calls = small_work_calls_.load();
  s.migrations = migrations_.load();
  s.chunks = 0;
  s.chunks_per_thread.resize(chunk_counts_.size());
  s.last_core.resize(chunk_counts_.size());
  for (size_t i = 0; i < chunk_counts_.size(); ++i) {
    s.chunks_per_thread[i] = chunk_counts_[i].load();
    s.chunks += s.chunks_per_thread[i];
    s.last_core[i] = last_core_[i].load(std::memory_order_relaxed);
  }
  s.distribute_ns = distribute_ns_.load();
  s.enqueue_ns = enqueue_ns_.load();
  s.run_ns = run_ns_.load();
  s.wait_ns = wait_ns_.load();
}

void ThreadPool::reset_stats() {
  calls_ = 0;
  inline_calls_ = 0;
  small_work_calls_ = 0;
  migrations_ = 0;
  for (auto& c : chunk_counts_) c = 0;
  distribute_ns_ = enqueue_ns_ = run_ns_ = wait_ns_ = 0;
}

std::vector<std::thread::id> ThreadPool::worker_ids() const {
  std::vector<std::thread::id> ids;
  for (const auto& t : workers_) ids.push_back(t.get_id());
  return ids;
}

void parallel_for(ThreadPool* pool, int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn) {
  if (n <= 0) return;
  if (pool && pool->num_threads() > 1)
    pool->parallel_for(n, grain, fn);
  else
    fn(0, n);
}

void parallel_for(ThreadPool* pool, int64_t n, int64_t grain, const ParallelCost& cost,
                  const std::function<void(int64_t, int64_t)>& fn) {
  if (n <= 0) return;
  if (pool && pool->num_threads() > 1)
    pool->parallel_for(n, grain, cost, fn);
  else
    fn(0, n);
}

}  // namespace onnxmini
