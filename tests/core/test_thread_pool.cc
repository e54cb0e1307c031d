// runtime/thread_pool: every index is visited exactly once, with and without
// spinning workers, across many back-to-back calls (the spinning hand-off),
// after the workers have fallen asleep (the condition-variable hand-off), from
// concurrent callers, with nested calls running inline, and with workers
// that never start (the caller finishes alone), with a worker on the caller's
// CPU (it moves off), beside busy processes (the shared-core rule), and with chunks
// that throw (the exception reaches the caller).
#include <gtest/gtest.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <numeric>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "core/thread_pool.h"

namespace onnxmini {
namespace {

// Runs parallel_for over n indices and checks each was visited once.
::testing::AssertionResult covers_once(ThreadPool& pool, int64_t n, int64_t grain) {
  std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
  for (auto& h : hits) h = 0;
  pool.parallel_for(n, grain, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) hits[i].fetch_add(1);
  });
  for (int64_t i = 0; i < n; ++i)
    if (hits[i] != 1) return ::testing::AssertionFailure() << "index " << i << " visited " << hits[i] << " times";
  return ::testing::AssertionSuccess();
}

TEST(ThreadPool, BackToBackCallsWithAndWithoutSpinning) {
  for (int spin : {0, 50, ThreadPool::kDefaultSpinUs}) {
    for (int threads : {2, 3}) {
      ThreadPool pool(threads, spin);
      EXPECT_EQ(pool.spin_us(), spin);
      for (int rep = 0; rep < 300; ++rep) ASSERT_TRUE(covers_once(pool, 1 + rep % 97, 1)) << "spin " << spin;
      // Which thread ran which chunk depends on scheduling (a spinning worker
      // may take every chunk of a small call); the counts must still add up.
      const auto st = pool.stats();
      EXPECT_EQ(st.parallel_for_calls, 300);
      int64_t sum = 0;
      for (int64_t c : st.chunks_per_thread) sum += c;
      EXPECT_EQ(sum, st.chunks);
      EXPECT_GE(st.chunks, st.parallel_for_calls - st.inline_calls);
    }
  }
}

TEST(ThreadPool, WakesWorkersThatFellAsleep) {
  ThreadPool pool(2, 20);  // workers give up spinning after 20 us
  for (int rep = 0; rep < 5; ++rep) {
    std::this_thread::sleep_for(std::chrono::milliseconds(3));
    ASSERT_TRUE(covers_once(pool, 1000, 10));
  }
  // With the workers asleep, a call with enough chunks still uses them eventually.
  int64_t worker_chunks = 0;
  for (int rep = 0; rep < 50 && worker_chunks == 0; ++rep) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    std::atomic<int64_t> sink{0};
    pool.parallel_for(64, 1, [&](int64_t b, int64_t e) {
      std::this_thread::sleep_for(std::chrono::microseconds(200));
      sink += e - b;
    });
    ASSERT_EQ(sink.load(), 64);
    worker_chunks = pool.stats().chunks_per_thread[1];
  }
  EXPECT_GT(worker_chunks, 0) << "the sleeping worker never took a chunk";
}

// Pins the calling thread to `set`; returns false when the system refuses.
bool pin_self(const cpu_set_t& set) { return pthread_setaffinity_np(pthread_self(), sizeof set, &set) == 0; }

// A worker that finds itself on the CPU of parallel_for's caller leaves it (leave_caller_cpu):
// the caller is pinned to one CPU, the worker pins itself there from inside a chunk and
// frees its mask again (which does not move it), so after its chunk it sits on the
// caller's CPU and must move off before spinning.
TEST(ThreadPool, WorkerLeavesTheCallersCpu) {
  cpu_set_t all;
  ASSERT_EQ(sched_getaffinity(0, sizeof all, &all), 0);
  if (CPU_COUNT(&all) < 2) GTEST_SKIP() << "one CPU allowed: nowhere to move";
  int c = 0;
  while (!CPU_ISSET(c, &all)) ++c;
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(c, &one);
  ThreadPool pool(2);
  ASSERT_TRUE(pin_self(one));
  const std::thread::id caller = std::this_thread::get_id();
  std::atomic<int> worker_ran{0};
  for (int rep = 0; rep < 200 && worker_ran == 0; ++rep)
    pool.parallel_for(2, 1, [&](int64_t, int64_t) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));  // both get a chunk
      if (std::this_thread::get_id() != caller) {
        pin_self(one);  // now on c, beside the caller
        pin_self(all);  // free again, still on c (a sleep here would let a wake-up move it)
        worker_ran = 1;
      }
    });
  ASSERT_EQ(worker_ran, 1) << "the worker never took a chunk";
  // The worker moves after it has left the job, so the caller may return first.
  for (int wait = 0; wait < 1000 && pool.stats().migrations == 0; ++wait)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  ASSERT_TRUE(pin_self(all));
  EXPECT_GE(pool.stats().migrations, 1);
  EXPECT_TRUE(covers_once(pool, 1000, 10));
}

