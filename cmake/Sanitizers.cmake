# Sanitizer and fuzzer builds (docs/reliability.md; scripts/sanitize.sh, scripts/fuzz.sh).
#   ONNXMINI_SANITIZE=address,undefined  AddressSanitizer + UndefinedBehaviorSanitizer on every object;
#                                        any UB report is fatal (-fno-sanitize-recover), so a test fails.
#   ONNXMINI_SANITIZE=thread             ThreadSanitizer.
#   ONNXMINI_BUILD_FUZZERS=ON            libFuzzer's coverage instrumentation on every object
#                                        (-fsanitize=fuzzer-no-link) and the fuzz/ targets; clang only.
# One address,undefined + fuzzers tree serves both the sanitized test suite and the fuzzers.
set(ONNXMINI_SANITIZE "" CACHE STRING "Sanitizers for every object: address,undefined | thread | empty")
option(ONNXMINI_BUILD_FUZZERS "Build the libFuzzer targets of fuzz/ (clang)" OFF)

if(ONNXMINI_SANITIZE)
  set(onnxmini_san_flags -fsanitize=${ONNXMINI_SANITIZE} -fno-omit-frame-pointer)
  if(ONNXMINI_SANITIZE MATCHES "undefined")
    list(APPEND onnxmini_san_flags -fno-sanitize-recover=undefined)
  endif()
  add_compile_options(${onnxmini_san_flags})
  add_link_options(${onnxmini_san_flags})
endif()
# ONNXMINI_SIMD_SANITIZE_OPTIONS (cmake/OnnxminiLayers.cmake adds them to the *_avx2.cc /
# *_avx512.cc files only): there ASan checks each access by a call into its runtime instead of
# an inline shadow test. The same reports; the unrolled SIMD kernels (an SGEMM tile set is 98
# instantiations full of masked loads and stores) compile in well under half the time, and the
# rest of the tree, the reference loops the tests spend their time in, keeps the faster inline
# checks (docs/reliability.md, "Where the ASan stage's time goes").
set(ONNXMINI_SIMD_SANITIZE_OPTIONS "")
if(ONNXMINI_SANITIZE MATCHES "address" AND CMAKE_CXX_COMPILER_ID MATCHES "Clang")
  set(ONNXMINI_SIMD_SANITIZE_OPTIONS -mllvm -asan-instrumentation-with-call-threshold=0)
endif()
if(ONNXMINI_BUILD_FUZZERS)
  add_compile_options(-fsanitize=fuzzer-no-link)
  add_link_options(-fsanitize=fuzzer-no-link)
endif()
