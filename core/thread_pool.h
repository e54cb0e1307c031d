// Intra-op thread pool. Kernels split work with parallel_for; the calling
// thread takes part, so a pool of N threads runs N-1 workers. A pool of size 1
// runs everything inline with no synchronisation.
//
// Hand-off: a job is published by bumping the generation in one atomic state
// word. Idle workers first spin on it for up to `spin_us` microseconds (a
// kernel's parallel_for usually follows the previous one within a few
// microseconds, and a condition-variable wake-up costs far more), then sleep
// on a condition variable. A worker that sees the job *joins* it (counts
// itself in the same word) before taking chunks; the caller takes chunks too
// and, once none is left, waits only for the workers that joined, then closes
// the job so that late workers skip it. On a busy machine a worker may not be
// scheduled for milliseconds: the caller then does its share and more and
// never waits for a thread that has not started (it used to wait for every
// worker, which made 2-thread runs 10-30x slower than 1-thread ones under
// load). The caller spins briefly on the joined count (yielding its core
// between poll rounds after 50 us) before sleeping. spin_us = 0 disables
// spinning (both sleep at once). While other processes keep the cores the pool needs
// busy (the shared-core rule, below), idle workers spin only 20 us before they sleep.
//
// Cost rule (docs/threads.md, "Small nodes run inline"): kernels that know their
// work pass a ParallelCost; the region runs inline on the caller unless the
// estimated one-thread time exceeds what the split costs on this machine: the
// hand-off, plus, for data that stays in the caches, the next node reading the
// worker's half of the output from the other core's cache.
#pragma once
#include <array>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace onnxmini {

// The work of a whole parallel region, as a kernel can count it cheaply.
struct ParallelCost {
  int64_t flops = 0;  // arithmetic operations (a multiply-add counts 2)
  int64_t bytes = 0;  // bytes read + written
  int64_t written = 0;  // of those, bytes written: the next node reads the worker's share
};

// Constants of the cost rule, measured on an Intel Xeon (AVX-512, 2 cores, 4 MB L2 per
// core) with one thread: ns per flop of a vectorised kernel (depthwise Conv, ~75 GFLOP/s),
// ns per byte streamed through L2 (element-wise Add, ~100 GB/s); the hand-off of one
// parallel_for to a spinning worker (benchmarks/bench_pool_handoff.cc: ~0.7-1 us); the
// extra ns per byte when the next node reads data that the worker wrote (an inline Add
// after a 2-thread depthwise Conv: 2.0 -> 4.6 us on 101 KB). Data larger than the
// caches comes from memory whoever wrote it, so only cache-resident outputs pay that.
// A worker asleep (no parallel region for 200 us, the spin time) must be woken: the
// caller's notify and the late start cost ~11 us more (bench_pool_handoff with a 400 us
// gap, 2-thread time minus half the work), so a call that would wake every worker needs
// that much more work.
namespace parallel_cost {
constexpr double kNsPerFlop = 0.013;
constexpr double kNsPerByte = 0.01;
constexpr double kHandoffNs = 1000;
constexpr double kWakeNs = 11000;
constexpr double kRemoteNsPerByte = 0.025;
constexpr int64_t kCacheResidentBytes = int64_t{4} << 20;
inline double one_thread_ns(const ParallelCost& c) { return c.flops * kNsPerFlop + c.bytes * kNsPerByte; }
// True when `threads` threads finish sooner than one: t/T + hand-off + remote reads < t.
// `workers_asleep`: the hand-off is a wake-up (kWakeNs) instead of a spinning worker's start.
inline bool pays(const ParallelCost& c, int threads, bool workers_asleep = false) {
  if (threads <= 1) return false;
  const double t = one_thread_ns(c);
  const double remote =
      c.bytes <= kCacheResidentBytes ? c.written * kRemoteNsPerByte * (threads - 1) / threads : 0.0;
  return t / threads + (workers_asleep ? kWakeNs : kHandoffNs) + remote < t;
}
}  // namespace parallel_cost

class ThreadPool {
 public:
  static constexpr int kDefaultSpinUs = 200;
  static constexpr int64_t kSpinBeforeYieldNs = 50000;  // the caller's pure spin, then with sched_yield
  explicit ThreadPool(int num_threads, int spin_us = kDefaultSpinUs);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int num_threads() const { return num_threads_; }
  int spin_us() const { return spin_us_; }

