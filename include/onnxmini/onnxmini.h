// Umbrella header of the public C++ API.
#pragma once
#include "onnxmini/dtype.h"
#include "onnxmini/error.h"
#include "onnxmini/session.h"
#include "onnxmini/tensor.h"
#include "onnxmini/tensor_io.h"
#include "onnxmini/value.h"
#include "onnxmini/einsum.h"
#include "onnxmini/kernel_options.h"
#include "onnxmini/logging.h"
