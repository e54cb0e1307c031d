#include "core/env_override.h"

#include <gtest/gtest.h>

#include <cstdlib>

namespace onnxmini {
namespace {

enum class Mode { Rule, Off, On };

Mode read(const char* value) {
  const char* name = "ONNXMINI_TEST_ENV_OVERRIDE";
  if (value) setenv(name, value, 1);
  else unsetenv(name);
  const Mode m = env_override(name, Mode::Rule, Mode::Off, Mode::On);
  unsetenv(name);
  return m;
}

TEST(EnvOverride, OneIsOnZeroIsOffAnythingElseTheRule) {
  EXPECT_EQ(read("1"), Mode::On);
  EXPECT_EQ(read("0"), Mode::Off);
  EXPECT_EQ(read(nullptr), Mode::Rule);
  EXPECT_EQ(read(""), Mode::Rule);
  EXPECT_EQ(read("yes"), Mode::Rule);
  EXPECT_EQ(read("10"), Mode::Rule);  // not a prefix match
}

}  // namespace
}  // namespace onnxmini
