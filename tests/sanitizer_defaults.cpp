// Defaults of the sanitizer runtimes, compiled into the sanitized executables
// (cmake/GradtuneSanitize.cmake), so that they behave the same under ctest
// and by hand. Any UBSan report aborts (a test fails). An allocation past
// max_allocation_size_mb returns null, so `new` throws std::bad_alloc, which
// the API turns into ResourceExhausted: a refused oversized allocation is
// what TF does, not a finding; an unhandled one still fails.
extern "C" const char *__asan_default_options() {
    return "allocator_may_return_null=1:max_allocation_size_mb=8192:detect_leaks=1";
}
extern "C" const char *__ubsan_default_options() { return "halt_on_error=1:print_stacktrace=1"; }