// A process pinned to one CPU: the workers share it with the caller and stay (no
// affinity change, no hang).
TEST(ThreadPool, OneAllowedCpuStaysPut) {
  cpu_set_t all;
  ASSERT_EQ(sched_getaffinity(0, sizeof all, &all), 0);
  int c = 0;
  while (!CPU_ISSET(c, &all)) ++c;
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(c, &one);
  ASSERT_TRUE(pin_self(one));
  {
    ThreadPool pool(2);  // its worker inherits the one-CPU mask
    for (int rep = 0; rep < 100; ++rep) ASSERT_TRUE(covers_once(pool, 64, 1));
    EXPECT_EQ(pool.stats().migrations, 0);
  }
  ASSERT_TRUE(pin_self(all));
}

TEST(ThreadPool, CallerNeverWaitsForAWorkerThatDidNotStart) {
  // Workers that skip every job stand for workers the OS has not scheduled
  // (another process holds their core): each call must still finish, on the
  // caller alone, without waiting for them - a pool that waits for every
  // worker hangs here, so the calls run on a thread with a deadline.
  for (int spin_us : {0, 200}) {
    ThreadPool pool(3, spin_us);
    pool.set_workers_skip_jobs_for_tests(true);
    pool.reset_stats();
    std::atomic<bool> done{false};
    std::thread caller([&] {
      for (int rep = 0; rep < 20; ++rep) EXPECT_TRUE(covers_once(pool, 1000, 10));
      done = true;
    });
    for (int ms = 0; ms < 5000 && !done; ++ms) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    if (!done) {
      ADD_FAILURE() << "parallel_for waited for workers that never started (spin_us " << spin_us << ")";
      pool.set_workers_skip_jobs_for_tests(false);  // let it finish so the thread can be joined
    }
    caller.join();
    const ThreadPool::Stats s = pool.stats();
    if (done) {
      EXPECT_EQ(s.chunks, s.chunks_per_thread[0]) << "only the caller ran chunks";
    }
    // Back to normal: the workers join again.
    pool.set_workers_skip_jobs_for_tests(false);
    EXPECT_TRUE(covers_once(pool, 1000, 10));
  }
}

TEST(ThreadPool, ConcurrentCallersAndNestedCalls) {
  ThreadPool pool(2);
  std::vector<std::thread> callers;
  std::atomic<int> failures{0};
  for (int c = 0; c < 3; ++c)
    callers.emplace_back([&] {
      for (int rep = 0; rep < 100; ++rep)
        if (!covers_once(pool, 257, 4)) ++failures;
    });
  for (auto& t : callers) t.join();
  EXPECT_EQ(failures.load(), 0);
  std::atomic<int64_t> total{0};
  pool.parallel_for(8, 1, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i)
      pool.parallel_for(10, 1, [&](int64_t b2, int64_t e2) { total += e2 - b2; });  // inline
  });
  EXPECT_EQ(total.load(), 80);
}

