#include "call_json.h"

#include <algorithm>
#include <new>
#include <random>
#include <stdexcept>

#include "json_integer.h"

namespace gradtune::tooling {

using nlohmann::json;

namespace {

// The readers below throw where a JSON value has the wrong type (nlohmann's
// type_error, e.g. "dtype": 5) and Tensor where a shape is past memory; the
// Status functions of this file turn both into a refusal.
template <typename F>
Status refusing_exceptions(const char *what, F &&body) {
    try {
        return body();
    } catch (const json::exception &e) {
        return InvalidArgument(std::string(what) + ": " + e.what());
    } catch (const std::bad_alloc &) {
        return ResourceExhausted(std::string(what) + ": a tensor too large to allocate");
    } catch (const std::length_error &e) {
        return ResourceExhausted(std::string(what) + ": " + e.what());
    }
}

Status tensor_from_json_unguarded(const json &j, Tensor *out) {
    if (!j.is_object() || !j.contains("dtype")) return InvalidArgument("a tensor needs a dtype: " + j.dump());
    auto dtype = DataTypeFromString(j.at("dtype").get<std::string>());
    if (!dtype) return InvalidArgument("unknown dtype " + j.at("dtype").dump());
    std::vector<int64_t> shape;
    if (j.contains("shape")) {
        const json &dims = j.at("shape");
        if (!dims.is_array()) return InvalidArgument("a tensor's shape is a list: " + j.dump().substr(0, 200));
        for (const json &d : dims) shape.push_back(json_integer<int64_t>(d, "a dimension"));
    } else if (j.contains("values")) {
        shape = {static_cast<int64_t>(j.at("values").size())};
    } else {
        return InvalidArgument("a tensor needs a shape or values: " + j.dump());
    }
    for (int64_t d : shape)
        if (d < 0) return InvalidArgument("negative dimension in " + j.dump());
    Tensor t(*dtype, shape);
    if (j.contains("values")) {
        const json &values = j.at("values");
        if (static_cast<int64_t>(values.size()) != t.num_elements())
            return InvalidArgument("values do not match the shape in " + j.dump().substr(0, 200));
        for (int64_t i = 0; i < t.num_elements(); i++) {
            if (*dtype == DataType::kInt64) {
                t.as<int64_t>()[i] = json_integer<int64_t>(values[i], "an int64 value");
            } else {
                t.store(i, values[i].get<double>());
            }
        }
    }
    *out = std::move(t);
    return Status::OK();
}

}  // namespace

Status tensor_from_json(const json &j, Tensor *out) {
    return refusing_exceptions("a malformed tensor", [&] { return tensor_from_json_unguarded(j, out); });
}

json tensor_to_json(const Tensor &t) {
    json values = json::array();
    for (int64_t i = 0; i < t.num_elements(); i++) {
        if (t.dtype() == DataType::kInt64) {
            values.push_back(t.as<int64_t>()[i]);
        } else if (t.dtype() == DataType::kInt32) {
            values.push_back(t.as<int32_t>()[i]);
        } else {
            values.push_back(t.load(i));
        }
    }
    return {{"dtype", DataTypeName(t.dtype())}, {"shape", t.shape()}, {"values", values}};
}

namespace {

Status attr_from_json_unguarded(const AttrSpec &attr, const json &v, AttrValue *out) {
    auto wrong = [&] { return InvalidArgument("attr '" + attr.name + "' has the wrong type: " + v.dump()); };
    switch (attr.kind) {
    case AttrKind::kInt:
        if (!v.is_number_integer()) return wrong();
        *out = v.get<int64_t>();
        break;
    case AttrKind::kFloat:
        if (!v.is_number()) return wrong();
        *out = v.get<double>();
        break;
    case AttrKind::kBool:
        if (!v.is_boolean()) return wrong();
        *out = v.get<bool>();
        break;
    case AttrKind::kString:
        if (!v.is_string()) return wrong();
        *out = v.get<std::string>();
        break;
    case AttrKind::kIntList: {
        if (!v.is_array()) return wrong();
        std::vector<int64_t> list;
        for (const json &e : v) {
            if (!e.is_number_integer()) return wrong();
            list.push_back(e.get<int64_t>());
        }
        *out = list;
        break;
    }
    case AttrKind::kFloatList: {
        if (!v.is_array()) return wrong();
        std::vector<double> list;
        for (const json &e : v) {
            if (!e.is_number()) return wrong();
            list.push_back(e.get<double>());
        }
        *out = list;
        break;
    }
    }
    return Status::OK();
}

}  // namespace

Status attr_from_json(const AttrSpec &attr, const json &v, AttrValue *out) {
    return refusing_exceptions("a malformed attr", [&] { return attr_from_json_unguarded(attr, v, out); });
}

namespace {

Status materialise_unguarded(const json &spec, uint32_t seed, MaterialisedCall *out, Fill fill) {
    const std::string op = spec.value("op", "");
    const OpSpec *op_spec = FindOpSpec(op);
    if (!op_spec) return InvalidArgument("no op '" + op + "' in this build");
    out->call = OpCall{op, {}, {}};
    out->storage.clear();
    std::mt19937 rng(seed);
    const json inputs = spec.value("inputs", json::object());
    const json attrs = spec.value("attrs", json::object());
    for (const auto &[name, j] : inputs.items()) {
        if (std::find(op_spec->inputs.begin(), op_spec->inputs.end(), name) == op_spec->inputs.end())
            return InvalidArgument(op + " has no input '" + name + "'");
        Tensor t;
        GRADTUNE_RETURN_IF_ERROR(tensor_from_json(j, &t));
        if (!j.contains("values") && fill == Fill::kRandom) {
            // One 32-bit draw per element (an N=32 call holds 10^8 of them:
            // the tuner materialises every shape of every batch): reals
            // uniform in [-1, 1) on a 2^-23 grid, integers in [-4, 4].
            const bool integer = t.dtype() == DataType::kInt32 || t.dtype() == DataType::kInt64;
            const int64_t elements = t.num_elements();
            if (t.dtype() == DataType::kFloat) {
                float *data = static_cast<float *>(t.data());
                for (int64_t i = 0; i < elements; i++) data[i] = static_cast<float>(rng() >> 9) * 0x1p-22f - 1.0f;
            } else {
                for (int64_t i = 0; i < elements; i++)
                    t.store(i, integer ? static_cast<double>(rng() % 9) - 4 : (rng() >> 9) * 0x1p-22 - 1.0);
            }
        }
        out->storage.push_back(std::move(t));
        out->call.inputs[name] = out->storage.back().cref();
    }
    for (const auto &[name, v] : attrs.items()) {
        const AttrSpec *attr = nullptr;
        for (const AttrSpec &a : op_spec->attrs)
            if (a.name == name) attr = &a;
        if (!attr) return InvalidArgument(op + " has no attr '" + name + "'");
        AttrValue value;
        GRADTUNE_RETURN_IF_ERROR(attr_from_json(*attr, v, &value));
        out->call.attrs[name] = value;
    }
    return Status::OK();
}

}  // namespace

Status materialise(const json &spec, uint32_t seed, MaterialisedCall *out, Fill fill) {
    return refusing_exceptions("a malformed call", [&] { return materialise_unguarded(spec, seed, out, fill); });
}

}  // namespace gradtune::tooling
