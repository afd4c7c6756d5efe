#!/usr/bin/env bash
# The sanitizer stage of CI, after the test command: the runtime and the
# gradtune command rebuilt with AddressSanitizer + UndefinedBehaviorSanitizer
# (cmake/GradtuneSanitize.cmake; the compiled kernels and the tests' objects
# are reused, so this compiles the runtime's and the tuner's C++ only), then every test of the suite run against them
# (`ctest -L sanitize`), and the concurrent-calls test over a ThreadSanitizer
# copy of the runtime. A sanitizer report fails its test. The build tree is
# left configured as before (GRADTUNE_SANITIZE=OFF), so the README's commands
# build and run only the normal targets.
# Usage: scripts/sanitize.sh [extra ctest args]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
./scripts/build.sh
export PATH="$root/.venv/bin:$PATH"
restore() { cmake -S . -B build -DGRADTUNE_SANITIZE=OFF >/dev/null; }
trap restore EXIT
echo "[sanitize] configuring the ASan + UBSan copies"
cmake -S . -B build -DGRADTUNE_SANITIZE=ON >/dev/null
echo "[sanitize] compiling them"
cmake --build build -j "$(nproc)" --target gradtune_tests_sanitized gradtune_cli_sanitized gradtune_concurrent_calls_tsan
echo "[sanitize] running every test under the sanitizers"
ctest --test-dir build -L sanitize --output-on-failure -j "$(nproc)" "$@"
