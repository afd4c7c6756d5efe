# Finds what the build needs. When something is missing it sets
# GRADTUNE_MISSING to one line saying what to run and returns; the top-level
# CMakeLists.txt stops with that line (an error raised in here would come with
# a CMake call stack). scripts/bootstrap.sh installs all of it.

set(GRADTUNE_MISSING "")
# Sets GRADTUNE_MISSING (in the including scope) unless `found` is true or
# something is missing already: the first missing thing is the one reported.
function(_gradtune_require found what fix)
    if (NOT ${found} AND NOT GRADTUNE_MISSING)
        set(GRADTUNE_MISSING "gradtune: ${what} not found -- run: ${fix}" PARENT_SCOPE)
    endif ()
endfunction()

# The Python whose halide package (pip install halide==21.0.0) gives Halide's
# CMake package and the host target: the project's .venv, which
# scripts/bootstrap.sh makes, unless the caller names another. Not cached
# when defaulted, so that a configure before the bootstrap finds the .venv
# on the next run.
set(GRADTUNE_PYTHON "" CACHE FILEPATH
    "Python interpreter with the halide package (empty: the project's .venv, made by scripts/bootstrap.sh)")
if (NOT GRADTUNE_PYTHON)
    set(GRADTUNE_PYTHON "${PROJECT_SOURCE_DIR}/.venv/bin/python")
endif ()

