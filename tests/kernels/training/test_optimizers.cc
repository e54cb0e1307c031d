// Adagrad, Momentum and Adam (ai.onnx.preview.training 1) against the spec's
// pseudocode evaluated in double, for two optimized tensors at once (inputs grouped
// by role), first step (T = 0) and later steps; and their errors.
#include <cmath>

#include "tests/common/node_runner.h"
#include "tests/common/op_test_util.h"

namespace onnxmini {
namespace test {
namespace {

// Runs one training-domain node named "n1" on float tensors.
std::vector<Tensor> run_step(const std::string& op, const std::vector<Tensor>& inputs, size_t outputs,
                             const AttrSetter& attrs) {
  ModelBuilder mb(17);
  mb.import_domain("ai.onnx.preview.training", 1);
  std::vector<std::string> names, outs;
  std::vector<std::pair<std::string, Tensor>> feeds;
  for (size_t i = 0; i < inputs.size(); ++i) {
    names.push_back("in" + std::to_string(i));
    mb.input(names.back(), inputs[i].dtype(), {}, false);
    feeds.emplace_back(names.back(), inputs[i]);
  }
  for (size_t i = 0; i < outputs; ++i) outs.push_back("out" + std::to_string(i));
  NodeBuilder nb = mb.node(op, names, outs);
  nb.name("n1").domain("ai.onnx.preview.training");
  if (attrs) attrs(nb);
  for (const auto& o : outs) mb.output(o);
  return run_all(*mb.session(), feeds);
}

Tensor scalar_f(float v) { return Tensor::from_vector<float>({}, {v}); }
Tensor scalar_i(int64_t v) { return Tensor::from_vector<int64_t>({}, {v}); }
double at(const Tensor& t, int64_t i) { return t.data<float>()[i]; }

// Two tensors of different shapes, one per role each.
struct Pair {
  Tensor a, b;
};
Pair pair(uint32_t seed, double lo = -2, double hi = 2) {
  return {random_values(DType::Float32, {3, 4}, seed, lo, hi), random_values(DType::Float32, {5}, seed + 1, lo, hi)};
}

void expect_close(const Tensor& got, const std::vector<double>& want, const char* what) {
  ASSERT_EQ(got.numel(), static_cast<int64_t>(want.size())) << what;
  for (size_t i = 0; i < want.size(); ++i)  // float32 evaluation of a few operations
    EXPECT_NEAR(at(got, i), want[i], 1e-5 * (1 + std::fabs(want[i]))) << what << " [" << i << "]";
}

TEST(TrainingOptimizers, AdagradMatchesThePseudocode) {
  const Pair x = pair(1), g = pair(3), h = pair(5, 0, 1);
  const double R = 0.1, decay = 0.1, norm = 0.01, eps = 1e-6;
  const int64_t T = 3;
  auto out = run_step("Adagrad", {scalar_f(R), scalar_i(T), x.a, x.b, g.a, g.b, h.a, h.b}, 4, [&](NodeBuilder& n) {
    n.attr("decay_factor", static_cast<float>(decay)).attr("norm_coefficient", static_cast<float>(norm));
  });
  const double r = R / (1 + T * decay);
  for (int k = 0; k < 2; ++k) {
    const Tensor& X = k ? x.b : x.a;
    const Tensor& G = k ? g.b : g.a;
    const Tensor& H = k ? h.b : h.a;
    std::vector<double> xn, hn;
    for (int64_t i = 0; i < X.numel(); ++i) {
      const double gr = norm * at(X, i) + at(G, i);
      hn.push_back(at(H, i) + gr * gr);
      xn.push_back(at(X, i) - r * gr / (std::sqrt(hn.back()) + eps));
    }
    expect_close(out[k], xn, "X_new");
    expect_close(out[2 + k], hn, "H_new");
  }
}

TEST(TrainingOptimizers, MomentumStandardAndNesterov) {
  const Pair x = pair(7), g = pair(9), v = pair(11);
  for (const char* mode : {"standard", "nesterov"})
    for (int64_t T : {0, 4}) {
      const double R = 0.05, alpha = 0.9, beta = 0.5, norm = 0.02;
      auto out = run_step("Momentum", {scalar_f(R), scalar_i(T), x.a, x.b, g.a, g.b, v.a, v.b}, 4, [&](NodeBuilder& n) {
        n.attr("alpha", static_cast<float>(alpha)).attr("beta", static_cast<float>(beta));
        n.attr("norm_coefficient", static_cast<float>(norm)).attr("mode", std::string(mode));
      });
      const double b = T > 0 ? beta : 1;
      for (int k = 0; k < 2; ++k) {
        const Tensor& X = k ? x.b : x.a;
        const Tensor& G = k ? g.b : g.a;
        const Tensor& V = k ? v.b : v.a;
        std::vector<double> xn, vn;
        for (int64_t i = 0; i < X.numel(); ++i) {
          const double gr = norm * at(X, i) + at(G, i);
          vn.push_back(static_cast<float>(alpha) * at(V, i) + b * gr);
          xn.push_back(std::string(mode) == "nesterov" ? at(X, i) - R * (gr + static_cast<float>(alpha) * vn.back())
                                                        : at(X, i) - R * vn.back());
        }
        expect_close(out[k], xn, mode);
        expect_close(out[2 + k], vn, mode);
      }
    }
}

TEST(TrainingOptimizers, AdamMatchesThePseudocode) {
  const Pair x = pair(13), g = pair(15), v = pair(17), h = pair(19, 0, 1);
  for (int64_t T : {0, 5}) {
    const double R = 0.01, alpha = 0.9, beta = 0.999, eps = 1e-6, norm = 0.001, post = 0.01;
    auto out = run_step("Adam", {scalar_f(R), scalar_i(T), x.a, x.b, g.a, g.b, v.a, v.b, h.a, h.b}, 6,
                        [&](NodeBuilder& n) {
                          n.attr("norm_coefficient", static_cast<float>(norm))
                              .attr("norm_coefficient_post", static_cast<float>(post));
                        });
    const double fa = static_cast<float>(alpha), fb = static_cast<float>(beta);
    const double r = T > 0 ? R * std::sqrt(1 - std::pow(fb, T)) / (1 - std::pow(fa, T)) : R;
    for (int k = 0; k < 2; ++k) {
      const Tensor& X = k ? x.b : x.a;
      const Tensor& G = k ? g.b : g.a;
      const Tensor& V = k ? v.b : v.a;
      const Tensor& H = k ? h.b : h.a;
      std::vector<double> xn, vn, hn;
      for (int64_t i = 0; i < X.numel(); ++i) {
        const double gr = norm * at(X, i) + at(G, i);
        vn.push_back(fa * at(V, i) + (1 - fa) * gr);
        hn.push_back(fb * at(H, i) + (1 - fb) * gr * gr);
        xn.push_back((1 - post) * (at(X, i) - r * vn.back() / (std::sqrt(hn.back()) + eps)));
      }
      expect_close(out[k], xn, "X_new");
      expect_close(out[2 + k], vn, "V_new");
      expect_close(out[4 + k], hn, "H_new");
    }
  }
}

TEST(TrainingOptimizers, ErrorsNameTheNodeAndValue) {
  const Pair x = pair(21), g = pair(23);
  auto err = [&](const std::string& op, const std::vector<Tensor>& in, size_t outs, const AttrSetter& a) {
    return error_message([&] { run_step(op, in, outs, a); });
  };
  EXPECT_NE(err("Adagrad", {scalar_f(0.1f), scalar_i(0), x.a, g.a}, 2, nullptr)
                .find("Adagrad 'n1': 2 inputs after R and T: expected a multiple of 3"),
            std::string::npos);
  EXPECT_NE(err("Adagrad", {scalar_f(0.1f), scalar_i(0), x.a, g.b, g.a}, 2, nullptr).find("input 3 is float 5"),
            std::string::npos);
  EXPECT_NE(err("Adagrad", {scalar_f(0.1f), Tensor::from_vector<float>({}, {0.f}), x.a, g.a, g.a}, 2, nullptr)
                .find("T must be an int64 scalar"),
            std::string::npos);
  EXPECT_NE(err("Momentum", {scalar_f(0.1f), scalar_i(0), x.a, g.a, g.a}, 2,
                [](NodeBuilder& n) {
                  n.attr("alpha", 0.9f).attr("beta", 1.f).attr("norm_coefficient", 0.f).attr("mode", std::string("heavy"));
                })
                .find("mode must be 'standard' or 'nesterov', got 'heavy'"),
            std::string::npos);
  EXPECT_NE(err("Momentum", {scalar_f(0.1f), scalar_i(0), x.a, g.a, g.a}, 2, nullptr).find("attribute 'alpha' is required"),
            std::string::npos);
}

}  // namespace
}  // namespace test
}  // namespace onnxmini
