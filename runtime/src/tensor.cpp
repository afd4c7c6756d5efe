#include "gradtune/tensor.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <sstream>

namespace gradtune {

const char *DataTypeString(DataType dtype) {
    switch (dtype) {
    case DataType::kHalf: return "half";
    case DataType::kBFloat16: return "bfloat16";
    case DataType::kFloat: return "float";
    case DataType::kDouble: return "double";
    case DataType::kInt32: return "int32";
    case DataType::kInt64: return "int64";
    }
    return "invalid";
}

const char *DataTypeName(DataType dtype) {
    switch (dtype) {
    case DataType::kHalf: return "float16";
    case DataType::kBFloat16: return "bfloat16";
    case DataType::kFloat: return "float32";
    case DataType::kDouble: return "float64";
    case DataType::kInt32: return "int32";
    case DataType::kInt64: return "int64";
    }
    return "invalid";
}

std::optional<DataType> DataTypeFromString(std::string_view name) {
    for (DataType t : {DataType::kHalf, DataType::kBFloat16, DataType::kFloat, DataType::kDouble, DataType::kInt32,
                       DataType::kInt64}) {
        if (name == DataTypeString(t) || name == DataTypeName(t)) return t;
    }
    return std::nullopt;
}

int DataTypeSize(DataType dtype) {
    switch (dtype) {
    case DataType::kHalf:
    case DataType::kBFloat16: return 2;
    case DataType::kFloat:
    case DataType::kInt32: return 4;
    case DataType::kDouble:
    case DataType::kInt64: return 8;
    }
    return 0;
}

std::string ShapeString(const std::vector<int64_t> &shape) {
    std::ostringstream out;
    out << "[";
    for (size_t i = 0; i < shape.size(); i++) out << (i ? "," : "") << shape[i];
    out << "]";
    return out.str();
}

int64_t NumElements(const std::vector<int64_t> &shape) {
    // Saturated at the int64 limits: a shape whose product overflows holds
    // more elements than any tensor can, and wrapping (undefined behaviour)
    // could make it look small.
    int64_t n = 1;
    for (int64_t d : shape) {
        int64_t product;
        if (__builtin_mul_overflow(n, d, &product)) return (n < 0) == (d < 0) ? INT64_MAX : INT64_MIN;
        n = product;
    }
    return n;
}

namespace {

// The byte count of a tensor; throws std::length_error where it overflows
// (an element count that wraps would allocate a buffer smaller than the
// shape, and every later access would run past it).
size_t byte_count(DataType dtype, const std::vector<int64_t> &shape) {
    uint64_t bytes = static_cast<uint64_t>(DataTypeSize(dtype));
    for (int64_t dim : shape) {
        if (dim < 0) return 0;  // an invalid shape holds nothing (validated by the ops)
        if (dim != 0 && bytes > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) / static_cast<uint64_t>(dim))
            throw std::length_error("gradtune::Tensor: shape " + ShapeString(shape) + " holds more bytes than memory");
        bytes *= static_cast<uint64_t>(dim);
    }
    return static_cast<size_t>(bytes);
}

}  // namespace

Tensor::Tensor(DataType dtype, std::vector<int64_t> shape)
    : dtype_(dtype), shape_(std::move(shape)), bytes_(byte_count(dtype_, shape_)) {}

