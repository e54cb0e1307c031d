// Uses the installed public API: lists the operator table and builds a tensor.
#include <onnxmini/onnxmini.h>

#include <cstdio>

int main() {
  onnxmini::Tensor t = onnxmini::Tensor::from_vector<float>({2}, {1.f, 2.f});
  size_t ops = onnxmini::supported_ops().size();
  std::printf("consumer: %zu ops, tensor of %lld elements\n", ops, static_cast<long long>(t.numel()));
  return ops > 0 && t.numel() == 2 ? 0 : 1;
}