# Halide from that Python's site-packages.
if (NOT Halide_DIR AND EXISTS "${GRADTUNE_PYTHON}")
    execute_process(
        COMMAND "${GRADTUNE_PYTHON}" -c "import halide; print(halide.install_dir())"
        OUTPUT_VARIABLE _gradtune_halide_root OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
    if (_gradtune_halide_root)
        # The wheel keeps its CMake packages in lib64/cmake, which find_package
        # searches only on platforms that use lib64 (not Debian): without
        # .venv/bin on PATH (whose share/cmake copy CMake finds from there),
        # the configure failed. Name the folder itself.
        list(APPEND CMAKE_PREFIX_PATH "${_gradtune_halide_root}" "${_gradtune_halide_root}/lib64/cmake")
    endif ()
endif ()
find_package(Halide 21 QUIET)
_gradtune_require(Halide_FOUND "Halide 21 (pip package halide==21.0.0 in .venv)" "./scripts/bootstrap.sh")
set(GRADTUNE_HALIDE_VERSION "${Halide_VERSION}")

find_package(Threads REQUIRED)
find_package(nlohmann_json 3 QUIET)
_gradtune_require(nlohmann_json_FOUND "nlohmann/json" "./scripts/bootstrap.sh (apt-get install nlohmann-json3-dev)")
if (GRADTUNE_BUILD_TOOLS)
    find_package(CLI11 QUIET)
    _gradtune_require(CLI11_FOUND "CLI11" "./scripts/bootstrap.sh (apt-get install libcli11-dev)")
endif ()
if (GRADTUNE_BUILD_TESTS)
    find_package(Catch2 2 QUIET)
    _gradtune_require(Catch2_FOUND "Catch2 v2" "./scripts/bootstrap.sh (apt-get install catch2)")
endif ()
# oneDNN is optional: only the benchmark's baseline uses it. Debian's
# dnnl-config.cmake insists on OpenCL, so find the library directly.
find_library(GRADTUNE_DNNL_LIBRARY NAMES dnnl)
find_path(GRADTUNE_DNNL_INCLUDE_DIR NAMES oneapi/dnnl/dnnl.hpp)
if (GRADTUNE_MISSING)
    return()
endif ()

# The Halide target string of this machine, resolved once so that the build
# and the tuner compile for exactly the same target.
if (NOT GRADTUNE_CPU_TARGET)
    execute_process(
        COMMAND "${GRADTUNE_PYTHON}" -c "import halide; print(halide.get_host_target())"
        OUTPUT_VARIABLE _gradtune_host OUTPUT_STRIP_TRAILING_WHITESPACE
        RESULT_VARIABLE _gradtune_host_result)
    if (NOT _gradtune_host_result EQUAL 0 OR NOT _gradtune_host)
        set(GRADTUNE_MISSING "gradtune: could not ask Halide for the host target -- run: ./scripts/bootstrap.sh")
        return()
    endif ()
    set(GRADTUNE_CPU_TARGET "${_gradtune_host}-user_context" CACHE STRING
        "Halide target of the CPU variants (resolved host target)")
endif ()
set(GRADTUNE_CUDA_TARGET "${GRADTUNE_CPU_TARGET}-cuda-cuda_capability_${GRADTUNE_CUDA_CAPABILITY}")

# Every CPU variant is compiled for a list of targets (Halide multi-target);
# at run time the first target whose features the CPU has runs (Halide's
# wrapper asks halide_can_use_target_features), so one libgradtune.a runs well
# on Intel and AMD AVX-512 machines and correctly on any AVX2 machine. The
# host target comes first: on the build machine the kernels that run are the
# ones the tuner measured.
set(GRADTUNE_CPU_TARGETS "default" CACHE STRING
    "CPU targets of every variant: 'default' (this machine, Intel AVX-512, AMD AVX-512, AVX2 baseline), 'host' (this machine only: a quicker build), or a ;-list of Halide targets, most specific first")
set(_gradtune_x86_targets
    x86-64-linux-avx-avx2-avx512-avx512_cannonlake-avx512_sapphirerapids-avx512_skylake-avxvnni-f16c-fma-sse41
    x86-64-linux-avx-avx2-avx512-avx512_cannonlake-avx512_skylake-avx512_zen4-avx512_zen5-avxvnni-f16c-fma-sse41
    x86-64-linux-avx-avx2-f16c-fma-sse41)
if (GRADTUNE_CPU_TARGETS STREQUAL "host")
    set(_gradtune_targets "${GRADTUNE_CPU_TARGET}")
elseif (GRADTUNE_CPU_TARGETS STREQUAL "default")
    set(_gradtune_targets "${GRADTUNE_CPU_TARGET}")
    if (GRADTUNE_CPU_TARGET MATCHES "^x86-64-linux")
        foreach (_t IN LISTS _gradtune_x86_targets)
            list(APPEND _gradtune_targets "${_t}-user_context")
        endforeach ()
    endif ()
else ()
    set(_gradtune_targets "${GRADTUNE_CPU_TARGET}")
    foreach (_t IN LISTS GRADTUNE_CPU_TARGETS)
        if (NOT _t MATCHES "user_context")
            string(APPEND _t "-user_context")  # the runtime routes errors per call
        endif ()
        list(APPEND _gradtune_targets "${_t}")
    endforeach ()
endif ()
# One entry per feature set (tune_* flags only steer scheduling of the same
# instructions): the host target usually repeats one of the defaults.
set(GRADTUNE_CPU_TARGET_LIST "")
set(_gradtune_seen "")
foreach (_t IN LISTS _gradtune_targets)
    string(REPLACE "-" ";" _features "${_t}")
    list(FILTER _features EXCLUDE REGEX "^tune_")
    list(SORT _features)
    string(JOIN "-" _key ${_features})
    if (NOT _key IN_LIST _gradtune_seen)
        list(APPEND _gradtune_seen "${_key}")
        list(APPEND GRADTUNE_CPU_TARGET_LIST "${_t}")
    endif ()
endforeach ()
# Tuned records (own and transferred) are compiled for this machine's target
# only, by default: they are the kernels tuned for this machine, and every
# target costs a full compile of every tuned kernel in every build (the AMD
# AVX-512 copy of the tuned records was 890 s of the 2415 s of CPU time that
# an Intel Xeon spent generating variants, 7 of a CI run's 31 minutes).
# Structure defaults and generic variants are compiled for every target, so a
# library built here runs everywhere, with them, where the CPU lacks this
# machine's features (dispatch skips the tuned variants there:
# runtime/src/halide_call.cpp, tuned_cpu_variants_usable).
# GRADTUNE_TUNED_CPU_TARGETS=all compiles them for every target at this
# machine's ISA level (AVX-512 on an AVX-512 machine), for a library to ship
# to other CPUs: not for the AVX2 baseline, whose vector width their knobs
# were not tuned for.
set(GRADTUNE_TUNED_CPU_TARGETS "host" CACHE STRING
    "CPU targets of the tuned records: 'host' (this machine's target) or 'all' (every target of GRADTUNE_CPU_TARGETS at this machine's ISA level)")
set_property(CACHE GRADTUNE_TUNED_CPU_TARGETS PROPERTY STRINGS host all)
function(_gradtune_isa_level target out)
    if (target MATCHES "(^|-)avx512")
        set(${out} 3 PARENT_SCOPE)
    elseif (target MATCHES "(^|-)avx2(-|$)")
        set(${out} 2 PARENT_SCOPE)
    elseif (target MATCHES "(^|-)sse41(-|$)")
        set(${out} 1 PARENT_SCOPE)
    else ()
        set(${out} 0 PARENT_SCOPE)
    endif ()
endfunction()
if (GRADTUNE_TUNED_CPU_TARGETS STREQUAL "host")
    list(GET GRADTUNE_CPU_TARGET_LIST 0 GRADTUNE_TUNED_CPU_TARGET_LIST)  # the host target comes first
elseif (GRADTUNE_TUNED_CPU_TARGETS STREQUAL "all")
    _gradtune_isa_level("${GRADTUNE_CPU_TARGET}" _gradtune_host_level)
    set(GRADTUNE_TUNED_CPU_TARGET_LIST "")
    foreach (_t IN LISTS GRADTUNE_CPU_TARGET_LIST)
        _gradtune_isa_level("${_t}" _level)
        if (_level GREATER_EQUAL _gradtune_host_level)
            list(APPEND GRADTUNE_TUNED_CPU_TARGET_LIST "${_t}")
        endif ()
    endforeach ()
else ()
    message(FATAL_ERROR "gradtune: GRADTUNE_TUNED_CPU_TARGETS is '${GRADTUNE_TUNED_CPU_TARGETS}'; use 'host' or 'all'")
endif ()
message(STATUS "gradtune: CPU target ${GRADTUNE_CPU_TARGET}")
list(LENGTH GRADTUNE_CPU_TARGET_LIST _gradtune_count)
list(LENGTH GRADTUNE_TUNED_CPU_TARGET_LIST _gradtune_tuned_count)
message(STATUS "gradtune: structure defaults and generic variants are compiled for ${_gradtune_count} target(s): ${GRADTUNE_CPU_TARGET_LIST}")
message(STATUS "gradtune: tuned records for ${_gradtune_tuned_count} of them (GRADTUNE_TUNED_CPU_TARGETS=${GRADTUNE_TUNED_CPU_TARGETS})")
