// What libonnxmini exports. The library is compiled with hidden symbols; every
// public header wraps its declarations in ONNXMINI_API_BEGIN / ONNXMINI_API_END,
// so exactly the API of include/onnxmini/ is visible to the CLI, the Python
// extension and users, and internal headers cannot be linked against.
#pragma once

#define ONNXMINI_API_BEGIN _Pragma("GCC visibility push(default)")
#define ONNXMINI_API_END _Pragma("GCC visibility pop")
