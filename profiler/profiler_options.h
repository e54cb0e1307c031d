// What the profiler records and where it writes, in its own terms: the runtime
// translates SessionOptions into these (runtime/profiler_feed.cc), so the
// profiler never sees a session.
#pragma once
#include <cstddef>
#include <string>
#include <thread>
#include <vector>

#include "onnxmini/kernel_options.h"  // ProfileLayout

namespace onnxmini {

struct ProfilerOptions {
  bool enabled = false;
  std::string file_prefix = "onnxruntime_profile_";  // file: <prefix>_<date>_<time>.json
  ProfileLayout layout = ProfileLayout::Fences;
  size_t max_events = 1000000;  // whole runs only; one warning when reached
  int skip_runs = 0;            // runs not recorded at the start (warm-up)
  int max_runs = -1;            // runs recorded after the skipped ones; -1: all
  bool memory_counters = false; // Chrome counter events ("ph":"C") for live bytes
  // Worker threads of the intra-op pool (thread 1..n-1), the keys of
  // thread_scheduling_stats' "sub_threads". Empty (one thread): the stats are "".
  std::vector<std::thread::id> pool_workers;
};

}  // namespace onnxmini
