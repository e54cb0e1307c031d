// TfIdfVectorizer (opset 9): counts the pool's n-grams in each row of X
// ([C] or [N, C]; int32, int64 or string) and writes float32
// [N, max(ngram_indexes) + 1] (or [max + 1] for 1-D X).
// The pool (pool_int64s or pool_strings) holds the n-grams level by level:
// level n (1-grams, 2-grams, ...) starts at ngram_counts[n - 1]; n-gram k of
// the whole pool is counted into output column ngram_indexes[k]. Only levels
// in [min_gram_length, max_gram_length] are counted. An n-gram may skip
// items: its elements are `skip + 1` apart, skip in [0, max_skip_count]
// (1-grams are counted once, not once per skip). mode: TF = counts, IDF =
// weight (default 1) where the count is non-zero, TFIDF = count * weight.
// weights[k] belongs to pool n-gram k (the spec's wording, onnxruntime's
// rule), so it applies to output column ngram_indexes[k]; onnx's Python
// reference indexes weights by output column instead, which agrees only when
// ngram_indexes is the identity. A pool that lists an n-gram twice is refused
// (onnxruntime refuses it too: its column would be ambiguous).
//
// Layout: the pool is a trie built once at session creation (children in
// sorted maps, node ids = n-gram number + 1, 0 for a prefix that is not itself
// a pool n-gram); a row is scanned from every start and every skip distance,
// walking the trie as far as the row matches. Rows are independent.
#include <algorithm>
#include <map>

#include "core/checked_math.h"
#include "kernels/registry.h"

namespace onnxmini {
namespace strings {
namespace {

enum class TfIdfMode { TF, IDF, TFIDF };

// A trie over keys of type K: node 0 is the root.
template <typename K>
struct NgramTrie {
  struct Node {
    int64_t id = 0;  // 1 + n-gram number, 0: not an n-gram end
    std::map<K, int64_t> children;
  };
  std::vector<Node> nodes{Node{}};

  // Adds the n-gram items[0..n) with id `id`; false when it is already there.
  bool add(const K* items, int64_t n, int64_t id) {
    int64_t at = 0;
    for (int64_t k = 0; k < n; ++k) {
      auto it = nodes[at].children.find(items[k]);
      if (it == nodes[at].children.end()) {
        nodes.push_back(Node{});
        it = nodes[at].children.emplace(items[k], static_cast<int64_t>(nodes.size()) - 1).first;
      }
      at = it->second;
    }
    if (nodes[at].id != 0) return false;
    nodes[at].id = id;
    return true;
  }
  int64_t child(int64_t node, const K& key) const {
    auto it = nodes[node].children.find(key);
    return it == nodes[node].children.end() ? -1 : it->second;
  }
};

class TfIdfVectorizerKernel : public Kernel {
 public:
  explicit TfIdfVectorizerKernel(const KernelInfo& info)
      : min_gram_(info.attrs.get_int("min_gram_length")),
        max_gram_(info.attrs.get_int("max_gram_length")),
        max_skip_(info.attrs.get_int("max_skip_count")),
        ngram_indexes_(info.attrs.get_ints("ngram_indexes")),
        weights_(info.attrs.get_floats("weights", {})) {
    const std::string mode = info.attrs.get_string("mode");
    if (mode == "TF") mode_ = TfIdfMode::TF;
    else if (mode == "IDF") mode_ = TfIdfMode::IDF;
    else if (mode == "TFIDF") mode_ = TfIdfMode::TFIDF;
    else info.fail("mode '{}' is not one of TF, IDF, TFIDF", mode);
    if (min_gram_ < 1 || max_gram_ < min_gram_)
      info.fail("want 1 <= min_gram_length <= max_gram_length, got {} and {}", min_gram_, max_gram_);
    if (max_skip_ < 0) info.fail("max_skip_count must be non-negative, got {}", max_skip_);
    const std::vector<int64_t> counts = info.attrs.get_ints("ngram_counts");
    strings_ = info.attrs.has("pool_strings");
    if (strings_ == info.attrs.has("pool_int64s")) info.fail("needs exactly one of pool_strings and pool_int64s");
    const std::vector<std::string> spool = strings_ ? info.attrs.get_strings("pool_strings") : std::vector<std::string>{};
    const std::vector<int64_t> ipool = strings_ ? std::vector<int64_t>{} : info.attrs.get_ints("pool_int64s");
    const int64_t pool_size = static_cast<int64_t>(strings_ ? spool.size() : ipool.size());
    output_size_ = 0;
    for (int64_t idx : ngram_indexes_) {
      if (idx < 0) info.fail("ngram_indexes has the negative entry {}", idx);
      output_size_ = std::max(output_size_, idx + 1);
    }
    // One output row holds output_size_ floats: refuse an index that would size a bomb.
    if (output_size_ > info.max_tensor_bytes / static_cast<int64_t>(sizeof(float)))
      info.fail("ngram_indexes reaches column {}: a row of {} floats exceeds max_tensor_bytes {}", output_size_ - 1,
                output_size_, info.max_tensor_bytes);
    if (!weights_.empty() && weights_.size() != ngram_indexes_.size())
      info.fail("weights has {} entries but ngram_indexes has {} (one weight per pool n-gram)", weights_.size(),
                ngram_indexes_.size());
    column_weight_.assign(output_size_, 1.f);
    for (size_t k = 0; k < weights_.size(); ++k) column_weight_[ngram_indexes_[k]] = weights_[k];
    // Level n spans pool[counts[n-1], counts[n]) (the last one runs to the pool's end).
    int64_t ngram_number = 0;
    for (size_t level = 0; level < counts.size(); ++level) {
      const int64_t n = static_cast<int64_t>(level) + 1, begin = counts[level],
                    end = level + 1 < counts.size() ? counts[level + 1] : pool_size;
      if (begin < 0 || end < begin || end > pool_size)
        info.fail("ngram_counts [{}] does not split the pool of {} items into levels", fmt::join(counts, ","),
                  pool_size);
      if ((end - begin) % n != 0)
        info.fail("level {} of the pool has {} items, not a multiple of {}", n, end - begin, n);
      for (int64_t at = begin; at < end; at += n, ++ngram_number) {
        if (ngram_number >= static_cast<int64_t>(ngram_indexes_.size()))
          info.fail("the pool has more n-grams than ngram_indexes has entries ({})", ngram_indexes_.size());
        if (n < min_gram_ || n > max_gram_) continue;
        const bool fresh = strings_ ? string_trie_.add(spool.data() + at, n, ngram_number + 1)
                                    : int_trie_.add(ipool.data() + at, n, ngram_number + 1);
        if (!fresh) info.fail("the pool lists the {}-gram at items [{}, {}) twice", n, at, at + n);
      }
    }
    const DType declared = info.input_dtypes.empty() ? DType::Undefined : info.input_dtypes[0];
    if (declared != DType::Undefined && !input_matches_pool(declared))
      info.unsupported("X has dtype {} but the pool holds {}", dtype_name(declared), strings_ ? "strings" : "integers");
  }

