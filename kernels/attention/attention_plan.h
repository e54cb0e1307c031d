// What one Attention run computes, resolved from the inputs' shapes and the
// node's attributes (attention.cc checks them); shared by the reference kernel
// (attention_reference.cc) and the fused kernel (attention_fused.cc).
//
// Layouts: Q, K, V, Y are either 4-D [B, heads, seq, head_size] or 3-D
// [B, seq, heads * head_size]; row(b, h, i) gives the element offset of one
// head's row in either. past_* and present_* are always 4-D. The key sequence
// is past (P keys) followed by the new keys (L_kv), Ltot = P + L_kv.
//
// The additive bias of score (b, h, i, j), as the ONNX spec composes it:
//   structural: key j is allowed iff lo(b, i) <= j < hi(b, i), from is_causal
//               (j <= i + offset), the opset-25 window, nonpad_kv_seqlen (j <
//               nonpad[b]) and the mask's own length (a mask shorter than
//               Ltot is padded with -inf / false);
//   attn_mask:  float, added; bool, 0 (true) or -inf (false); broadcast
//               numpy-style to [B, Hq, Lq, *].
// offset = P with a past cache, nonpad[b] - Lq with nonpad_kv_seqlen, else 0.
// A row whose bias is -inf everywhere is "fully masked": Y and the mode-3
// qk_matmul_output row are 0 there.
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "onnxmini/tensor.h"

namespace onnxmini {
class ThreadPool;
}

namespace onnxmini {
namespace attention {

// One of Q, K, V, Y: offset of the row of (batch b, head h, position i).
struct HeadLayout {
  int64_t heads = 1, seq = 1, head_size = 1;
  bool rank3 = false;
  int64_t row(int64_t b, int64_t h, int64_t i) const {
    return rank3 ? (b * seq + i) * heads * head_size + h * head_size : ((b * heads + h) * seq + i) * head_size;
  }
  // Distance between consecutive positions of one head.
  int64_t seq_stride() const { return rank3 ? heads * head_size : head_size; }
};

enum QkOutputMode { kQkRaw = 0, kQkSoftcapped = 1, kQkBiased = 2, kQkSoftmax = 3 };

struct AttentionPlan {
  int64_t batch = 0, q_heads = 0, kv_heads = 0, q_len = 0, kv_len = 0, past_len = 0, total_len = 0;
  int64_t head_size = 0, v_head_size = 0;
  HeadLayout q, k, v, y;
  float scale = 1.f;
  float softcap = 0.f;
  bool causal = false;
  int64_t left_window = -1, right_window = -1;  // opset 25; -1 = unbounded
  int qk_mode = 0;
  bool want_qk = false;

  // attn_mask (absent: mask == nullptr): element strides for b, h, i (0 where
  // broadcast) and its key length; keys j >= mask_len are masked.
  const Tensor* mask = nullptr;
  int64_t mask_b = 0, mask_h = 0, mask_i = 0, mask_len = 0;
  int64_t mask_row(int64_t b, int64_t h, int64_t i) const { return b * mask_b + h * mask_h + i * mask_i; }

  const int64_t* nonpad = nullptr;  // [batch] valid keys, or nullptr

  int64_t group() const { return q_heads / kv_heads; }  // query heads per key/value head
  // The key range [lo, hi) row (b, i) may attend before the mask's values.
  void key_range(int64_t b, int64_t i, int64_t& lo, int64_t& hi) const {
    const int64_t offset = past_len > 0 ? past_len : (nonpad ? nonpad[b] - q_len : 0);
    const int64_t p = i + offset;
    lo = 0;
    hi = total_len;
    if (causal) hi = std::min(hi, p + 1);
    if (right_window >= 0) hi = std::min(hi, p + right_window + 1);
    if (left_window >= 0) lo = std::max(lo, p - left_window);
    if (nonpad) hi = std::min(hi, std::max<int64_t>(0, nonpad[b]));
    if (mask) hi = std::min(hi, mask_len);
    if (hi < lo) hi = lo;
  }
};

// The run's tensors as raw pointers and their types (absent: nullptr).
struct AttentionIo {
  DType qk_type = DType::Float32, v_type = DType::Float32;  // T1 (Q, K, Y, qk output), T2 (V)
  const void *q = nullptr, *k = nullptr, *v = nullptr, *past_k = nullptr, *past_v = nullptr;
  void *y = nullptr, *present_k = nullptr, *present_v = nullptr, *qk = nullptr;
};

// The key / value row (b, kv head g, key j) of the concatenated sequence
// (past then new) as element offsets: `from_past` says which tensor.
inline int64_t key_row(const AttentionPlan& p, int64_t b, int64_t g, int64_t j, bool& from_past) {
  from_past = j < p.past_len;
  return from_past ? ((b * p.kv_heads + g) * p.past_len + j) * p.head_size : p.k.row(b, g, j - p.past_len);
}
inline int64_t value_row(const AttentionPlan& p, int64_t b, int64_t g, int64_t j, bool& from_past) {
  from_past = j < p.past_len;
  return from_past ? ((b * p.kv_heads + g) * p.past_len + j) * p.v_head_size : p.v.row(b, g, j - p.past_len);
}

// present_key (key = true) or present_value: concat(past, new) along the sequence,
// [B, kv_heads, total_len, width], in the inputs' own type.
inline void copy_present(const AttentionPlan& p, const AttentionIo& io, bool key, void* out) {
  const DType t = key ? io.qk_type : io.v_type;
  const size_t es = dtype_size(t);
  const int64_t width = key ? p.head_size : p.v_head_size;
  const HeadLayout& lay = key ? p.k : p.v;
  const char* past = static_cast<const char*>(key ? io.past_k : io.past_v);
  const char* cur = static_cast<const char*>(key ? io.k : io.v);
  char* dst = static_cast<char*>(out);
  for (int64_t b = 0; b < p.batch; ++b)
    for (int64_t g = 0; g < p.kv_heads; ++g) {
      char* d = dst + ((b * p.kv_heads + g) * p.total_len) * width * es;
      if (p.past_len > 0) {
        std::memcpy(d, past + ((b * p.kv_heads + g) * p.past_len) * width * es, p.past_len * width * es);
        d += p.past_len * width * es;
      }
      for (int64_t j = 0; j < p.kv_len; ++j, d += width * es) std::memcpy(d, cur + lay.row(b, g, j) * es, width * es);
    }
}

// Plain loops in double over the spec's formula (the oracle of the tests).
void run_attention_reference(const AttentionPlan& plan, const AttentionIo& io);
// The fused kernel (attention_fused.cc); float32 math, any float storage.
// Returns the variant name for the profiler.
const char* run_attention_fused(const AttentionPlan& plan, const AttentionIo& io, ThreadPool* pool);

}  // namespace attention
}  // namespace onnxmini
