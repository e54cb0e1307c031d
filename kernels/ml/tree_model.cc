#include "kernels/ml/tree_model.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <utility>
#include <variant>

namespace onnxmini {
namespace ml {

bool TreeModel::goes_true(const TreeNode& n, double v) const {
  // A NaN goes right only when the node says so; otherwise it is compared as
  // usual (false for every mode but BRANCH_NEQ), as onnxruntime does.
  if (n.missing_goes_true && std::isnan(v)) return true;
  switch (n.mode) {
    case NodeMode::Leq: return v <= n.threshold;
    case NodeMode::Lt: return v < n.threshold;
    case NodeMode::Gte: return v >= n.threshold;
    case NodeMode::Gt: return v > n.threshold;
    case NodeMode::Eq: return v == n.threshold;
    case NodeMode::Neq: return v != n.threshold;
    case NodeMode::Member: {
      const auto& set = member_sets[static_cast<size_t>(n.member_set)];
      if (std::isnan(v)) return false;
      return std::binary_search(set.begin(), set.end(), v);
    }
  }
  return false;
}

namespace {

constexpr int64_t kMaxIndex = std::numeric_limits<int32_t>::max() / 2;

// Doubles from the float list `name` or the tensor `name`_as_tensor (one of
// the two; neither gives an empty vector).
std::vector<double> doubles_attr(const KernelInfo& info, const std::string& name) {
  const std::string tensor_name = name + "_as_tensor";
  const bool has_list = info.attrs.has(name), has_tensor = info.attrs.has(tensor_name);
  if (has_list && has_tensor) info.fail("has both {} and {}; expected one", name, tensor_name);
  std::vector<double> out;
  if (has_list) {
    for (float f : info.attrs.get_floats(name)) out.push_back(f);
  } else if (has_tensor) {
    const Tensor& t = info.attrs.get_tensor(tensor_name);
    if (t.dtype() != DType::Float64 && t.dtype() != DType::Float32 && t.dtype() != DType::Float16)
      info.fail("{} has dtype {}; expected double or float", tensor_name, dtype_name(t.dtype()));
    for (int64_t i = 0; i < t.numel(); ++i) out.push_back(t.get_as_double(i));
  }
  return out;
}

// Values of tensor attribute `name` as doubles (any numeric dtype).
std::vector<double> tensor_doubles(const KernelInfo& info, const std::string& name, bool required) {
  std::vector<double> out;
  if (!info.attrs.has(name)) {
    if (required) info.fail("attribute '{}' is missing", name);
    return out;
  }
  const Tensor& t = info.attrs.get_tensor(name);
  if (t.dtype() == DType::String) info.fail("{} is a string tensor; expected numbers", name);
  for (int64_t i = 0; i < t.numel(); ++i) out.push_back(t.get_as_double(i));
  return out;
}

void check_length(const KernelInfo& info, const char* name, size_t got, const char* ref_name, size_t expected) {
  if (got != expected)
    info.fail("{} has {} values but {} has {}; they must be equal", name, got, ref_name, expected);
}

NodeMode parse_mode_string(const KernelInfo& info, const std::string& s, size_t i, bool& leaf) {
  leaf = false;
  if (s == "BRANCH_LEQ") return NodeMode::Leq;
  if (s == "BRANCH_LT") return NodeMode::Lt;
  if (s == "BRANCH_GTE") return NodeMode::Gte;
  if (s == "BRANCH_GT") return NodeMode::Gt;
  if (s == "BRANCH_EQ") return NodeMode::Eq;
  if (s == "BRANCH_NEQ") return NodeMode::Neq;
  if (s == "LEAF") {
    leaf = true;
    return NodeMode::Leq;
  }
  info.fail("nodes_modes[{}] is '{}'; expected BRANCH_LEQ, BRANCH_LT, BRANCH_GTE, BRANCH_GT, BRANCH_EQ, BRANCH_NEQ "
            "or LEAF", i, s);
}

// Every tree must be a tree: walking from the root, no branch node is reached
// twice (which also rules out cycles). `stamp` marks nodes with the tree index.
void check_acyclic(const KernelInfo& info, const TreeModel& m) {
  std::vector<int32_t> stamp(m.nodes.size(), -1);
  std::vector<int32_t> stack;
  for (size_t t = 0; t < m.roots.size(); ++t) {
    stack.assign(1, m.roots[t]);
    while (!stack.empty()) {
      const int32_t ref = stack.back();
      stack.pop_back();
      if (ref < 0) continue;
      if (stamp[static_cast<size_t>(ref)] == static_cast<int32_t>(t))
        info.fail("tree {} reaches branch node #{} twice (a cycle or a shared subtree); a tree ensemble needs trees",
                  t, ref);
      stamp[static_cast<size_t>(ref)] = static_cast<int32_t>(t);
      stack.push_back(m.nodes[static_cast<size_t>(ref)].next[0]);
      stack.push_back(m.nodes[static_cast<size_t>(ref)].next[1]);
    }
  }
}

}  // namespace

TreeModel build_tree_model_v3(const KernelInfo& info, const std::string& prefix, int64_t targets) {
  const auto tree_ids = info.attrs.get_ints("nodes_treeids");
  const auto node_ids = info.attrs.get_ints("nodes_nodeids");
  const auto feature_ids = info.attrs.get_ints("nodes_featureids");
  const auto modes = info.attrs.get_strings("nodes_modes");
  const auto true_ids = info.attrs.get_ints("nodes_truenodeids", {});
  const auto false_ids = info.attrs.get_ints("nodes_falsenodeids", {});
  const auto missing = info.attrs.get_ints("nodes_missing_value_tracks_true", {});
  const auto values = doubles_attr(info, "nodes_values");
  const size_t n = node_ids.size();
  if (n == 0) info.fail("nodes_nodeids is empty; the ensemble has no nodes");
  if (static_cast<int64_t>(n) > kMaxIndex) info.unsupported("{} nodes is too many", n);
  check_length(info, "nodes_treeids", tree_ids.size(), "nodes_nodeids", n);
  check_length(info, "nodes_featureids", feature_ids.size(), "nodes_nodeids", n);
  check_length(info, "nodes_modes", modes.size(), "nodes_nodeids", n);
  check_length(info, "nodes_values", values.size(), "nodes_nodeids", n);
  check_length(info, "nodes_truenodeids", true_ids.size(), "nodes_nodeids", n);
  check_length(info, "nodes_falsenodeids", false_ids.size(), "nodes_nodeids", n);
  if (!missing.empty()) check_length(info, "nodes_missing_value_tracks_true", missing.size(), "nodes_nodeids", n);

  // (tree, node) -> position in the attribute arrays.
  std::map<std::pair<int64_t, int64_t>, size_t> position;
  for (size_t i = 0; i < n; ++i)
    if (!position.emplace(std::make_pair(tree_ids[i], node_ids[i]), i).second)
      info.fail("node (tree {}, id {}) appears twice in nodes_nodeids", tree_ids[i], node_ids[i]);

  // Branch nodes get consecutive indices, leaves their own.
  TreeModel m;
  m.targets = targets;
  std::vector<int32_t> ref(n);
  std::vector<bool> is_leaf(n);
  int32_t branches = 0, leaves = 0;
  for (size_t i = 0; i < n; ++i) {
    bool leaf;
    const NodeMode mode = parse_mode_string(info, modes[i], i, leaf);
    is_leaf[i] = leaf;
    ref[i] = leaf ? ~leaves++ : branches++;
    if (leaf) continue;
    TreeNode node;
    node.mode = mode;
    node.threshold = values[i];
    if (feature_ids[i] < 0 || feature_ids[i] > kMaxIndex)
      info.fail("nodes_featureids[{}] is {}; expected a feature index >= 0", i, feature_ids[i]);
    node.feature = static_cast<int32_t>(feature_ids[i]);
    m.max_feature = std::max<int64_t>(m.max_feature, node.feature);
    node.missing_goes_true = !missing.empty() && missing[i] != 0;
    m.nodes.push_back(node);
  }
  auto child = [&](size_t i, int64_t id, const char* which) {
    auto it = position.find({tree_ids[i], id});
    if (it == position.end())
      info.fail("node (tree {}, id {}) has {} {}, which is not a node of tree {}", tree_ids[i], node_ids[i], which,
                id, tree_ids[i]);
    return ref[it->second];
  };
  for (size_t i = 0; i < n; ++i) {
    if (is_leaf[i]) continue;
    TreeNode& node = m.nodes[static_cast<size_t>(ref[i])];
    node.next[1] = child(i, true_ids[i], "true child");
    node.next[0] = child(i, false_ids[i], "false child");
  }
  // A tree's root is its first node in model order (as onnxruntime reads it).
  {
    std::map<int64_t, bool> seen;
    for (size_t i = 0; i < n; ++i)
      if (seen.emplace(tree_ids[i], true).second) m.roots.push_back(ref[i]);
  }

  // Leaf weights.
  const auto w_tree = info.attrs.get_ints(prefix + "_treeids", {});
  const auto w_node = info.attrs.get_ints(prefix + "_nodeids", {});
  const auto w_id = info.attrs.get_ints(prefix + "_ids", {});
  const auto w_value = doubles_attr(info, prefix + "_weights");
  m.float_sums = info.attrs.has(prefix + "_weights");
  const std::string tree_name = prefix + "_treeids", node_name = prefix + "_nodeids", id_name = prefix + "_ids",
                    weight_name = prefix + "_weights";
  check_length(info, tree_name.c_str(), w_tree.size(), node_name.c_str(), w_node.size());
  check_length(info, id_name.c_str(), w_id.size(), node_name.c_str(), w_node.size());
  check_length(info, weight_name.c_str(), w_value.size(), node_name.c_str(), w_node.size());
  std::vector<std::vector<std::pair<int32_t, double>>> per_leaf(static_cast<size_t>(leaves));
  for (size_t k = 0; k < w_node.size(); ++k) {
    auto it = position.find({w_tree[k], w_node[k]});
    if (it == position.end())
      info.fail("{}[{}] names node (tree {}, id {}), which does not exist", node_name, k, w_tree[k], w_node[k]);
    if (!is_leaf[it->second])
      info.fail("{}[{}] names node (tree {}, id {}), which is not a LEAF", node_name, k, w_tree[k], w_node[k]);
    if (w_id[k] < 0 || w_id[k] >= targets)
      info.fail("{}[{}] is {}; expected 0 <= id < {}", id_name, k, w_id[k], targets);
    per_leaf[static_cast<size_t>(~ref[it->second])].push_back({static_cast<int32_t>(w_id[k]), w_value[k]});
  }
  m.leaf_begin.push_back(0);
  for (const auto& l : per_leaf) {
    for (const auto& tw : l) {
      m.leaf_target.push_back(tw.first);
      m.leaf_weight.push_back(tw.second);
    }
    m.leaf_begin.push_back(static_cast<int32_t>(m.leaf_target.size()));
  }
  check_acyclic(info, m);
  return m;
}

TreeModel build_tree_model_v5(const KernelInfo& info) {
  const auto roots = info.attrs.get_ints("tree_roots");
  const auto feature_ids = info.attrs.get_ints("nodes_featureids");
  const auto splits = tensor_doubles(info, "nodes_splits", true);
  const auto modes = tensor_doubles(info, "nodes_modes", true);
  const auto true_ids = info.attrs.get_ints("nodes_truenodeids");
  const auto true_leafs = info.attrs.get_ints("nodes_trueleafs");
  const auto false_ids = info.attrs.get_ints("nodes_falsenodeids");
  const auto false_leafs = info.attrs.get_ints("nodes_falseleafs");
  // INTS in the schema; a tensor is accepted too (some writers emit one).
  std::vector<double> missing;
  if (info.attrs.has("nodes_missing_value_tracks_true")) {
    const auto& item = info.attrs.items().at("nodes_missing_value_tracks_true");
    if (std::holds_alternative<Tensor>(item)) missing = tensor_doubles(info, "nodes_missing_value_tracks_true", false);
    else
      for (int64_t v : info.attrs.get_ints("nodes_missing_value_tracks_true")) missing.push_back(static_cast<double>(v));
  }
  const auto leaf_targets = info.attrs.get_ints("leaf_targetids");
  const auto leaf_weights = tensor_doubles(info, "leaf_weights", true);
  const auto members = tensor_doubles(info, "membership_values", false);
  const size_t n = feature_ids.size(), leaves = leaf_targets.size();
  if (static_cast<int64_t>(n) > kMaxIndex || static_cast<int64_t>(leaves) > kMaxIndex)
    info.unsupported("{} nodes / {} leaves is too many", n, leaves);
  check_length(info, "nodes_splits", splits.size(), "nodes_featureids", n);
  check_length(info, "nodes_modes", modes.size(), "nodes_featureids", n);
  check_length(info, "nodes_truenodeids", true_ids.size(), "nodes_featureids", n);
  check_length(info, "nodes_trueleafs", true_leafs.size(), "nodes_featureids", n);
  check_length(info, "nodes_falsenodeids", false_ids.size(), "nodes_featureids", n);
  check_length(info, "nodes_falseleafs", false_leafs.size(), "nodes_featureids", n);
  if (!missing.empty())
    check_length(info, "nodes_missing_value_tracks_true", missing.size(), "nodes_featureids", n);
  check_length(info, "leaf_weights", leaf_weights.size(), "leaf_targetids", leaves);

  TreeModel m;
  m.targets = info.attrs.get_int("n_targets", 1);
  if (m.targets < 1 || m.targets > kMaxIndex) info.fail("n_targets is {}; expected >= 1", m.targets);

  // Membership sets, NaN-separated, one per BRANCH_MEMBER node in node order.
  std::vector<std::vector<double>> sets(1);
  for (double v : members) {
    if (std::isnan(v)) sets.emplace_back();
    else sets.back().push_back(v);
  }
  if (!members.empty() && std::isnan(members.back())) sets.pop_back();
  if (members.empty()) sets.clear();
  for (auto& s : sets) std::sort(s.begin(), s.end());

  auto ref_of = [&](size_t i, int64_t id, int64_t is_leaf, const char* which) -> int32_t {
    const size_t limit = is_leaf ? leaves : n;
    if (id < 0 || static_cast<size_t>(id) >= limit)
      info.fail("node {} has {} {} {}, out of range [0, {})", i, which, is_leaf ? "leaf" : "node", id, limit);
    return is_leaf ? ~static_cast<int32_t>(id) : static_cast<int32_t>(id);
  };
  for (size_t i = 0; i < n; ++i) {
    TreeNode node;
    const double mode = modes[i];
    if (!(mode >= 0 && mode <= 6) || mode != std::floor(mode))
      info.fail("nodes_modes[{}] is {}; expected 0..6 (BRANCH_LEQ .. BRANCH_MEMBER)", i, mode);
    node.mode = static_cast<NodeMode>(static_cast<int>(mode));
    if (node.mode == NodeMode::Member) {
      node.member_set = static_cast<int32_t>(m.member_sets.size());
      if (m.member_sets.size() >= sets.size())
        info.fail("node {} is BRANCH_MEMBER but membership_values has only {} set(s)", i, sets.size());
      m.member_sets.push_back(sets[m.member_sets.size()]);
    }
    node.threshold = splits[i];
    if (feature_ids[i] < 0 || feature_ids[i] > kMaxIndex)
      info.fail("nodes_featureids[{}] is {}; expected a feature index >= 0", i, feature_ids[i]);
    node.feature = static_cast<int32_t>(feature_ids[i]);
    m.max_feature = std::max<int64_t>(m.max_feature, node.feature);
    node.missing_goes_true = !missing.empty() && missing[i] != 0;
    node.next[1] = ref_of(i, true_ids[i], true_leafs[i], "true");
    node.next[0] = ref_of(i, false_ids[i], false_leafs[i], "false");
    m.nodes.push_back(node);
  }
  for (size_t t = 0; t < roots.size(); ++t) {
    if (roots[t] < 0 || static_cast<size_t>(roots[t]) >= n)
      info.fail("tree_roots[{}] is {}, out of range [0, {})", t, roots[t], n);
    m.roots.push_back(static_cast<int32_t>(roots[t]));
  }
  if (m.roots.empty()) info.fail("tree_roots is empty; the ensemble has no trees");
  for (size_t l = 0; l < leaves; ++l) {
    if (leaf_targets[l] < 0 || leaf_targets[l] >= m.targets)
      info.fail("leaf_targetids[{}] is {}; expected 0 <= id < n_targets ({})", l, leaf_targets[l], m.targets);
    m.leaf_begin.push_back(static_cast<int32_t>(l));
    m.leaf_target.push_back(static_cast<int32_t>(leaf_targets[l]));
    m.leaf_weight.push_back(leaf_weights[l]);
  }
  m.leaf_begin.push_back(static_cast<int32_t>(leaves));
  check_acyclic(info, m);
  return m;
}

namespace {
template <typename T, bool kFloatSums>
void evaluate_trees_impl(const TreeModel& m, Aggregate agg, const T* x, int64_t features, int64_t r0, int64_t r1,
                         double* scores, uint8_t* has_score) {
  const int64_t targets = m.targets;
  constexpr int64_t kBlock = 64;
  for (int64_t b0 = r0; b0 < r1; b0 += kBlock) {
    const int64_t b1 = std::min(r1, b0 + kBlock);
    for (int32_t root : m.roots) {
      for (int64_t r = b0; r < b1; ++r) {
        const int32_t leaf = m.leaf_of(root, x + r * features);
        double* s = scores + r * targets;
        uint8_t* h = has_score + r * targets;
        for (int32_t k = m.leaf_begin[static_cast<size_t>(leaf)]; k < m.leaf_begin[static_cast<size_t>(leaf) + 1];
             ++k) {
          const int32_t t = m.leaf_target[static_cast<size_t>(k)];
          const double w = m.leaf_weight[static_cast<size_t>(k)];
          switch (agg) {
            case Aggregate::Sum:
            case Aggregate::Average:
              s[t] = kFloatSums ? static_cast<double>(static_cast<float>(s[t] + w)) : s[t] + w;
              break;
            case Aggregate::Min: s[t] = h[t] && s[t] <= w ? s[t] : w; break;
            case Aggregate::Max: s[t] = h[t] && s[t] >= w ? s[t] : w; break;
          }
          h[t] = 1;
        }
      }
    }
  }
}

}  // namespace

template <typename T>
void evaluate_trees(const TreeModel& m, Aggregate agg, const T* x, int64_t features, int64_t r0, int64_t r1,
                    double* scores, uint8_t* has_score) {
  if (m.float_sums) evaluate_trees_impl<T, true>(m, agg, x, features, r0, r1, scores, has_score);
  else evaluate_trees_impl<T, false>(m, agg, x, features, r0, r1, scores, has_score);
}

template void evaluate_trees<float>(const TreeModel&, Aggregate, const float*, int64_t, int64_t, int64_t, double*,
                                    uint8_t*);
template void evaluate_trees<double>(const TreeModel&, Aggregate, const double*, int64_t, int64_t, int64_t, double*,
                                     uint8_t*);

}  // namespace ml
}  // namespace onnxmini