// A chunk that throws (std::bad_alloc from a kernel's scratch, a kernel's error) must reach
// the caller of parallel_for as that exception, from a worker thread too (escaping there it
// would call std::terminate); the chunks not yet started are dropped, and the pool keeps working.
TEST(ThreadPool, AnExceptionInAChunkReachesTheCaller) {
  for (int spin : {0, ThreadPool::kDefaultSpinUs})
    for (int threads : {2, 3}) {
      ThreadPool pool(threads, spin);
      for (int rep = 0; rep < 50; ++rep) {
        try {
          pool.parallel_for(64, 1, [&](int64_t b, int64_t) { throw std::runtime_error("chunk at " + std::to_string(b)); });
          ADD_FAILURE() << "no exception";
        } catch (const std::runtime_error& e) {
          EXPECT_EQ(std::string(e.what()).rfind("chunk at ", 0), 0u) << e.what();
        }
        ASSERT_TRUE(covers_once(pool, 97, 1));
      }
      // Only chunks on worker threads throw; the caller's first chunk waits (up to 200 ms) for
      // a worker to start one, so the worker's throw is what each call sees.
      const std::thread::id caller = std::this_thread::get_id();
      int thrown = 0;
      for (int rep = 0; rep < 20; ++rep) {
        std::atomic<bool> worker_ran{false};
        try {
          pool.parallel_for(64, 1, [&](int64_t, int64_t) {
            if (std::this_thread::get_id() != caller) {
              worker_ran = true;
              throw std::runtime_error("worker");
            }
            const auto t0 = std::chrono::steady_clock::now();
            while (!worker_ran && std::chrono::steady_clock::now() - t0 < std::chrono::milliseconds(200))
              std::this_thread::yield();
          });
          EXPECT_FALSE(worker_ran.load()) << "a worker threw but parallel_for returned";
        } catch (const std::runtime_error& e) {
          EXPECT_STREQ(e.what(), "worker");
          ++thrown;
        }
      }
      EXPECT_GT(thrown, 0) << "no worker took a chunk in 20 calls (threads " << threads << ", spin " << spin << ")";
      EXPECT_TRUE(covers_once(pool, 1000, 10));
    }
}

TEST(ThreadPool, DestroyWhileSpinningOrSleeping) {
  for (int spin : {0, 5000000}) {  // 5 s of spinning: the destructor must not wait for it
    const auto t0 = std::chrono::steady_clock::now();
    {
      ThreadPool pool(3, spin);
      ASSERT_TRUE(covers_once(pool, 100, 1));
    }
    EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(2500)) << "spin " << spin;
  }
}

// The cost rule (docs/threads.md, "Small nodes run inline"): a costed call whose
// work is below the break-even runs once, inline on the caller, with no hand-off.
TEST(ThreadPoolCostRule, TinyWorkRunsInlineOnTheCaller) {
  for (int threads : {2, 3}) {
    ThreadPool pool(threads);
    ASSERT_TRUE(pool.cost_rule());
    const std::thread::id caller = std::this_thread::get_id();
    int calls = 0;
    bool on_caller = true;
    int64_t first = -1, last = -1;
    // An element-wise Add of 1000 floats: ~0.1 us of work, far below a hand-off.
    pool.parallel_for(1000, 1, ParallelCost{1000, 12000, 4000}, [&](int64_t b, int64_t e) {
      ++calls;
      on_caller = on_caller && std::this_thread::get_id() == caller;
      first = b, last = e;
    });
    EXPECT_EQ(calls, 1);
    EXPECT_TRUE(on_caller);
    EXPECT_EQ(first, 0);
    EXPECT_EQ(last, 1000);
    const auto st = pool.stats();
    EXPECT_EQ(st.parallel_for_calls, 1);
    EXPECT_EQ(st.inline_calls, 1);
    EXPECT_EQ(st.small_work_calls, 1);
    for (size_t t = 1; t < st.chunks_per_thread.size(); ++t) EXPECT_EQ(st.chunks_per_thread[t], 0);
  }
}

TEST(ThreadPoolCostRule, LargeWorkSplitsAndTheRuleCanBeTurnedOff) {
  ThreadPool pool(2);
  std::vector<std::atomic<int>> hits(4096);
  for (auto& h : hits) h = 0;
  auto visit = [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) hits[i].fetch_add(1);
  };
  // 1 GFLOP: worth a wake-up as well as a spinning worker's start.
  pool.parallel_for(4096, 16, ParallelCost{int64_t{1} << 30, 0}, visit);
  auto st = pool.stats();
  EXPECT_EQ(st.inline_calls, 0);
  EXPECT_EQ(st.small_work_calls, 0);
  EXPECT_GE(st.chunks, 2);  // split into chunks, whoever ran them
  // Rule off: the tiny call splits as an uncosted one would.
  pool.set_cost_rule(false);
  pool.parallel_for(4096, 16, ParallelCost{4096, 4096 * 12, 4096 * 4}, visit);
  st = pool.stats();
  EXPECT_EQ(st.inline_calls, 0);
  EXPECT_EQ(st.small_work_calls, 0);
  for (size_t i = 0; i < hits.size(); ++i) ASSERT_EQ(hits[i], 2) << "index " << i;
  // And back on: inline again.
  pool.set_cost_rule(true);
  pool.parallel_for(4096, 16, ParallelCost{4096, 4096 * 12, 4096 * 4}, visit);
  EXPECT_EQ(pool.stats().small_work_calls, 1);
}

