# Finds what the build needs. When something is missing it sets
# GRADTUNE_MISSING to one line saying what to run and returns; the top-level
# CMakeLists.txt stops with that line (an error raised in here would come with
# a CMake call stack). scripts/bootstrap.sh installs all of it.

set(GRADTUNE_MISSING "")
macro(_gradtune_require found what fix)
    if (NOT ${found} AND NOT GRADTUNE_MISSING)
        set(GRADTUNE_MISSING "gradtune: ${what} not found -- run: ${fix}")
    endif ()
endmacro()

# Halide from the project's virtual environment (pip install halide==21.0.0).
if (NOT Halide_DIR AND EXISTS "${PROJECT_SOURCE_DIR}/.venv/bin/python")
    execute_process(
        COMMAND "${PROJECT_SOURCE_DIR}/.venv/bin/python" -c "import halide; print(halide.install_dir())"
        OUTPUT_VARIABLE _gradtune_halide_root OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
    if (_gradtune_halide_root)
        list(APPEND CMAKE_PREFIX_PATH "${_gradtune_halide_root}")
    endif ()
endif ()
find_package(Halide 21 QUIET)
_gradtune_require(Halide_FOUND "Halide 21 (pip package halide==21.0.0 in .venv)" "./scripts/bootstrap.sh")
set(GRADTUNE_HALIDE_VERSION "${Halide_VERSION}")

find_package(Threads REQUIRED)
find_package(nlohmann_json 3 QUIET)
_gradtune_require(nlohmann_json_FOUND "nlohmann/json" "./scripts/bootstrap.sh (apt-get install nlohmann-json3-dev)")
find_package(CLI11 QUIET)
_gradtune_require(CLI11_FOUND "CLI11" "./scripts/bootstrap.sh (apt-get install libcli11-dev)")
find_package(Catch2 2 QUIET)
_gradtune_require(Catch2_FOUND "Catch2 v2" "./scripts/bootstrap.sh (apt-get install catch2)")
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
        COMMAND "${PROJECT_SOURCE_DIR}/.venv/bin/python" -c "import halide; print(halide.get_host_target())"
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
message(STATUS "gradtune: CPU target ${GRADTUNE_CPU_TARGET}")
