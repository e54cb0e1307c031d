// runtime/known_opsets.h against pip's onnx: a newer onnx (a new ai.onnx opset,
// ai.onnx.ml version or IR version) fails here, so bumping onnx means deciding
// what the new opset changes - not silently accepting models this build may
// misread. Skipped when no interpreter with onnx is found.
#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <sstream>
#include <string>

#include "runtime/known_opsets.h"

namespace onnxmini {
namespace {

// "domain version" lines from pip's onnx (the repository's venv, else python3); empty without onnx.
std::map<std::string, int64_t> pip_onnx_newest() {
  const std::string script =
      "import onnx, onnx.defs as d\n"
      "m = {}\n"
      "for s in d.get_all_schemas_with_history():\n"
      "    m[s.domain or 'ai.onnx'] = max(m.get(s.domain or 'ai.onnx', 0), s.since_version)\n"
      "m['ai.onnx'] = max(m['ai.onnx'], d.onnx_opset_version())\n"
      "m['ir'] = onnx.IR_VERSION\n"
      "print('\\n'.join(f'{k} {v}' for k, v in m.items()))\n";
  std::map<std::string, int64_t> out;
  for (const std::string py : {std::string(ONNXMINI_SOURCE_DIR) + "/.venv/bin/python", std::string("python3")}) {
    FILE* p = popen((py + " -c \"" + script + "\" 2>/dev/null").c_str(), "r");
    if (!p) continue;
    std::string text;
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, p)) > 0) text.append(buf, n);
    if (pclose(p) != 0) continue;
    std::istringstream lines(text);
    std::string domain;
    int64_t version;
    while (lines >> domain >> version) out[domain] = version;
    if (!out.empty()) break;
  }
  return out;
}

TEST(KnownOpsets, MatchPipOnnx) {
  const auto pip = pip_onnx_newest();
  if (pip.empty()) GTEST_SKIP() << "no Python with onnx";
  ASSERT_TRUE(pip.count("ir"));
  EXPECT_EQ(newest_ir_version(), pip.at("ir")) << "onnx.IR_VERSION changed: update runtime/known_opsets.cc";
  int checked = 0;
  for (const auto& d : known_domains()) {
    const std::string name = *d.domain ? d.domain : "ai.onnx";
    auto it = pip.find(name);
    if (it == pip.end()) continue;  // com.microsoft: onnxruntime's, not onnx's
    ++checked;
    EXPECT_EQ(d.newest_opset, it->second)
        << "pip onnx's newest opset of " << name << " differs: update runtime/known_opsets.cc";
  }
  EXPECT_GE(checked, 2);  // ai.onnx and ai.onnx.ml at least
  for (const auto& [name, version] : pip)
    if (name != "ir") {
      bool listed = false;
      for (const auto& d : known_domains()) listed = listed || name == (*d.domain ? d.domain : "ai.onnx");
      EXPECT_TRUE(listed) << "pip onnx has domain " << name << " (opset " << version << "), unknown to known_opsets";
    }
}

}  // namespace
}  // namespace onnxmini