uint16_t FloatToHalfBits(float value) {
    uint32_t f;
    std::memcpy(&f, &value, 4);
    const uint32_t sign = (f >> 16) & 0x8000u;
    const uint32_t abs = f & 0x7fffffffu;
    if (abs >= 0x7f800000u) {  // inf or NaN
        return static_cast<uint16_t>(sign | 0x7c00u | (abs > 0x7f800000u ? 0x200u | ((abs >> 13) & 0x3ffu) : 0));
    }
    if (abs >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // rounds to inf
    if (abs < 0x38800000u) {                                                // subnormal half (or zero)
        // value = abs_float * 2^24 rounded to nearest even integer.
        float a;
        std::memcpy(&a, &abs, 4);
        const float scaled = a * 16777216.0f;  // exact: power of two
        return static_cast<uint16_t>(sign | static_cast<uint32_t>(std::nearbyint(scaled)));
    }
    // Normal: rebias exponent, round mantissa to 10 bits, nearest even.
    uint32_t h = abs - 0x38000000u;  // exponent 127 -> 15
    const uint32_t round = 0xfffu + ((h >> 13) & 1u);
    h += round;
    return static_cast<uint16_t>(sign | (h >> 13));
}

float HalfBitsToFloat(uint16_t bits) {
    const uint32_t sign = (bits & 0x8000u) << 16;
    const uint32_t exponent = (bits >> 10) & 0x1fu;
    const uint32_t mantissa = bits & 0x3ffu;
    float result;
    if (exponent == 0) {
        result = std::ldexp(static_cast<float>(mantissa), -24);
        uint32_t r;
        std::memcpy(&r, &result, 4);
        r |= sign;
        std::memcpy(&result, &r, 4);
        return result;
    }
    uint32_t f = exponent == 31 ? (sign | 0x7f800000u | (mantissa << 13))
                                : (sign | ((exponent + 112) << 23) | (mantissa << 13));
    std::memcpy(&result, &f, 4);
    return result;
}

uint16_t FloatToBFloat16Bits(float value) {
    uint32_t f;
    std::memcpy(&f, &value, 4);
    if ((f & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((f >> 16) | 0x40u);  // quiet NaN
    const uint32_t round = 0x7fffu + ((f >> 16) & 1u);
    return static_cast<uint16_t>((f + round) >> 16);
}

float BFloat16BitsToFloat(uint16_t bits) {
    const uint32_t f = static_cast<uint32_t>(bits) << 16;
    float result;
    std::memcpy(&result, &f, 4);
    return result;
}

namespace {

// Element i of `data` as a double. Takes no tensor view: building one copies
// the shape, and the per-element loops of the tests and the tuner's output
// comparison spent most of their time in that malloc.
double load_element(DataType dtype, const void *data, int64_t i) {
    switch (dtype) {
    case DataType::kHalf: return HalfBitsToFloat(static_cast<const uint16_t *>(data)[i]);
    case DataType::kBFloat16: return BFloat16BitsToFloat(static_cast<const uint16_t *>(data)[i]);
    case DataType::kFloat: return static_cast<const float *>(data)[i];
    case DataType::kDouble: return static_cast<const double *>(data)[i];
    case DataType::kInt32: return static_cast<const int32_t *>(data)[i];
    case DataType::kInt64: return static_cast<double>(static_cast<const int64_t *>(data)[i]);
    }
    return 0;
}

}  // namespace

double LoadElement(const ConstTensorRef &t, int64_t i) { return load_element(t.dtype, t.data, i); }

double Tensor::load(int64_t i) const { return load_element(dtype_, bytes_.data(), i); }

namespace {

// value truncated toward zero into an integer type, saturated at its limits
// (NaN gives 0): a plain cast of an out-of-range double is undefined
// behaviour.
template <typename Int>
Int saturate_to(double value) {
    if (std::isnan(value)) return 0;
    // Both limits as doubles: -2^(bits-1) exactly, and 2^(bits-1), the first
    // value past the maximum.
    const double low = static_cast<double>(std::numeric_limits<Int>::min());
    if (value <= low) return std::numeric_limits<Int>::min();
    if (value >= -low) return std::numeric_limits<Int>::max();
    return static_cast<Int>(value);
}

}  // namespace

void Tensor::store(int64_t i, double value) {
    switch (dtype_) {
    case DataType::kHalf: as<uint16_t>()[i] = FloatToHalfBits(static_cast<float>(value)); break;
    case DataType::kBFloat16: as<uint16_t>()[i] = FloatToBFloat16Bits(static_cast<float>(value)); break;
    case DataType::kFloat: as<float>()[i] = static_cast<float>(value); break;
    case DataType::kDouble: as<double>()[i] = value; break;
    case DataType::kInt32: as<int32_t>()[i] = saturate_to<int32_t>(value); break;
    case DataType::kInt64: as<int64_t>()[i] = saturate_to<int64_t>(value); break;
    }
}

}  // namespace gradtune
