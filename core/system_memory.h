// How much memory onnxmini may assume, for sanity checks on sizes that only
// become known while a model runs (a Loop's stacked scan outputs, say): a
// request that exceeds it cannot succeed, and failing with the sizes in the
// message beats failing in the allocator or swapping for minutes.
#pragma once
#include <cstdint>

namespace onnxmini {

// Physical memory in bytes (sysconf), capped by the environment variable
// ONNXMINI_MEMORY_LIMIT (bytes) when set - for containers whose limit is below
// the machine's, and for tests. INT64_MAX when neither says. Read on each call
// (cheap: callers check once per loop iteration at most).
int64_t memory_limit_bytes();

}  // namespace onnxmini
