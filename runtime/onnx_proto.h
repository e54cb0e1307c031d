// The generated ONNX schema (proto/ generates it from libonnx-dev's onnx.proto).
#pragma once
#include "onnx/onnx.pb.h"
