// libFuzzer target: the .npy reader of `gradtune run` (tuner/npy.cpp) on
// arbitrary file contents. A finding: a crash, a sanitizer report, an
// exception (read_npy reports through its Status), or an OK tensor that
// claims more data than the file holds.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "npy.h"

namespace {

// The input as a file, removed at exit.
std::string path;

}  // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
    path = "/tmp/gradtune-fuzz-npy-" + std::to_string(getpid()) + ".npy";
    std::atexit([] { std::remove(path.c_str()); });
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    {
        std::ofstream file(path, std::ios::binary | std::ios::trunc);
        file.write(reinterpret_cast<const char *>(data), static_cast<std::streamsize>(size));
    }
    gradtune::Tensor t;
    gradtune::Status st = gradtune::tooling::read_npy(path, &t);
    if (st.ok()) {
        const uint64_t bytes = static_cast<uint64_t>(t.num_elements()) * gradtune::DataTypeSize(t.dtype());
        if (bytes > size || (bytes > 0 && t.data() == nullptr)) __builtin_trap();
    }
    return 0;
}