  // Calls fn(begin, end) on disjoint chunks covering [0, n), each at least
  // `grain` long (except the last). Blocks until all chunks are done. Thread i
  // owns the i-th contiguous share of the chunks and runs them front to back; a
  // thread done with its share takes chunks from the back of the others' shares,
  // so uneven work balances and a late worker's share falls to the caller. Not
  // reentrant: a nested call from inside fn runs inline.
  void parallel_for(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn);
  // Same, but inline on the caller (no hand-off) when parallel_cost::pays says a split
  // costs more than it saves; counted in Stats::small_work_calls.
  void parallel_for(int64_t n, int64_t grain, const ParallelCost& cost,
                    const std::function<void(int64_t, int64_t)>& fn);

  // The cost rule is on by default; off (ONNXMINI_PARALLEL_COST_RULE=0 in the environment
  // when the pool is made, or this setter) every costed call splits as an uncosted one:
  // tests use it to run the multi-thread chunking of kernels on small tensors.
  void set_cost_rule(bool on) { cost_rule_.store(on, std::memory_order_relaxed); }
  bool cost_rule() const { return cost_rule_.load(std::memory_order_relaxed); }

  // Shared-core rule (docs/threads.md, "A busy machine"): while other processes keep the cores
  // this pool needs busy, idle workers spin briefly (kSharedSpinNs) before they sleep. On by
  // default; ONNXMINI_SHARED_CORE_RULE=0 in the environment when the pool is made, or this
  // setter, turns it off.
  void set_shared_core_rule(bool on) { shared_core_rule_.store(on, std::memory_order_relaxed); }
  bool shared_core_rule() const { return shared_core_rule_.load(std::memory_order_relaxed); }
  // Times the rule found the cores shared since the pool was made, and whether it holds now.
  int64_t shared_core_events() const { return shared_core_events_.load(std::memory_order_relaxed); }
  bool core_shared_now() const;
  // How long an idle worker spins for a job now before it sleeps (spin_us, or kSharedSpinNs).
  int64_t idle_spin_ns() const;
  static constexpr int64_t kLoadWindowNs = 100'000'000;  // how often the load is read
  static constexpr int64_t kSharedSpinNs = 20'000;        // a worker's spin on shared cores
  static constexpr double kSharedCoreSlack = 0.25;        // cores beyond the free ones

  // Scheduling statistics since the last reset (for the profiler's thread_scheduling_stats).
  struct Stats {
    int64_t parallel_for_calls = 0;
    int64_t inline_calls = 0;     // calls run on the caller alone (n small, nested or too little work)
    int64_t small_work_calls = 0; // of those, the ones the cost rule kept inline
    int64_t migrations = 0;       // times a worker moved off the caller's CPU (leave_caller_cpu)
    int64_t chunks = 0;           // chunks executed, all threads
    std::vector<int64_t> chunks_per_thread;  // index 0 is the calling thread
    // For onnxruntime's thread_scheduling_stats (profiler): the calling thread's time in
    // calls that used the workers, split into waking them, running its own chunks, waiting.
    int64_t distribute_ns = 0, enqueue_ns = 0, run_ns = 0, wait_ns = 0;
    std::vector<int> last_core;  // per thread (index 0: last caller), sched_getcpu(), -1 unknown
    // Chunk size of the calls that used the workers: call i is block_log[i % kBlockLog].
    static constexpr int kBlockLog = 16;
    int64_t block_log_count = 0;
    std::array<int64_t, kBlockLog> block_log{};
  };
  Stats stats() const;
  // Same as stats(), reusing `out`'s vectors (no allocation once sized).
  void read_stats(Stats& out) const;
  void reset_stats();
  // Tests: while set, workers skip every job, as workers the OS never
  // schedules would; calls must still complete, on the caller alone.
  void set_workers_skip_jobs_for_tests(bool skip) { skip_jobs_for_tests_.store(skip); }
  // std::thread::id of the workers (thread index 1..num_threads-1).
  std::vector<std::thread::id> worker_ids() const;

 private:
  void worker_loop(int index);
  void run_chunks(int thread_index);
  // A worker on the CPU of the thread that last called parallel_for moves off it (see
  // thread_pool.cc); returns true when it did.
  bool leave_caller_cpu();

