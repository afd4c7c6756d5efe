// libFuzzer target: the public by-name API (RunOp, gradtune/op_call.h) with
// calls built from the input bytes: any registered op, any dtype, tensors of
// rank 0-5 with small and near-limit dimensions, shape vectors and attrs
// with values near the int32/int64 limits, valid and invalid strings.
// Tensors always own the data their shape claims (as TF tensors do).
// A finding: a crash, a sanitizer report, an exception out of RunOp, an OK
// status whose outputs are missing or claim elements without storage, or a
// successful call whose RunOpInto twin (into caller memory of the shapes
// DescribeCall reports) fails or differs.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <deque>
#include <limits>
#include <string>
#include <vector>

#include "gradtune/op_call.h"

namespace {

using namespace gradtune;

// Reads the fuzzer's bytes; zeros once they run out.
class Bytes {
public:
    Bytes(const uint8_t *data, size_t size) : data_(data), size_(size) {}
    uint8_t byte() { return pos_ < size_ ? data_[pos_++] : 0; }
    template <typename T>
    const T &pick(const std::vector<T> &options) { return options[byte() % options.size()]; }

private:
    const uint8_t *data_;
    size_t size_, pos_ = 0;
};

constexpr int64_t kInt32Max = std::numeric_limits<int32_t>::max();
constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();

// Shape-vector elements and integer attrs: mostly small, sometimes at a limit.
int64_t integer(Bytes &b) {
    static const std::vector<int64_t> special = {
        -1, 0, 1, 2, 3, 4, 5, 7, 8, 16, kInt32Max, kInt32Max + 1, int64_t{1} << 30, int64_t{1} << 40,
        kInt64Max, std::numeric_limits<int64_t>::min()};
    const uint8_t k = b.byte();
    return k < 160 ? k % 9 : special[k % special.size()];
}

// Dimensions of a data tensor: small (the tensor owns its data), or zero.
int64_t dimension(Bytes &b) { return b.byte() % 7; }

double real(Bytes &b) {
    static const std::vector<double> values = {1.0, 1.44, 1.5, 2.0, 3.0, 0.5, 0.0, -1.0, 1e9, NAN, INFINITY};
    return b.pick(values);
}

std::string text(Bytes &b) {
    static const std::vector<std::string> values = {"SAME", "VALID", "EXPLICIT", "NHWC", "NCHW", "", "same", "NCHW_VECT_C"};
    return b.pick(values);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    Bytes b(data, size);
    const std::vector<OpSpec> &ops = RegisteredOps();
    const OpSpec &spec = ops[b.byte() % ops.size()];
    static const std::vector<DataType> dtypes = {DataType::kFloat,    DataType::kDouble, DataType::kHalf,
                                                 DataType::kBFloat16, DataType::kInt32,  DataType::kInt64};
    const DataType t = b.pick(dtypes);

    OpCall call;
    call.op = spec.name;
    std::deque<Tensor> storage;
    for (size_t i = 0; i < spec.inputs.size(); i++) {
        if (b.byte() % 16 == 0) continue;  // a missing input
        const std::string type = i < spec.input_types.size() ? spec.input_types[i] : "T";
        const DataType dtype = type == "int32" ? DataType::kInt32 : type == "int64" ? DataType::kInt64 : t;
        if (type != "T") {
            // A shape vector: length 0-6 (4 most often), near-limit values.
            const int length = b.byte() % 8 < 5 ? 4 : b.byte() % 7;
            Tensor v(b.byte() % 8 == 0 ? t : dtype, {length});
            for (int k = 0; k < length; k++) {
                const int64_t value = integer(b);
                if (v.dtype() == DataType::kInt64) {
                    v.as<int64_t>()[k] = value;
                } else {
                    v.store(k, static_cast<double>(value));
                }
            }
            storage.push_back(std::move(v));
        } else {
            const int rank = b.byte() % 8 < 6 ? 4 : b.byte() % 6;
            std::vector<int64_t> shape;
            for (int k = 0; k < rank; k++) shape.push_back(dimension(b));
            Tensor x(dtype, shape);
            for (int64_t k = 0; k < x.num_elements(); k++) x.store(k, static_cast<double>(static_cast<int8_t>(b.byte())) / 16);
            storage.push_back(std::move(x));
        }
        call.inputs[spec.inputs[i]] = storage.back().cref();
    }
    for (const AttrSpec &attr : spec.attrs) {
        if (b.byte() % 4 == 0) continue;  // left to its default (or missing, if required)
        switch (attr.kind) {
        case AttrKind::kInt: call.attrs[attr.name] = integer(b); break;
        case AttrKind::kFloat: call.attrs[attr.name] = real(b); break;
        case AttrKind::kBool: call.attrs[attr.name] = static_cast<bool>(b.byte() & 1); break;
        case AttrKind::kString: call.attrs[attr.name] = text(b); break;
        case AttrKind::kIntList: {
            std::vector<int64_t> list(b.byte() % 8 < 5 ? 4 : b.byte() % 9);
            for (int64_t &v : list) v = b.byte() % 4 == 0 ? integer(b) : 1 + b.byte() % 2;
            call.attrs[attr.name] = list;
            break;
        }
        case AttrKind::kFloatList: {
            std::vector<double> list(b.byte() % 8 < 5 ? 4 : b.byte() % 6);
            for (double &v : list) v = real(b);
            call.attrs[attr.name] = list;
            break;
        }
        }
    }

    std::vector<Tensor> outputs;
    Status st = Status::OK();
    try {
        st = RunOp(call, &outputs);
    } catch (...) {
        __builtin_trap();  // the API promises Status, never an exception
    }
    if (st.ok()) {
        if (outputs.size() != spec.outputs.size()) __builtin_trap();
        for (const Tensor &out : outputs)
            if (out.num_elements() > 0 && out.data() == nullptr) __builtin_trap();
        // The framework path (RunOpInto, python/gradtune_tf): DescribeCall
        // reports the dtypes and shapes RunOp produced, and the same call
        // into caller memory of those shapes succeeds with the same bits
        // (FractionalAvgPool's unseeded sequences differ from call to call).
        CallInfo info;
        if (!DescribeCall(call, &info).ok()) __builtin_trap();
        if (info.output_shapes.size() != outputs.size() || info.output_dtypes.size() != outputs.size())
            __builtin_trap();
        std::vector<Tensor> mine;
        for (size_t i = 0; i < outputs.size(); i++) {
            if (info.output_shapes[i] != outputs[i].shape() || info.output_dtypes[i] != outputs[i].dtype())
                __builtin_trap();
            mine.emplace_back(info.output_dtypes[i], info.output_shapes[i]);
        }
        std::vector<TensorRef> views;
        for (Tensor &t : mine) views.push_back(t.ref());
        Status into = Status::OK();
        try {
            into = RunOpInto(call, views);
        } catch (...) {
            __builtin_trap();
        }
        if (!into.ok()) __builtin_trap();
        if (call.op != "FractionalAvgPool")
            for (size_t i = 0; i < outputs.size(); i++) {
                const size_t bytes = static_cast<size_t>(outputs[i].num_elements()) * DataTypeSize(outputs[i].dtype());
                if (bytes && std::memcmp(mine[i].data(), outputs[i].data(), bytes) != 0) __builtin_trap();
            }
    }
    return 0;
}
