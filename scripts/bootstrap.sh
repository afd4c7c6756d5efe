#!/usr/bin/env bash
# Installs everything gradtune needs to build, on a fresh Debian bookworm
# machine: the Debian packages of scripts/apt-packages.txt (when missing) and a
# project-local virtual environment .venv with Halide, CMake, Ninja and matplotlib from
# scripts/requirements.txt. Idempotent: a second run checks and does nothing.
# Extra package lists given as arguments are installed too (scripts/fuzz.sh:
# scripts/apt-packages-fuzz.txt, clang and libFuzzer).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

say() { printf '[bootstrap] %s\n' "$*"; }
die() { printf '[bootstrap] error: %s\n' "$*" >&2; exit 1; }

# --- Debian packages -------------------------------------------------------
missing=()
while read -r spec; do
  spec="${spec%%#*}"; spec="$(echo "$spec" | xargs)"
  [ -n "$spec" ] || continue
  name="${spec%%=*}"
  want=""; [[ "$spec" == *=* ]] && want="${spec#*=}"
  have="$(dpkg-query -W -f='${Status} ${Version}' "$name" 2>/dev/null || true)"
  if [[ "$have" != "install ok installed"* ]]; then
    missing+=("$spec")
  elif [ -n "$want" ] && [ "${have##* }" != "$want" ]; then
    say "note: $name ${have##* } is installed; gradtune is tested with $want"
  fi
done < <(cat scripts/apt-packages.txt "$@")

if [ "${#missing[@]}" -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ]; then
    die "missing Debian packages: ${missing[*]} -- run: sudo apt-get install -y ${missing[*]}"
  fi
  say "installing Debian packages: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null || die "apt-get update failed (is the Debian mirror reachable?)"
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null 2>&1 \
    || die "apt-get install ${missing[*]} failed"
fi

# --- Python virtual environment with Halide, CMake, Ninja -------------------
python="${PYTHON:-python3}"
command -v "$python" >/dev/null || die "python3 not found -- run: apt-get install -y python3 python3-venv"
stamp=".venv/.gradtune-requirements"
want_stamp="$(sha256sum scripts/requirements.txt | cut -d' ' -f1)"
if [ ! -x .venv/bin/python ]; then
  say "creating .venv"
  "$python" -m venv .venv || die "could not create .venv -- run: apt-get install -y python3-venv"
fi
if [ "$(cat "$stamp" 2>/dev/null || true)" != "$want_stamp" ]; then
  say "installing Halide, CMake, Ninja and matplotlib into .venv (one time, about a minute)"
  .venv/bin/python -m pip install -q --disable-pip-version-check -r scripts/requirements.txt \
    || die "pip install -r scripts/requirements.txt failed (is PyPI reachable?)"
  echo "$want_stamp" > "$stamp"
fi
say "ready: Halide $(.venv/bin/python -c "import importlib.metadata as m; print(m.version(\"halide\"))"), $(.venv/bin/cmake --version | head -1)"
