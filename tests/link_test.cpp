// Links libgradtune.a alone (plus pthread and dl) and calls it: the static
// library must not need libHalide. CTest also checks with ldd that no
// libHalide is linked.
#include <cstdio>

#include "gradtune/gradtune.h"

int main() {
    using namespace gradtune;
    Tensor filter = Tensor::FromVector(DataType::kFloat, {1, 1, 1, 1}, std::vector<float>{2});
    Tensor dy = Tensor::FromVector(DataType::kFloat, {1, 2, 2, 1}, std::vector<float>{1, 2, 3, 4});
    Tensor sizes = Tensor::FromVector(DataType::kInt32, {4}, std::vector<int>{1, 2, 2, 1});
    Tensor dx;
    Status st = DepthwiseConv2dNativeBackpropInput::Compute(sizes, filter, dy, {1, 1, 1, 1}, "VALID", &dx);
    if (!st.ok()) {
        std::fprintf(stderr, "%s\n", st.ToString().c_str());
        return 1;
    }
    for (int i = 0; i < 4; i++) {
        if (dx.as<float>()[i] != 2.0f * (i + 1)) return 1;
    }
    std::printf("libgradtune.a linked alone: OK (%zu variants)\n", Variants().size());
    return 0;
}