  void prepare(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    if (!input_matches_pool(x.dtype()))
      ctx.fail("X has dtype {} but the pool holds {}", dtype_name(x.dtype()), strings_ ? "strings" : "integers");
    if (x.rank() != 1 && x.rank() != 2) ctx.fail("X has shape {}, want [C] or [N, C]", shape_to_string(x.shape()));
    ctx.allocate_output(0, DType::Float32, x.rank() == 1 ? Shape{output_size_} : Shape{x.dim(0), output_size_});
  }

  void compute(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    ctx.stats().variant = "tfidf_trie";
    float* y = ctx.output(0).mutable_data<float>();
    const int64_t rows = x.rank() == 1 ? 1 : x.dim(0), len = x.rank() == 1 ? x.dim(0) : x.dim(1);
    std::fill(y, y + rows * output_size_, 0.f);
    for (int64_t r = 0; r < rows; ++r) {
      float* counts = y + r * output_size_;
      if (x.dtype() == DType::String) count_row(string_trie_, x.data<std::string>() + r * len, len, counts);
      else if (x.dtype() == DType::Int64) count_row(int_trie_, x.data<int64_t>() + r * len, len, counts);
      else count_row(int_trie_, x.data<int32_t>() + r * len, len, counts);
      for (int64_t c = 0; c < output_size_; ++c) {
        const float w = column_weight_[c];
        if (mode_ == TfIdfMode::IDF) counts[c] = counts[c] > 0 ? w : 0.f;
        else if (mode_ == TfIdfMode::TFIDF) counts[c] *= w;
      }
    }
  }

 private:
  bool input_matches_pool(DType t) const {
    return strings_ ? t == DType::String : (t == DType::Int32 || t == DType::Int64);
  }

  // Adds to counts[] every pool n-gram found in row[0..len), for each skip distance.
  template <typename K, typename T>
  void count_row(const NgramTrie<K>& trie, const T* row, int64_t len, float* counts) const {
    int64_t first_size = min_gram_;
    for (int64_t distance = 1; distance <= max_skip_ + 1; ++distance) {
      for (int64_t start = 0; start < len; ++start) {
        if (start + distance * (first_size - 1) >= len) break;  // no n-gram of the smallest size fits
        int64_t node = 0, size = 1;
        for (int64_t at = start; size <= max_gram_ && at < len; at += distance, ++size) {
          node = trie.child(node, static_cast<K>(row[at]));
          if (node < 0) break;
          const int64_t id = trie.nodes[node].id;
          if (size >= first_size && id != 0) counts[ngram_indexes_[id - 1]] += 1.f;
        }
      }
      // Unigrams have no gaps: count them on the first distance only.
      if (first_size == 1 && ++first_size > max_gram_) break;
    }
  }

  int64_t min_gram_, max_gram_, max_skip_;
  std::vector<int64_t> ngram_indexes_;
  std::vector<float> weights_;
  std::vector<float> column_weight_;  // weight of each output column (1 without weights)
  TfIdfMode mode_ = TfIdfMode::TF;
  bool strings_ = false;
  int64_t output_size_ = 0;
  NgramTrie<std::string> string_trie_;
  NgramTrie<int64_t> int_trie_;
};

}  // namespace

ONNXMINI_REGISTER_KERNEL("tfidf_vectorizer", "", "TfIdfVectorizer", 9, INT_MAX, make_kernel<TfIdfVectorizerKernel>);

}  // namespace strings
}  // namespace onnxmini

ONNXMINI_KERNEL_FILE(string_tfidf_vectorizer);