// Work that pays with a spinning worker (t / 2 + hand-off < t) but not with a wake-up: run
// inline every time, it would keep sleeping workers asleep for good. The pool wakes them
// anyway (at most once per kWakeProbeNs), so the call splits.
TEST(ThreadPoolCostRule, WorkThatPaysOnlyWithSpinningWorkersStillWakesSleepingOnes) {
  using namespace parallel_cost;
  ThreadPool pool(2, /*spin_us=*/0);  // workers sleep as soon as they are idle
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  const ParallelCost five_us{static_cast<int64_t>(5000 / kNsPerFlop), 0};
  ASSERT_TRUE(pays(five_us, 2, false));
  ASSERT_FALSE(pays(five_us, 2, true));
  std::atomic<int> calls{0};
  pool.parallel_for(2, 1, five_us, [&](int64_t, int64_t) { calls.fetch_add(1); });
  const auto st = pool.stats();
  EXPECT_EQ(st.parallel_for_calls, 1);
  EXPECT_EQ(st.small_work_calls, 0);
  EXPECT_EQ(st.inline_calls, 0);
  EXPECT_EQ(calls.load(), 2);  // two chunks, whoever ran them
}

// A split the rule judged worth it gives every thread an even share, whatever the grain:
// 37 800 elements with a 32 768 grain were one 32 768 chunk and one of 5 032.
TEST(ThreadPoolCostRule, PayingSplitsAreBalanced) {
  for (int threads : {2, 3}) {
    for (int64_t n : {int64_t{37800}, int64_t{100000}, int64_t{32769}, int64_t{7}}) {
      ThreadPool pool(threads);
      std::atomic<int64_t> longest{0}, covered{0};
      pool.parallel_for(n, 32768, ParallelCost{int64_t{1} << 30, 0}, [&](int64_t b, int64_t e) {
        int64_t cur = longest.load();
        while (e - b > cur && !longest.compare_exchange_weak(cur, e - b)) {
        }
        covered.fetch_add(e - b);
      });
      EXPECT_EQ(covered.load(), n) << n << " on " << threads;
      EXPECT_LE(longest.load(), (n + threads - 1) / threads) << n << " on " << threads;
      // Below T x grain the halves are what the rule paid for; above it the grain still holds.
      if (n >= threads * 32768) EXPECT_GE(longest.load(), 32768) << n << " on " << threads;
    }
  }
}

TEST(ThreadPoolCostRule, EnvironmentTurnsTheRuleOff) {
  ::setenv("ONNXMINI_PARALLEL_COST_RULE", "0", 1);
  ThreadPool off(2);
  ::unsetenv("ONNXMINI_PARALLEL_COST_RULE");
  ThreadPool on(2);
  EXPECT_FALSE(off.cost_rule());
  EXPECT_TRUE(on.cost_rule());
}

