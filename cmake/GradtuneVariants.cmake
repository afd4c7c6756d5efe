# Records -> variants (included from runtime/CMakeLists.txt).
#
# 1. Compile the records tool (tuner/records_tool.cpp, Halide-free) and run it:
#    it validates schedules/records/<target class>/*.json and
#    schedules/defaults/*.json against the knob spaces (a record is valid while
#    its op's knob-space version holds) and writes variants.cmake (one
#    gradtune_add_variant() per variant: own-class records, records transferred
#    from other classes, structure defaults, generic variants) and
#    variant_table.cpp (the runtime's dispatch table).
# 2. gradtune_add_variant(): one add_halide_library per variant, all sharing
#    one Halide runtime (gradtune_halide_runtime). CPU variants are compiled
#    for every target of GRADTUNE_CPU_TARGET_LIST, except tuned records
#    (TUNED): for GRADTUNE_TUNED_CPU_TARGET_LIST, this machine's target by
#    default (cmake/GradtuneDependencies.cmake says why).

# The records tool, compiled now (configure time) from the same sources the
# tuner links.
set(_tool_sources
    "${PROJECT_SOURCE_DIR}/tuner/records_tool.cpp"
    "${PROJECT_SOURCE_DIR}/tuner/records.cpp"
    "${PROJECT_SOURCE_DIR}/schedules/knob_space.cpp"
    "${PROJECT_SOURCE_DIR}/schedules/ops.cpp")
set(_tool "${PROJECT_BINARY_DIR}/gradtune-records")
# Compiled again only when its inputs change: the try_compile is nearly all of
# a configure's time (12 s of 12.5 s), and every distill -> rebuild, the
# sanitizer stage and the configure tests re-configure. The stamp covers the
# sources, every header they may include, and the compiler.
file(GLOB _tool_headers
    "${PROJECT_SOURCE_DIR}/schedules/*.h" "${PROJECT_SOURCE_DIR}/schedules/*.inc"
    "${PROJECT_SOURCE_DIR}/tuner/*.h" "${PROJECT_SOURCE_DIR}/runtime/include/gradtune/*.h"
    "${GRADTUNE_GENERATED_DIR}/*.inc")
set(_tool_stamp "${CMAKE_CXX_COMPILER_ID} ${CMAKE_CXX_COMPILER_VERSION} ${CMAKE_CXX_COMPILER}")
foreach (_f IN LISTS _tool_sources _tool_headers)
    file(SHA256 "${_f}" _hash)
    string(APPEND _tool_stamp "\n${_f} ${_hash}")
endforeach ()
string(SHA256 _tool_stamp "${_tool_stamp}")
set(_tool_stamp_file "${PROJECT_BINARY_DIR}/gradtune-records.stamp")
set(_tool_old_stamp "")
if (EXISTS "${_tool}" AND EXISTS "${_tool_stamp_file}")
    file(READ "${_tool_stamp_file}" _tool_old_stamp)
endif ()
if (NOT _tool_old_stamp STREQUAL _tool_stamp)
    file(REMOVE "${_tool_stamp_file}")
    try_compile(_tool_ok
        SOURCES ${_tool_sources}
        CMAKE_FLAGS "-DINCLUDE_DIRECTORIES=${PROJECT_SOURCE_DIR}/schedules;${PROJECT_SOURCE_DIR}/tuner;${PROJECT_SOURCE_DIR}/runtime/include;${GRADTUNE_GENERATED_DIR}"
        CXX_STANDARD 20
        LINK_LIBRARIES nlohmann_json::nlohmann_json
        OUTPUT_VARIABLE _tool_log
        COPY_FILE "${_tool}")
    if (NOT _tool_ok)
        message(FATAL_ERROR "gradtune: could not compile the records tool:\n${_tool_log}")
    endif ()
    file(WRITE "${_tool_stamp_file}" "${_tool_stamp}")
endif ()

