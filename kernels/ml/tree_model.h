// A tree ensemble flattened for evaluation, shared by TreeEnsembleRegressor,
// TreeEnsembleClassifier (ai.onnx.ml 1 and 3) and TreeEnsemble (ai.onnx.ml 5).
//
// Layout: every branch node of every tree lives in one array `nodes` (32 bytes
// each, a tree's nodes contiguous in model order); a child reference is an
// index into `nodes` when >= 0 and ~leaf (the leaf's index, bit-inverted) when
// < 0, so a walk is a loop of loads and compares without a "is leaf" lookup.
// A leaf owns the range [leaf_begin[l], leaf_begin[l + 1]) of (target, weight)
// pairs. `roots[t]` is tree t's root in the same encoding (a one-leaf tree has
// a negative root).
//
// The builders validate everything a walk relies on: child ids exist, ids
// are unique, targets are in range, and every tree is a tree (no node reached
// twice from its root, so a cycle is a model error, never a hang).
#pragma once
#include <cstdint>
#include <vector>

#include "kernels/kernel.h"

namespace onnxmini {
namespace ml {

enum class NodeMode : uint8_t { Leq, Lt, Gte, Gt, Eq, Neq, Member };

struct TreeNode {
  double threshold = 0;
  int32_t feature = 0;
  NodeMode mode = NodeMode::Leq;
  bool missing_goes_true = false;
  int32_t member_set = -1;     // BRANCH_MEMBER: index into TreeModel::member_sets
  int32_t next[2] = {0, 0};    // [0] = false child, [1] = true child
};

enum class Aggregate { Sum, Average, Min, Max };

struct TreeModel {
  std::vector<TreeNode> nodes;
  std::vector<int32_t> roots;
  std::vector<int32_t> leaf_begin;  // leaves + 1 entries
  std::vector<int32_t> leaf_target;
  std::vector<double> leaf_weight;
  std::vector<std::vector<double>> member_sets;  // sorted
  int64_t targets = 0;
  int64_t max_feature = -1;
  // Weights came as float lists: sums are rounded to float after every add,
  // as onnxruntime accumulates in the weights' type (labels then agree even
  // when a probability lands on the 0.5 decision boundary).
  bool float_sums = false;

  // Rounds a partial sum to the model's accumulation type.
  double round_sum(double v) const { return float_sums ? static_cast<double>(static_cast<float>(v)) : v; }

  int64_t num_leaves() const { return static_cast<int64_t>(leaf_begin.size()) - 1; }

  // The leaf row `x` (one row of features) reaches in tree t.
  template <typename T>
  int32_t leaf_of(int32_t ref, const T* x) const {
    while (ref >= 0) {
      const TreeNode& n = nodes[static_cast<size_t>(ref)];
      ref = n.next[goes_true(n, static_cast<double>(x[n.feature]))];
    }
    return ~ref;
  }

  bool goes_true(const TreeNode& n, double v) const;
};

// ai.onnx.ml 1 / 3 layout: nodes_* arrays keyed by (tree id, node id) and
// weights in `<prefix>_treeids/_nodeids/_ids/_weights` (prefix "target" for the
// regressor, "class" for the classifier); `targets` is n_targets or the number
// of class labels. Thresholds and weights come from the float lists or the
// *_as_tensor doubles.
TreeModel build_tree_model_v3(const KernelInfo& info, const std::string& prefix, int64_t targets);

// ai.onnx.ml 5 TreeEnsemble layout: tree_roots, nodes_* tensors with separate
// leaf flags, leaf_targetids / leaf_weights, membership_values.
TreeModel build_tree_model_v5(const KernelInfo& info);

// scores[r * targets + t] and has_score[...] for rows [r0, r1) of x (row-major,
// `features` columns), aggregated over the trees by `agg` (AVERAGE is summed
// here; the caller divides). Rows are processed in blocks, and within a block
// tree by tree, so one tree's nodes stay in cache for the whole block.
template <typename T>
void evaluate_trees(const TreeModel& m, Aggregate agg, const T* x, int64_t features, int64_t r0, int64_t r1,
                    double* scores, uint8_t* has_score);

}  // namespace ml
}  // namespace onnxmini