  // Spins until pred() holds or spin_us_ has passed; true when pred() held.
  template <typename Pred> bool spin_until(Pred pred, bool may_yield) const;
  // Shared-core rule: parallel_for, at most once per kLoadWindowNs, reads the CPU time of the
  // whole machine (/proc/stat; a hypervisor's steal is not counted) and of this process; when
  // the other processes used more cores than this pool leaves free (num_threads of the
  // machine's CPUs), some pool thread shares its core, and for the next two windows idle
  // workers spin only kSharedSpinNs instead of spin_us before they sleep. A worker spinning
  // beside a busy process spends its scheduler share on the spin and the caller, sharing a
  // core with the busy process, runs its inline work slower; a sleeping worker is woken ahead
  // of the busy process. The short spin still catches back-to-back regions (an RNN's steps).
  void check_machine_load(int64_t now);
  std::atomic<int64_t> next_load_check_ns_{0};
  std::mutex load_mu_;  // the sample below: one reader at a time
  int64_t load_sample_ns_ = 0, load_busy_ns_ = 0, load_self_ns_ = 0;
  int cpus_ = 1;
  int64_t idle_spin_ns(int64_t now) const;
  bool core_shared(int64_t now) const { return now < shared_core_until_ns_.load(std::memory_order_relaxed); }
  std::atomic<int64_t> shared_core_until_ns_{0};
  std::atomic<int64_t> shared_core_events_{0};
  std::atomic<bool> shared_core_rule_{true};

  int num_threads_;
  int spin_us_;
  std::vector<std::thread> workers_;
  std::mutex mu_;
  std::mutex call_mu_;  // one parallel_for at a time per pool (concurrent callers queue)
  std::condition_variable cv_work_, cv_done_;
  std::atomic<bool> stop_{false};
  std::atomic<bool> skip_jobs_for_tests_{false};
  std::atomic<bool> cost_rule_{true};
  std::atomic<int> caller_cpu_{-1};  // sched_getcpu() of the last parallel_for's caller
  // Costed calls that pay only with spinning workers wake sleeping ones at most this often
  // (parallel_for with a ParallelCost, thread_pool.cc).
  static constexpr int64_t kWakeProbeNs = 5'000'000;
  std::atomic<int64_t> last_wake_probe_ns_{INT64_MIN / 2};
  std::atomic<int64_t> migrations_{0};
  // The current job: generation << 32 | kClosed | workers joined. The
  // generation is bumped (under mu_) to publish a job; workers join with a CAS
  // while it is open; the caller closes it once the joined count is 0.
  static constexpr uint64_t kClosed = uint64_t{1} << 31;
  static constexpr uint64_t kJoinedMask = kClosed - 1;
  std::atomic<uint64_t> state_{0};
  bool try_close();       // closes the job when no worker is in it; true when closed
  bool try_join(uint64_t generation);  // joins that job when it is still open
  std::atomic<int> sleepers_{0};         // workers waiting on cv_work_ (skip notify when 0)
  // current job
  const std::function<void(int64_t, int64_t)>* fn_ = nullptr;
  int64_t n_ = 0, chunk_ = 1;
  // The first exception a chunk threw (std::bad_alloc, a kernel's error): the remaining
  // chunks are skipped and parallel_for rethrows it on the caller once the job is closed
  // (an exception escaping a worker thread would call std::terminate).
  std::mutex error_mu_;
  std::exception_ptr error_;
  std::atomic<bool> failed_{false};
  void record_failure(std::exception_ptr e);
  // Per thread, its share of the job's chunks as front << 32 | back (chunk indices, the
  // share is empty when front >= back): the owner takes the front, others the back.
  // The same share of [0, n) goes to the same thread in every call, so a chain of
  // kernels splitting the same range reads what its own core wrote (docs/threads.md
  // "Thread-affine shares").
  std::vector<std::atomic<uint64_t>> shares_;
  bool take_front(int owner, int64_t& chunk);
  bool take_back(int owner, int64_t& chunk);
  // stats
  mutable std::mutex stats_mu_;
  std::vector<std::atomic<int64_t>> chunk_counts_;
  std::atomic<int64_t> calls_{0}, inline_calls_{0}, small_work_calls_{0};
  std::atomic<int64_t> distribute_ns_{0}, enqueue_ns_{0}, run_ns_{0}, wait_ns_{0}, block_count_{0};
  std::array<std::atomic<int64_t>, Stats::kBlockLog> block_log_{};
  std::vector<std::atomic<int>> last_core_;
};

// Runs fn over [0, n) on `pool` when it is non-null and has more than one thread,
// inline otherwise.
void parallel_for(ThreadPool* pool, int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn);
// The costed form (see ThreadPool::parallel_for with a ParallelCost).
void parallel_for(ThreadPool* pool, int64_t n, int64_t grain, const ParallelCost& cost,
                  const std::function<void(int64_t, int64_t)>& fn);

}  // namespace onnxmini
