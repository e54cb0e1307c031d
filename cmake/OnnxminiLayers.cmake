# Layer targets (see the top-level CMakeLists.txt).
#
# onnxmini_add_layer(NAME [LOWER...]) makes the OBJECT library onnxmini_NAME from
# NAME/**/*.cc. Its include root is a folder in the build tree holding one link,
# NAME -> the source folder, so `#include "NAME/x.h"` resolves there and nowhere
# else; the layer sees the roots of LOWER (and include/ for the public API).
# A file of a layer that includes a header of a layer it does not list fails to
# compile ("No such file or directory").
set(ONNXMINI_LAYER_ROOTS ${CMAKE_BINARY_DIR}/layer_roots)

# onnxmini_layer_root(NAME OUT): OUT = an include root that holds only NAME/.
function(onnxmini_layer_root name out)
  set(root ${ONNXMINI_LAYER_ROOTS}/${name})
  file(MAKE_DIRECTORY ${root})
  if(NOT IS_SYMLINK ${root}/${name})
    file(CREATE_LINK ${PROJECT_SOURCE_DIR}/${name} ${root}/${name} SYMBOLIC)
  endif()
  set(${out} ${root} PARENT_SCOPE)
endfunction()

function(onnxmini_add_layer name)
  onnxmini_layer_root(${name} root)
  file(GLOB_RECURSE sources CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/${name}/*.cc)
  foreach(src ${sources})
    if(src MATCHES "_avx512\\.cc$")
      set(isa_opts -mavx512f -mavx512bw -mavx512dq -mavx512vl -mfma -mavx2 -mf16c ${ONNXMINI_SIMD_SANITIZE_OPTIONS})
      set_source_files_properties(${src} PROPERTIES COMPILE_OPTIONS "${isa_opts}")
    elseif(src MATCHES "_avx2\\.cc$")
      set(isa_opts -mavx2 -mfma -mf16c ${ONNXMINI_SIMD_SANITIZE_OPTIONS})
      set_source_files_properties(${src} PROPERTIES COMPILE_OPTIONS "${isa_opts}")
    endif()
  endforeach()
  add_library(onnxmini_${name} OBJECT ${sources})
  target_include_directories(onnxmini_${name} PUBLIC ${root} ${PROJECT_SOURCE_DIR}/include)
  # ONNXMINI_BUILDING: ONNXMINI_API marks the exported symbols (include/onnxmini/export.h).
  target_compile_definitions(onnxmini_${name} PUBLIC ONNXMINI_BUILDING)
  set_target_properties(onnxmini_${name} PROPERTIES CXX_VISIBILITY_PRESET hidden VISIBILITY_INLINES_HIDDEN ON)
  foreach(lower ${ARGN})
    target_link_libraries(onnxmini_${name} PUBLIC onnxmini_${lower})
  endforeach()
endfunction()

# The files of layer NAME whose path matches REGEX also see the generated ONNX
# protobuf headers (proto/); the rest of the layer does not.
function(onnxmini_proto_sources name regex)
  get_target_property(sources onnxmini_${name} SOURCES)
  foreach(src ${sources})
    if(src MATCHES "${regex}")
      set_property(SOURCE ${src} TARGET_DIRECTORY onnxmini_${name} APPEND PROPERTY INCLUDE_DIRECTORIES
                   ${ONNXMINI_PROTO_GEN_DIR})  # protobuf itself is in /usr/include
    endif()
  endforeach()
  add_dependencies(onnxmini_${name} onnxmini_proto)
endfunction()
