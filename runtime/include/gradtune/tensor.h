// Tensors at the API boundary: a dtype, a shape in TF's dimension order
// (e.g. NHWC [N, H, W, C]) and dense row-major data. TensorRef / ConstTensorRef
// view caller memory; Tensor owns its memory.
#pragma once

#include <cstddef>
#include <cstdint>
#include <new>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gradtune {

enum class DataType { kHalf, kBFloat16, kFloat, kDouble, kInt32, kInt64 };

// TF's DataTypeString: "half", "bfloat16", "float", "double", "int32", "int64".
const char *DataTypeString(DataType dtype);
// NumPy-style name: "float16", "bfloat16", "float32", "float64", "int32", "int64".
const char *DataTypeName(DataType dtype);
// Accepts both spellings.
std::optional<DataType> DataTypeFromString(std::string_view name);
int DataTypeSize(DataType dtype);

// "[1,2,3]"
std::string ShapeString(const std::vector<int64_t> &shape);
// Product of the dimensions (1 for a scalar), saturated at the int64 limits.
int64_t NumElements(const std::vector<int64_t> &shape);

struct ConstTensorRef {
    DataType dtype = DataType::kFloat;
    std::vector<int64_t> shape;
    const void *data = nullptr;

    int64_t num_elements() const { return NumElements(shape); }
    int64_t dims() const { return static_cast<int64_t>(shape.size()); }
    template <typename T>
    const T *as() const { return static_cast<const T *>(data); }
};

struct TensorRef {
    DataType dtype = DataType::kFloat;
    std::vector<int64_t> shape;
    void *data = nullptr;

    int64_t num_elements() const { return NumElements(shape); }
    template <typename T>
    T *as() const { return static_cast<T *>(data); }
    operator ConstTensorRef() const { return {dtype, shape, data}; }
};

// Storage for Tensor: aligned to kTensorAlignment bytes, as TensorFlow aligns
// its tensors (64 bytes) and Halide its own buffers. With the default `new`,
// a large buffer starts 16 bytes past a page (glibc's mmap chunk header), so
// every 64-byte vector a kernel reads from it straddles two cache lines.
// Otherwise std::allocator, except that it allocates with the nothrow `new`
// and throws std::bad_alloc itself when that returns null: a failed
// allocation stays an exception the API can turn into ResourceExhausted under
// AddressSanitizer too (which reports a failed throwing `new` as a crash and
// returns null from a nothrow one).
inline constexpr std::size_t kTensorAlignment = 64;

template <typename T>
struct NothrowAllocator {
    using value_type = T;
    NothrowAllocator() = default;
    template <typename U>
    NothrowAllocator(const NothrowAllocator<U> &) {}
    T *allocate(std::size_t n) {
        if (n > static_cast<std::size_t>(-1) / sizeof(T)) throw std::bad_alloc();
        void *p = ::operator new(n * sizeof(T), std::align_val_t{kTensorAlignment}, std::nothrow);
        if (!p) throw std::bad_alloc();
        return static_cast<T *>(p);
    }
    void deallocate(T *p, std::size_t) { ::operator delete(p, std::align_val_t{kTensorAlignment}); }
    template <typename U>
    bool operator==(const NothrowAllocator<U> &) const { return true; }
};

// An owning tensor, zero-initialised.
class Tensor {
public:
    Tensor() = default;
    Tensor(DataType dtype, std::vector<int64_t> shape);

    template <typename T>
    static Tensor FromVector(DataType dtype, std::vector<int64_t> shape, const std::vector<T> &values) {
        Tensor t(dtype, std::move(shape));
        for (size_t i = 0; i < values.size() && i < static_cast<size_t>(t.num_elements()); i++) {
            if (dtype == DataType::kInt64) {
                t.as<int64_t>()[i] = static_cast<int64_t>(values[i]);  // exact beyond 2^53
            } else {
                t.store(static_cast<int64_t>(i), static_cast<double>(values[i]));
            }
        }
        return t;
    }

    DataType dtype() const { return dtype_; }
    const std::vector<int64_t> &shape() const { return shape_; }
    int64_t num_elements() const { return NumElements(shape_); }
    void *data() { return bytes_.data(); }
    const void *data() const { return bytes_.data(); }
    template <typename T>
    T *as() { return reinterpret_cast<T *>(bytes_.data()); }
    template <typename T>
    const T *as() const { return reinterpret_cast<const T *>(bytes_.data()); }
    TensorRef ref() { return {dtype_, shape_, bytes_.data()}; }
    ConstTensorRef cref() const { return {dtype_, shape_, bytes_.data()}; }
    operator ConstTensorRef() const { return cref(); }

    // Element i as a double / stored from a double (rounding to nearest even
    // for 16-bit floats, truncating toward zero for integers, saturated at
    // the integer type's limits, NaN as 0).
    double load(int64_t i) const;
    void store(int64_t i, double value);

private:
    DataType dtype_ = DataType::kFloat;
    std::vector<int64_t> shape_;
    std::vector<std::byte, NothrowAllocator<std::byte>> bytes_;
};

// Element i of a tensor view as a double.
double LoadElement(const ConstTensorRef &t, int64_t i);

// IEEE half and bfloat16 bit conversions (round to nearest even).
uint16_t FloatToHalfBits(float value);
float HalfBitsToFloat(uint16_t bits);
uint16_t FloatToBFloat16Bits(float value);
float BFloat16BitsToFloat(uint16_t bits);

}  // namespace gradtune
