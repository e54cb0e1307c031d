// core/cpu_features: physical_cores() against /proc/cpuinfo's (physical id,
// core id) pairs, an independent reading of the same topology.
#include <gtest/gtest.h>

#include <sched.h>

#include <fstream>
#include <set>
#include <string>
#include <thread>
#include <utility>

#include "core/cpu_features.h"

namespace onnxmini {
namespace {

// Distinct (physical id, core id) pairs and the processor count of /proc/cpuinfo.
std::pair<std::set<std::pair<int, int>>, int> cpuinfo_cores() {
  std::ifstream f("/proc/cpuinfo");
  std::set<std::pair<int, int>> cores;
  int processors = 0, package = -1;
  std::string line;
  while (std::getline(f, line)) {
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    const std::string key = line.substr(0, line.find_last_not_of(" \t", colon - 1) + 1);
    const std::string value = line.substr(colon + 1);
    if (key == "processor") ++processors;
    if (key == "physical id") package = std::stoi(value);
    if (key == "core id") cores.insert({package, std::stoi(value)});
  }
  return {cores, processors};
}

TEST(CpuFeatures, PhysicalCoresMatchCpuinfo) {
  const int n = cpu::physical_cores();
  EXPECT_GE(n, 1);
  EXPECT_LE(n, static_cast<int>(std::max(1u, std::thread::hardware_concurrency())));
  cpu_set_t mask;
  CPU_ZERO(&mask);
  ASSERT_EQ(sched_getaffinity(0, sizeof(mask), &mask), 0);
  const auto [cores, processors] = cpuinfo_cores();
  if (cores.empty() || processors != CPU_COUNT(&mask))
    GTEST_SKIP() << "no core ids in /proc/cpuinfo, or this process may not run on every CPU";
  EXPECT_EQ(n, static_cast<int>(cores.size()));
}

}  // namespace
}  // namespace onnxmini
