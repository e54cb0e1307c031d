#include "core/system_memory.h"

#include <unistd.h>

#include <climits>
#include <cstdlib>

namespace onnxmini {
namespace {

int64_t physical_memory() {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page_size = sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page_size <= 0 || pages > INT64_MAX / page_size) return INT64_MAX;
  return int64_t{pages} * page_size;
}

}  // namespace

int64_t memory_limit_bytes() {
  static const int64_t physical = physical_memory();
  const char* env = std::getenv("ONNXMINI_MEMORY_LIMIT");
  if (env == nullptr || *env == '\0') return physical;
  char* end = nullptr;
  const long long limit = std::strtoll(env, &end, 10);
  if (*end != '\0' || limit <= 0) return physical;  // not a positive byte count: ignored
  return limit < physical ? limit : physical;
}

}  // namespace onnxmini
