// libFuzzer target: the .npy reader of `gradtune run` (tuner/npy.cpp) on
// arbitrary file contents. A finding: a crash, a sanitizer report, an
// exception (read_npy reports through its Status), or an OK tensor that
// claims more data than the file holds.
#include <cstdint>

#include "input_file.h"
#include "npy.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static InputFile file("input.npy");
    gradtune::Tensor t;
    gradtune::Status st = gradtune::tooling::read_npy(file.write(data, size), &t);
    if (st.ok()) {
        const uint64_t bytes = static_cast<uint64_t>(t.num_elements()) * gradtune::DataTypeSize(t.dtype());
        if (bytes > size || (bytes > 0 && t.data() == nullptr)) __builtin_trap();
    }
    return 0;
}
