// The short-sequence Attention path (attention_short.cc) and the rule that
// picks it over the flash-style kernel (attention_fused.cc).
#pragma once
#include <cstdint>

#include "kernels/attention/attention_plan.h"

namespace onnxmini {
namespace gemm {
class GemmEngine;
}

namespace attention {

// Up to this many keys the score rows of a (batch, head, row block) fit in
// L2 (256 KiB blocks, at least 16 rows) and two GEMM calls beat the online
// softmax (per-run key packing, per-64-key-block rescaling). Measured (Intel
// Xeon, 1 thread, AVX-512 and AVX2): the short path ahead of the flash path up
// to 512 keys, level at 1024; docs/kernels/attention.md.
constexpr int64_t kShortMaxKeys = 512;

// Which path the Attention kernel takes: the cost rule (Auto) or one forced by
// ONNXMINI_ATTENTION_PATH=flash|short (read once per process; benchmarks) or
// by the tests. Forcing `short` still needs attention_short_supported.
enum class AttentionPath { Auto, Flash, Short };
void set_attention_path_for_tests(AttentionPath path);
AttentionPath attention_path_override();

// What the short path covers: float32 Q, K, V, no past cache, no
// qk_matmul_output (the flash kernel does those). Any mask / causal / window /
// nonpad / softcap / GQA / 3-D layout.
bool attention_short_supported(const AttentionPlan& p, const AttentionIo& io);
// The cost rule: supported and total_len <= kShortMaxKeys (or forced by the test hook).
bool attention_short_chosen(const AttentionPlan& p, const AttentionIo& io);

// S = Q K^T * scale (the GEMM engine, K read transposed in place), softcap,
// bias, row softmax (AttentionLanes::softmax_block over the whole row), then
// Y = P V (the engine writes Y in place) scaled by 1 / row sum. Fully masked
// rows give 0, as in the flash kernel. Returns "attention_short".
const char* run_attention_short(const AttentionPlan& p, const AttentionIo& io, const gemm::GemmEngine& engine,
                                ThreadPool* pool);

}  // namespace attention
}  // namespace onnxmini