# Re-configure when a record file is added or removed (the glob) and when one
# changes (the configure dependency): `gradtune distill` rewrites them in place,
# and the next build must compile the new winners.
set(GRADTUNE_DEFAULTS_DIR "${PROJECT_SOURCE_DIR}/schedules/defaults")
file(GLOB_RECURSE _records CONFIGURE_DEPENDS "${GRADTUNE_RECORDS_DIR}/*.json" "${GRADTUNE_DEFAULTS_DIR}/*.json")
set_property(DIRECTORY "${PROJECT_SOURCE_DIR}" APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${_records})
set(_cuda_args "")
if (GRADTUNE_CUDA)
    set(_cuda_args --cuda-target "${GRADTUNE_CUDA_TARGET}")
endif ()
# Where tuned records get fewer targets than the rest, the runtime must know
# which CPUs can run them: the tool writes those targets' feature lists into
# the table.
set(_tuned_args "")
if (NOT GRADTUNE_TUNED_CPU_TARGET_LIST STREQUAL GRADTUNE_CPU_TARGET_LIST)
    foreach (_t IN LISTS GRADTUNE_TUNED_CPU_TARGET_LIST)
        list(APPEND _tuned_args --tuned-cpu-target "${_t}")
    endforeach ()
endif ()
execute_process(
    COMMAND "${_tool}" --records "${GRADTUNE_RECORDS_DIR}" --defaults "${GRADTUNE_DEFAULTS_DIR}"
            --cpu-target "${GRADTUNE_CPU_TARGET}" ${_cuda_args} ${_tuned_args}
            --halide-version "${GRADTUNE_HALIDE_VERSION}"
            --cmake-out "${CMAKE_CURRENT_BINARY_DIR}/variants.cmake"
            --table-out "${CMAKE_CURRENT_BINARY_DIR}/variant_table.cpp"
    OUTPUT_VARIABLE _tool_out ERROR_VARIABLE _tool_err RESULT_VARIABLE _tool_result)
string(STRIP "${_tool_out}" _tool_out)
if (_tool_out)
    message(STATUS "${_tool_out}")
endif ()
if (NOT _tool_result EQUAL 0)
    string(STRIP "${_tool_err}" _tool_err)
    message(FATAL_ERROR "${_tool_err}")
endif ()

# One Halide runtime for every variant (CPU and CUDA).
add_halide_runtime(gradtune_halide_runtime NO_DEFAULT_TARGETS TARGETS ${GRADTUNE_CPU_TARGET_LIST})
set(GRADTUNE_VARIANT_OBJECTS "")
set(GRADTUNE_VARIANT_NAMES "")

function(gradtune_add_variant name)
    cmake_parse_arguments(PARSE_ARGV 1 ARG "TUNED" "GENERATOR;DEVICE" "PARAMS")
    if (ARG_DEVICE STREQUAL "cuda")
        set(target "${GRADTUNE_CUDA_TARGET}")
    elseif (ARG_TUNED)
        set(target ${GRADTUNE_TUNED_CPU_TARGET_LIST})
    else ()
        set(target ${GRADTUNE_CPU_TARGET_LIST})
    endif ()
    add_halide_library(${name}
        FROM gradtune_generators
        GENERATOR ${ARG_GENERATOR}
        FUNCTION_NAME ${name}
        USE_RUNTIME gradtune_halide_runtime
        TARGETS ${target}
        PARAMS ${ARG_PARAMS})
    # One object per target plus the wrapper that picks one at run time.
    get_target_property(objects ${name} SOURCES)
    set(GRADTUNE_VARIANT_OBJECTS ${GRADTUNE_VARIANT_OBJECTS} ${objects} PARENT_SCOPE)
    set(GRADTUNE_VARIANT_NAMES ${GRADTUNE_VARIANT_NAMES} ${name} PARENT_SCOPE)
endfunction()

include("${CMAKE_CURRENT_BINARY_DIR}/variants.cmake")
