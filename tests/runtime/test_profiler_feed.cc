// runtime/profiler_feed: SessionOptions -> ProfilerOptions, every field.
#include <gtest/gtest.h>

#include "runtime/profiler_feed.h"

using namespace onnxmini;

TEST(ProfilerFeed, OptionsCarryEverySessionSetting) {
  SessionOptions s;
  s.enable_profiling = true;
  s.profile_file_prefix = "pfx";
  s.profile_layout = ProfileLayout::KernelOnly;
  s.profile_max_events = 77;
  s.profile_skip_runs = 2;
  s.profile_max_runs = 5;
  s.profile_memory_counters = true;
  ThreadPool one(1), three(3);
  const ProfilerOptions p = profiler_options(s, &three);
  EXPECT_TRUE(p.enabled);
  EXPECT_EQ(p.file_prefix, "pfx");
  EXPECT_EQ(p.layout, ProfileLayout::KernelOnly);
  EXPECT_EQ(p.max_events, 77u);
  EXPECT_EQ(p.skip_runs, 2);
  EXPECT_EQ(p.max_runs, 5);
  EXPECT_TRUE(p.memory_counters);
  EXPECT_EQ(p.pool_workers, three.worker_ids());
  EXPECT_TRUE(profiler_options(s, &one).pool_workers.empty());  // one thread: no thread stats
  EXPECT_TRUE(profiler_options(s, nullptr).pool_workers.empty());
  EXPECT_FALSE(profiler_options(SessionOptions(), &three).enabled);
}

TEST(ProfilerFeed, RunIsInactiveWhenProfilingIsOff) {
  Profiler prof(profiler_options(SessionOptions(), nullptr));
  ProfiledRun run(prof, nullptr);
  EXPECT_FALSE(run);
  run.end(0, 0, 0, 0, 0);  // no-op
  EXPECT_EQ(prof.end_profiling(), "");
}