// The break-even itself, from the constants: t / T + hand-off (+ remote reads of
// cache-resident bytes) < t, with a wake-up instead of the hand-off when asleep.
TEST(ThreadPoolCostRule, BreakEvenFollowsTheConstants) {
  using namespace parallel_cost;
  const ParallelCost big{int64_t{1} << 30, 0};
  EXPECT_FALSE(pays(big, 1));
  EXPECT_TRUE(pays(big, 2));
  EXPECT_TRUE(pays(big, 2, true));
  // Pure compute of t ns: pays from t > 2 * hand-off (spinning), 2 * wake-up (asleep).
  auto compute = [](double ns) { return ParallelCost{static_cast<int64_t>(ns / kNsPerFlop), 0}; };
  EXPECT_FALSE(pays(compute(1.8 * kHandoffNs), 2));
  EXPECT_TRUE(pays(compute(2.2 * kHandoffNs), 2));
  EXPECT_FALSE(pays(compute(1.8 * kWakeNs), 2, true));
  EXPECT_TRUE(pays(compute(2.2 * kWakeNs), 2, true));
  // A float32 Add of n elements (12 bytes, 4 written, per element): in the caches it
  // pays only from ~56K elements (the next node's remote reads of the worker's half of
  // the output eat most of the gain); beyond the caches the remote term is gone.
  auto add = [](int64_t n) { return ParallelCost{n, 12 * n, 4 * n}; };
  EXPECT_FALSE(pays(add(1000), 2));
  EXPECT_FALSE(pays(add(38400), 2));  // ppocr_mobile_v2_cls's 200 x 2x96 HardSwish pieces
  EXPECT_TRUE(pays(add(200000), 2));
  const double t = one_thread_ns(add(kCacheResidentBytes / 12 + 1000));
  EXPECT_TRUE(t / 2 + kHandoffNs < t);
  EXPECT_TRUE(pays(add(kCacheResidentBytes / 12 + 1000), 2));
}

// Shared-core rule: with other processes busy-looping on more cores than the pool leaves free
// (2 x CPUs of them, so they get more than the free cores whatever the machine's size), the
// pool finds its cores shared within a few load windows, while every call still covers its
// range once; without calls the finding lapses after two windows. Off, it never triggers.
int64_t calls_beside_busy_processes(ThreadPool& pool, std::chrono::milliseconds limit) {
  const int cpus = static_cast<int>(std::max(1L, ::sysconf(_SC_NPROCESSORS_ONLN)));
  std::vector<pid_t> busy;
  for (int i = 0; i < std::min(2 * cpus, 64); ++i) {
    const pid_t pid = ::fork();
    if (pid == 0) {  // child: spin until killed (touches nothing of the parent's state)
      volatile uint64_t x = 0;
      for (;;) x = x + 1;
    }
    if (pid > 0) busy.push_back(pid);
  }
  const auto deadline = std::chrono::steady_clock::now() + limit;
  bool covered = true;
  while (!pool.core_shared_now() && std::chrono::steady_clock::now() < deadline)
    covered = covered && covers_once(pool, 64, 1);
  if (pool.core_shared_now()) EXPECT_EQ(pool.idle_spin_ns(), ThreadPool::kSharedSpinNs);
  for (int i = 0; i < 200; ++i) covered = covered && covers_once(pool, 64, 1);  // short spins
  for (const pid_t pid : busy) ::kill(pid, SIGKILL);
  for (const pid_t pid : busy) ::waitpid(pid, nullptr, 0);
  EXPECT_TRUE(covered);
  return pool.shared_core_events();
}

TEST(ThreadPoolSharedCore, BusyProcessesTurnSpinningShort) {
  ThreadPool pool(2);
  ASSERT_TRUE(pool.shared_core_rule());
  EXPECT_EQ(pool.shared_core_events(), 0);
  EXPECT_EQ(pool.idle_spin_ns(), int64_t{ThreadPool::kDefaultSpinUs} * 1000);
  EXPECT_GT(calls_beside_busy_processes(pool, std::chrono::seconds(20)), 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(2 * ThreadPool::kLoadWindowNs / 1'000'000 + 50));
  EXPECT_FALSE(pool.core_shared_now());
  EXPECT_EQ(pool.idle_spin_ns(), int64_t{ThreadPool::kDefaultSpinUs} * 1000);
}

TEST(ThreadPoolSharedCore, OffItNeverTriggers) {
  ::setenv("ONNXMINI_SHARED_CORE_RULE", "0", 1);
  ThreadPool pool(2);
  ::unsetenv("ONNXMINI_SHARED_CORE_RULE");
  EXPECT_FALSE(pool.shared_core_rule());
  EXPECT_EQ(calls_beside_busy_processes(pool, std::chrono::milliseconds(500)), 0);
  EXPECT_FALSE(pool.core_shared_now());
  EXPECT_EQ(pool.idle_spin_ns(), int64_t{ThreadPool::kDefaultSpinUs} * 1000);
}

}  // namespace
}  // namespace onnxmini
