// Building feeds from the command line: NAME=SPEC options, backend-test folders,
// and generated inputs for everything not given.
#pragma once
#include <map>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "onnxmini/session.h"

namespace onnxmini_cli {

// "1x3x112x112" -> {1,3,112,112}; "" or "scalar" -> {}.
onnxmini::Shape parse_shape(const std::string& text);

// SPEC: random:SHAPE | zeros:SHAPE | ones:SHAPE | file.npy | file.pb
onnxmini::Tensor tensor_from_spec(const std::string& spec, onnxmini::DType dtype, std::mt19937& rng);

// Random data for a dtype: floats uniform in [-1, 1), integers in [0, 10), bools fair.
onnxmini::Tensor random_tensor(onnxmini::DType dtype, const onnxmini::Shape& shape, std::mt19937& rng);

// The declared shape with symbolic/unknown dims taken from `dims` (by name) or 1.
onnxmini::Shape concrete_shape(const onnxmini::ValueInfo& info, const std::map<std::string, int64_t>& dims);

// Feeds for every session input: explicit NAME=SPEC first, then input_K.pb from
// `inputs_dir`, then generated ones.
std::vector<std::pair<std::string, onnxmini::Value>> build_feeds(const onnxmini::Session& session,
                                                                 const std::vector<std::string>& specs,
                                                                 const std::string& inputs_dir,
                                                                 const std::map<std::string, int64_t>& dims,
                                                                 unsigned seed);

// "NAME=VALUE" -> pair; throws InvalidArgument naming `option` otherwise.
std::pair<std::string, std::string> split_assignment(const std::string& text, const std::string& option);

}  // namespace onnxmini_cli
