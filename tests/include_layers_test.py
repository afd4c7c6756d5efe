#!/usr/bin/env python3
"""The house draws with one-way arrows (docs/design.md, "Layers"): each folder
includes only the folders below it, and no two modules (x.h with x.cpp) of
the project include each other, directly or round a longer loop.

Layers, lowest first:
  runtime/include  the public API; its vocabulary (Device, Tensor, Status)
  schedules        knob spaces and structures (Halide-free), the schedules
  generators       the algorithms (Halide)
  runtime/src      the runtime: checks, dispatch, kernel calls
  tuner            the tuner and the records tool
  bench            the benchmark
and python/gradtune_tf, which sees the public API only. Tests may include
anything. Generated headers (the kernels', build_info.h's inputs) are not
the project's sources and are skipped; EXCEPTIONS names the one include a
layer allows by name, and why.

Fails naming file:line of each include against a layer, and each loop of
modules. Usage: include_layers_test.py <repository root>
"""
import os
import re
import subprocess
import sys

root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), ".."))

# Folder -> the folders it may include from (itself always).
ALLOWED = {
    "runtime/include": set(),
    "schedules": {"runtime/include"},
    "generators": {"schedules", "runtime/include"},
    "runtime/src": {"schedules", "runtime/include"},
    "tuner": {"schedules", "runtime/include"},
    "bench": {"tuner", "schedules", "runtime/include"},
    "python/gradtune_tf": {"runtime/include"},
}
# Includes a layer allows by name, with the reason.
EXCEPTIONS = {
    ("bench/bench_main.cpp", "runtime/src/journal.h"): "the report times the runtime's own journal bookkeeping",
}
SOURCE = re.compile(r"\.(h|hpp|cpp|cc|inc)$")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def folder_of(path):
    for folder in sorted(ALLOWED, key=len, reverse=True):
        if path == folder or path.startswith(folder + "/"):
            return folder
    return None


def main():
    files = subprocess.run(["git", "ls-files"], cwd=root, capture_output=True, text=True, check=True).stdout.split()
    files = [f for f in files if SOURCE.search(f) and os.path.exists(os.path.join(root, f))]
    by_name = {}
    for f in files:
        by_name.setdefault(os.path.basename(f), []).append(f)

    def resolve(including, name):
        """The tracked file an include names, or None (a generated header)."""
        if name.startswith("gradtune/"):
            path = "runtime/include/" + name
            return path if path in by_name.get(os.path.basename(name), []) else None
        local = os.path.normpath(os.path.join(os.path.dirname(including), name))
        if local in files:
            return local
        candidates = [f for f in by_name.get(os.path.basename(name), []) if f.endswith(name)]
        # One file of that name outside the tests (a test's own header is local).
        candidates = [f for f in candidates if not f.startswith("tests/")]
        return candidates[0] if len(candidates) == 1 else None

    errors = []
    modules = {}  # module (path without extension) -> modules it includes
    for f in files:
        folder = folder_of(f)
        if folder is None:
            continue  # tests, scripts: anything goes
        module = os.path.splitext(f)[0]
        with open(os.path.join(root, f), encoding="utf-8", errors="replace") as text:
            for number, line in enumerate(text, 1):
                match = INCLUDE.match(line)
                if not match:
                    continue
                target = resolve(f, match.group(1))
                if target is None:
                    continue
                target_folder = folder_of(target)
                if target_folder is None:
                    errors.append("%s:%d: includes %s, outside the layers" % (f, number, target))
                elif (target_folder != folder and target_folder not in ALLOWED[folder]
                      and (f, target) not in EXCEPTIONS):
                    errors.append("%s:%d: %s includes %s (%s), which its layer may not include" % (
                        f, number, folder, target, target_folder))
                target_module = os.path.splitext(target)[0]
                if target_module != module:
                    modules.setdefault(module, set()).add(target_module)

    # Loops among modules: depth-first search, each loop reported once.
    state, stack, loops = {}, [], set()

    def visit(m):
        state[m] = "open"
        stack.append(m)
        for n in sorted(modules.get(m, ())):
            if state.get(n) == "open":
                loop = stack[stack.index(n):]
                start = loop.index(min(loop))
                loops.add(tuple(loop[start:] + loop[:start]))
            elif n not in state:
                visit(n)
        stack.pop()
        state[m] = "done"

    for m in sorted(modules):
        if m not in state:
            visit(m)
    for loop in sorted(loops):
        errors.append("modules include each other: %s" % " -> ".join(loop + (loop[0],)))

    for e in errors:
        print(e)
    if errors:
        print("%d arrow(s) against the layers (docs/design.md, \"Layers\")" % len(errors))
        return 1
    print("%d files, every include one way" % len(files))
    return 0


if __name__ == "__main__":
    sys.exit(main())
