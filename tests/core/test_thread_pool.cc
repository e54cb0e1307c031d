// runtime/thread_pool: every index is visited exactly once, with and without
// spinning workers, across many back-to-back calls (the spinning hand-off),
// after the workers have fallen asleep (the condition-variable hand-off), from
// concurrent callers, with nested calls running inline, and with workers
// that never start (the caller finishes alone).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <numeric>
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

}  // namespace
}  // namespace onnxmini
