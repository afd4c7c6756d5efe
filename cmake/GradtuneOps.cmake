# Every op gradtune compiles: "TFName:file_stem". Adding an op is one line
# here plus its own files (DESIGN.md rule 6), all named after the stem:
#   generators/<stem>_generator.cpp
#   schedules/<stem>.h (the pipeline's Funcs and apply), <stem>_space.h (knob tables, space)
#   runtime/include/gradtune/<stem>.h, runtime/src/<stem>.cpp
#   tests/reference/<stem>.h, tests/test_<stem>.cpp
# The C++ registries (schedules/ops.cpp, runtime/src/op_registry.cpp) include
# the generated op_list.inc (and op_spaces.inc) made from this list.
set(GRADTUNE_ALL_OPS
    DepthwiseConv2dNativeBackpropInput:depthwise_conv2d_native_backprop_input
    DepthwiseConv2dNativeBackpropFilter:depthwise_conv2d_native_backprop_filter
    FractionalAvgPoolGrad:fractional_avg_pool_grad
    FractionalAvgPool:fractional_avg_pool
    DepthwiseConv2dNative:depthwise_conv2d_native
    Conv2D:conv2d
    Conv2DBackpropInput:conv2d_backprop_input
    Conv2DBackpropFilter:conv2d_backprop_filter
)

set(GRADTUNE_OP_FILTER "" CACHE STRING
    "Build only these ops (TF names, ;-separated); empty builds every op")

set(GRADTUNE_OPS "")       # TF names
set(GRADTUNE_OP_STEMS "")  # file stems, same order
set(_op_list_inc "// Generated from cmake/GradtuneOps.cmake. Do not edit.\n")
set(_op_spaces_inc "${_op_list_inc}")
foreach (entry IN LISTS GRADTUNE_ALL_OPS)
    string(REPLACE ":" ";" entry "${entry}")
    list(GET entry 0 _name)
    list(GET entry 1 _stem)
    if (GRADTUNE_OP_FILTER AND NOT _name IN_LIST GRADTUNE_OP_FILTER)
        continue()
    endif ()
    list(APPEND GRADTUNE_OPS ${_name})
    list(APPEND GRADTUNE_OP_STEMS ${_stem})
    string(APPEND _op_list_inc "GRADTUNE_OP(${_name}, ${_stem})\n")
    string(APPEND _op_spaces_inc "#include \"${_stem}_space.h\"\n")
endforeach ()
set(GRADTUNE_GENERATED_DIR "${PROJECT_BINARY_DIR}/generated")
file(CONFIGURE OUTPUT "${GRADTUNE_GENERATED_DIR}/op_list.inc" CONTENT "${_op_list_inc}")
file(CONFIGURE OUTPUT "${GRADTUNE_GENERATED_DIR}/op_spaces.inc" CONTENT "${_op_spaces_inc}")

# The public umbrella header, gradtune/gradtune.h: every op's header (the ops
# of this list, so GRADTUNE_OP_FILTER builds declare only their own) and the
# API's shared ones. Installed with the others (runtime/CMakeLists.txt).
set(GRADTUNE_PUBLIC_INCLUDE_DIR "${PROJECT_BINARY_DIR}/include")
set(_umbrella "// gradtune: tuned kernels for TensorFlow's convolution and pooling gradients.
// Link libgradtune.a (plus -lpthread -ldl); no libHalide is needed.
// Generated from cmake/GradtuneOps.cmake. Do not edit.
#pragma once

")
foreach (_stem IN LISTS GRADTUNE_OP_STEMS)
    string(APPEND _umbrella "#include \"gradtune/${_stem}.h\"\n")
endforeach ()
foreach (_header device op_call run_options status tensor variants)
    string(APPEND _umbrella "#include \"gradtune/${_header}.h\"\n")
endforeach ()
file(CONFIGURE OUTPUT "${GRADTUNE_PUBLIC_INCLUDE_DIR}/gradtune/gradtune.h" CONTENT "${_umbrella}")

# Prefixes each op's stem with `prefix` and appends `suffix`.
function(gradtune_op_files out prefix suffix)
    set(files "")
    foreach (stem IN LISTS GRADTUNE_OP_STEMS)
        list(APPEND files "${prefix}${stem}${suffix}")
    endforeach ()
    set(${out} ${files} PARENT_SCOPE)
endfunction()

# A hash of each op's generator and schedule sources (plus the files every op
# shares): provenance of trials and records (what they were tuned on), not
# their validity, which is the op's knob-space version (schedules/<op>_space.h).
set(GRADTUNE_COMMON_SOURCES
    generators/common/window.h
    schedules/halide_knobs.h
    schedules/knob_space.h
    schedules/knob_space.cpp
    schedules/direct_tiles.h
    schedules/structures.h
    schedules/tap_phases.h)

foreach (op file IN ZIP_LISTS GRADTUNE_OPS GRADTUNE_OP_STEMS)
    set(_files ${GRADTUNE_COMMON_SOURCES}
        generators/${file}_generator.cpp
        schedules/${file}.h schedules/${file}_space.h)
    set(_text "")
    foreach (f IN LISTS _files)
        file(READ "${PROJECT_SOURCE_DIR}/${f}" _content)
        string(APPEND _text "${f}\n${_content}\n")
        set_property(DIRECTORY "${PROJECT_SOURCE_DIR}" APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${PROJECT_SOURCE_DIR}/${f}")
    endforeach ()
    string(SHA256 _hash "${_text}")
    set(GRADTUNE_SOURCE_HASH_${op} "${_hash}")
endforeach ()

