// A program that uses gradtune as its users do: through the installed CMake
// package, pkg-config or add_subdirectory (tests/package/package_test.sh).
// TensorFlow's FractionalAvgPoolGrad of a 4x4 image pooled in 2x2 cells: each
// cell spreads its gradient evenly over its 4 pixels, so the input gradient
// of 4, 8, 12, 16 is 1, 2, 3, 4 in the image's four quarters.
#include <gradtune/gradtune.h>

#include <cstdio>
#include <vector>

int main() {
    using namespace gradtune;
    const Tensor input_shape = Tensor::FromVector(DataType::kInt64, {4}, std::vector<int64_t>{1, 4, 4, 1});
    const Tensor dy = Tensor::FromVector(DataType::kFloat, {1, 2, 2, 1}, std::vector<float>{4, 8, 12, 16});
    const Tensor cells = Tensor::FromVector(DataType::kInt64, {3}, std::vector<int64_t>{0, 2, 4});
    Tensor dx;
    const Status status = FractionalAvgPoolGrad::Compute(input_shape, dy, cells, cells, &dx,
                                                          FractionalAvgPoolGrad::Overlapping(false));
    if (!status.ok()) {
        std::fprintf(stderr, "%s\n", status.ToString().c_str());
        return 1;
    }
    int wrong = 0;
    for (int h = 0; h < 4; h++) {
        for (int w = 0; w < 4; w++) {
            const float value = dx.as<float>()[h * 4 + w];
            wrong += value != 1 + 2 * (h / 2) + w / 2;
            std::printf("%g%s", value, w == 3 ? "\n" : " ");
        }
    }
    return wrong == 0 ? 0 : 1;
}
