# The sanitizer build (option GRADTUNE_SANITIZE, run by scripts/sanitize.sh):
# copies of libgradtune, the tuner library and the gradtune command, compiled
# with AddressSanitizer and UndefinedBehaviorSanitizer, next to the normal
# targets in the same build tree, and a test executable that links the
# tests' objects (compiled once, tests/CMakeLists.txt) against those copies.
# The Halide-generated kernels and the Halide runtime are linked into the
# copies as they were compiled (uninstrumented): ASan still sees every heap
# access the C++ makes, and the copies cost a compile of the runtime's and the
# tuner's C++ only, not of the variants.
# A ThreadSanitizer copy of libgradtune (gradtune_tsan) runs only the
# concurrent-calls test (tests/concurrent_calls.cpp): TSan cannot share a
# process with ASan, and the rest of the suite is single-threaded C++.

# At -O0: ASan and UBSan see every access and operation there (the optimiser
# removes none), and the copies compile in half the time (tuner/tune.cpp:
# 22 s against 50 s at -O1); what they run is C++ around uninstrumented
# kernels, whose speed the tests do not need.
set(GRADTUNE_SANITIZE_COMPILE_OPTIONS
    -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer -O0 -g1)
set(GRADTUNE_SANITIZE_LINK_OPTIONS -fsanitize=address,undefined)
# The shell tests learn from this that their gradtune command is sanitized
# (its shadow memory does not fit under `ulimit -v`).
set(GRADTUNE_SANITIZE_ENVIRONMENT "GRADTUNE_SANITIZED=1")

# Instruments `target` (its own sources) and links the sanitizer runtimes into
# whatever links it.
function(gradtune_sanitize target)
    target_compile_options(${target} PRIVATE ${GRADTUNE_SANITIZE_COMPILE_OPTIONS})
    target_link_options(${target} PUBLIC ${GRADTUNE_SANITIZE_LINK_OPTIONS})
endfunction()

# An executable: instrumented, with the sanitizer defaults of
# tests/sanitizer_defaults.cpp.
function(gradtune_sanitize_executable target)
    gradtune_sanitize(${target})
    target_sources(${target} PRIVATE "${PROJECT_SOURCE_DIR}/tests/sanitizer_defaults.cpp")
endfunction()

# ThreadSanitizer: `target`'s own sources instrumented, the TSan runtime
# linked into whatever links it.
set(GRADTUNE_TSAN_COMPILE_OPTIONS -fsanitize=thread -fno-omit-frame-pointer -O1 -g1)
function(gradtune_tsan target)
    target_compile_options(${target} PRIVATE ${GRADTUNE_TSAN_COMPILE_OPTIONS})
    target_link_options(${target} PUBLIC -fsanitize=thread)
endfunction()
