#!/usr/bin/env bash
# gradtune as its users consume it (README, "Using the library"), each time
# with the program of consumer/main.cpp, which checks its own result:
#   1. `cmake --install` into a fresh prefix, then an out-of-tree project with
#      find_package(gradtune REQUIRED) against it. The install must not name
#      the build or source tree, and the program builds without Halide.
#   2. The README's program (its "Using the library" block) compiled with
#      `pkg-config --cflags --libs gradtune`, printing what the README says.
#   3. A parent project that add_subdirectory()s the checkout: gradtune builds
#      as a library only (no tests, tools or bench, so no Catch2 or CLI11),
#      here with one op, for the host target, without records, to stay quick.
# Usage: package_test.sh <build dir> <source dir> <cmake> <ninja> <c++ compiler>
set -euo pipefail
build="$1"; source="$2"; cmake="$3"; ninja="$4"; cxx="$5"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
fail() { echo "FAILED: $*"; exit 1; }
configure() { "$cmake" -G Ninja -DCMAKE_MAKE_PROGRAM="$ninja" -DCMAKE_CXX_COMPILER="$cxx" "$@"; }

# --- 1. find_package from an installed prefix ---------------------------------
prefix="$work/prefix"
"$cmake" --install "$build" --prefix "$prefix" >"$work/install.log" || { cat "$work/install.log"; fail "cmake --install"; }
for f in include/gradtune/gradtune.h bin/gradtune; do
  [ -e "$prefix/$f" ] || fail "the install has no $f"
done
config="$(find "$prefix" -name gradtuneConfig.cmake)"
[ -n "$config" ] && [ -f "$(dirname "$config")/gradtuneConfigVersion.cmake" ] || fail "no package config files"
[ -n "$(find "$prefix" -name libgradtune.a)" ] || fail "no libgradtune.a"
if grep -rlF -e "$build" -e "$source" "$(dirname "$config")" "$(find "$prefix" -name gradtune.pc)"; then
  fail "the files above name the build or source tree"
fi
configure -S "$here/consumer" -B "$work/cmake-consumer" -DCMAKE_PREFIX_PATH="$prefix" \
  >"$work/consumer.log" 2>&1 || { cat "$work/consumer.log"; fail "configuring the find_package consumer"; }
"$cmake" --build "$work/cmake-consumer" >"$work/consumer.log" 2>&1 \
  || { cat "$work/consumer.log"; fail "building the find_package consumer"; }
grep -qi halide "$work/cmake-consumer/build.ninja" && fail "the consumer's build names Halide"
"$work/cmake-consumer/consumer" || fail "the find_package consumer's result"
echo "find_package(gradtune): built and checked"

# --- 2. pkg-config, with the README's program ----------------------------------
pc_dir="$(dirname "$(find "$prefix" -name gradtune.pc)")"
flags="$(PKG_CONFIG_PATH="$pc_dir" pkg-config --cflags --libs gradtune)" || fail "pkg-config gradtune"
echo "pkg-config --cflags --libs gradtune: $flags"
# The first cpp block after the README's "## Using the library".
sed -n '/^## Using the library/,$p' "$source/README.md" | sed -n '/^```cpp$/,/^```$/p' | sed '1d;/^```$/,$d' \
  >"$work/readme.cpp"
grep -q "int main" "$work/readme.cpp" || fail "no program in the README's \"Using the library\""
# shellcheck disable=SC2086  # the flags are words
"$cxx" -std=c++17 "$work/readme.cpp" $flags -o "$work/pc-consumer" || fail "building the README's program with pkg-config's flags"
"$work/pc-consumer" >"$work/readme.out" || fail "the README's program failed"
printf '1 1 2 2\n1 1 2 2\n3 3 4 4\n3 3 4 4\n' | cmp -s - "$work/readme.out" \
  || { cat "$work/readme.out"; fail "the README's program printed the above, not what the README says"; }
echo "pkg-config: the README's program built and printed what the README says"

# --- 3. add_subdirectory --------------------------------------------------------
mkdir -p "$work/no-records"
configure -S "$here/parent" -B "$work/parent" -DGRADTUNE_SOURCE_DIR="$source" \
  -DCMAKE_BUILD_TYPE=Release -DGRADTUNE_OP_FILTER=FractionalAvgPoolGrad -DGRADTUNE_CPU_TARGETS=host \
  -DGRADTUNE_CUDA=OFF -DGRADTUNE_RECORDS_DIR="$work/no-records" >"$work/parent.log" 2>&1 \
  || { cat "$work/parent.log"; fail "configuring the parent project"; }
for dir in tuner bench tests; do
  [ -e "$work/parent/gradtune/$dir" ] && fail "a subproject build has gradtune's $dir"
done
grep -qiE "^(catch2|cli11)_DIR" "$work/parent/CMakeCache.txt" && fail "a subproject build looked for Catch2 or CLI11"
"$cmake" --build "$work/parent" --target consumer >"$work/parent.log" 2>&1 \
  || { tail -30 "$work/parent.log"; fail "building the parent project"; }
"$work/parent/consumer" >/dev/null || fail "the add_subdirectory consumer's result"
echo "add_subdirectory(gradtune): built and checked"
echo "PASSED"
