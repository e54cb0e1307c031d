// The kernel registry as linked into the static test binary: every kernel file
// of kernels/ is linked (its static registrations ran), every registration
// names its kernel, and no op has two kernels for one opset. The CLI side
// (the shared library) is checked in tests/tools/test_op_table.cc.
// Tests may register kernels of their own (test_executor.cc, domain
// "test.onnxmini"); the library's registrations are those from kernels/.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>

#include "kernels/registry.h"
#include "onnxmini/onnxmini.h"

namespace fs = std::filesystem;

namespace onnxmini {
namespace {

// kernels/**/*.cc (as "kernels/<folder>/<file>.cc") -> number of lines that
// start with ONNXMINI_KERNEL_FILE( (at file scope, as registry.h requires).
std::map<std::string, int> kernel_file_anchors() {
  const fs::path root = fs::path(ONNXMINI_SOURCE_DIR);
  std::map<std::string, int> anchors;
  for (const auto& e : fs::recursive_directory_iterator(root / "kernels")) {
    if (!e.is_regular_file() || e.path().extension() != ".cc") continue;
    std::ifstream f(e.path());
    std::string line;
    int n = 0;
    while (std::getline(f, line)) n += line.rfind("ONNXMINI_KERNEL_FILE(", 0) == 0;
    if (n) anchors[fs::relative(e.path(), root).generic_string()] = n;
  }
  return anchors;
}

TEST(KernelRegistry, EveryKernelFileIsLinkedIntoTheStaticBinary) {
  const auto anchors = kernel_file_anchors();
  ASSERT_FALSE(anchors.empty()) << "no ONNXMINI_KERNEL_FILE( under " << ONNXMINI_SOURCE_DIR << "/kernels";
  int total = 0;
  for (const auto& [file, n] : anchors) {
    EXPECT_EQ(n, 1) << file << " has " << n << " ONNXMINI_KERNEL_FILE lines";
    total += n;
  }
  EXPECT_EQ(linked_kernel_files(), total) << "the generated kernel-file list and the sources disagree";
  // Linked means registered: each anchored file contributed registrations, and
  // no registration comes from a file without an anchor.
  std::set<std::string> registering;
  for (const auto& r : KernelRegistry::instance().all())
    if (r.source_file.rfind("kernels/", 0) == 0) registering.insert(r.source_file);
  for (const auto& [file, n] : anchors) EXPECT_TRUE(registering.count(file)) << file << " registered no kernel";
  for (const auto& file : registering) EXPECT_TRUE(anchors.count(file)) << file << " registers without an anchor";
}

TEST(KernelRegistry, EveryRegistrationNamesItsKernel) {
  ASSERT_FALSE(KernelRegistry::instance().all().empty());
  for (const auto& r : KernelRegistry::instance().all()) {
    EXPECT_FALSE(r.kernel.empty()) << r.op_type << " in " << r.source_file;
    EXPECT_EQ(r.kernel.find_first_of("/. "), std::string::npos)
        << r.op_type << ": kernel name '" << r.kernel << "' looks like a path, not an explicit name";
  }
}

TEST(KernelRegistry, NoOverlappingRegistrations) {
  const auto ops = supported_ops();
  for (size_t i = 0; i + 1 < ops.size(); ++i) {
    const auto& a = ops[i];
    const auto& b = ops[i + 1];
    if (a.domain == b.domain && a.op_type == b.op_type)
      EXPECT_LT(a.until_version, b.since_version) << a.op_type << " registered twice for overlapping opsets ("
                                                  << a.kernel << ", " << b.kernel << ")";
  }
}

}  // namespace
}  // namespace onnxmini
