#include "run_command.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <deque>
#include <filesystem>
#include <iostream>
#include <set>
#include <sstream>

#include <unistd.h>

#include "gradtune/op_call.h"
#include "npy.h"

namespace gradtune::tooling {

namespace {

// "1,2,3" -> {"1", "2", "3"}; "" -> {}. Every element must be there: "1,,3"
// and "1,2," are refused (a typo would otherwise change the shape).
Status split_list(const std::string &text, std::vector<std::string> *parts) {
    parts->clear();
    if (text.empty()) return Status::OK();
    size_t start = 0;
    for (;;) {
        const size_t comma = text.find(',', start);
        parts->push_back(text.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
        if (parts->back().empty()) return InvalidArgument("an empty element in the list '" + text + "'");
        if (comma == std::string::npos) return Status::OK();
        start = comma + 1;
    }
}

bool ends_with(const std::string &s, const std::string &suffix) {
    return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// A name for the temporary that becomes `path`: hidden, in the same directory
// (so that the rename cannot cross file systems), unique to this process and
// never the name of an existing file, so that no file of the user's (another
// output's name included) is overwritten on the way.
std::string temporary_beside(const std::string &path) {
    const std::filesystem::path target(path);
    for (unsigned n = 0;; n++) {
        std::filesystem::path candidate = target;
        candidate.replace_filename("." + target.filename().string() + ".gradtune-" + std::to_string(getpid()) +
                                   "-" + std::to_string(n) + ".tmp");
        std::error_code error;
        const std::filesystem::file_status status = std::filesystem::symlink_status(candidate, error);
        // On an error (an unreadable directory), writing the name reports it.
        if (error || status.type() == std::filesystem::file_type::not_found) return candidate.string();
    }
}

Status parse_int(const std::string &text, int64_t *value) {
    try {
        size_t used = 0;
        *value = std::stoll(text, &used);
        if (used != text.size()) throw std::invalid_argument(text);
    } catch (const std::exception &) {
        return InvalidArgument("not an integer: '" + text + "'");
    }
    return Status::OK();
}

Status parse_float(const std::string &text, double *value) {
    try {
        size_t used = 0;
        *value = std::stod(text, &used);
        if (used != text.size()) throw std::invalid_argument(text);
    } catch (const std::exception &) {
        return InvalidArgument("not a number: '" + text + "'");
    }
    return Status::OK();
}

Status parse_attr(const AttrSpec &attr, const std::string &text, AttrValue *out) {
    switch (attr.kind) {
    case AttrKind::kInt: {
        int64_t v;
        GRADTUNE_RETURN_IF_ERROR(parse_int(text, &v));
        *out = v;
        return Status::OK();
    }
    case AttrKind::kFloat: {
        double v;
        GRADTUNE_RETURN_IF_ERROR(parse_float(text, &v));
        *out = v;
        return Status::OK();
    }
    case AttrKind::kBool:
        if (text != "true" && text != "false") return InvalidArgument(attr.name + " must be true or false");
        *out = text == "true";
        return Status::OK();
    case AttrKind::kString: *out = text; return Status::OK();
    case AttrKind::kIntList: {
        std::vector<int64_t> list;
        std::vector<std::string> parts;
        GRADTUNE_RETURN_IF_ERROR(split_list(text, &parts));
        for (const std::string &part : parts) {
            int64_t v;
            GRADTUNE_RETURN_IF_ERROR(parse_int(part, &v));
            list.push_back(v);
        }
        *out = list;
        return Status::OK();
    }
    case AttrKind::kFloatList: {
        std::vector<double> list;
        std::vector<std::string> parts;
        GRADTUNE_RETURN_IF_ERROR(split_list(text, &parts));
        for (const std::string &part : parts) {
            double v;
            GRADTUNE_RETURN_IF_ERROR(parse_float(part, &v));
            list.push_back(v);
        }
        *out = list;
        return Status::OK();
    }
    }
    return InvalidArgument("unknown attr kind");
}

// A tensor from `name=value`: a .npy file, or an inline comma list (a 1-D
// tensor of the input's fixed dtype, e.g. input_sizes=1,8,8,3).
Status parse_tensor(const std::string &value, const std::string &fixed_dtype, Tensor *out) {
    if (ends_with(value, ".npy")) return read_npy(value, out);
    const DataType dtype = fixed_dtype == "int64" ? DataType::kInt64 : DataType::kInt32;
    std::vector<int64_t> values;
    std::vector<std::string> parts;
    GRADTUNE_RETURN_IF_ERROR(split_list(value, &parts));
    for (const std::string &part : parts) {
        int64_t v;
        GRADTUNE_RETURN_IF_ERROR(parse_int(part, &v));
        if (dtype == DataType::kInt32 && (v < INT32_MIN || v > INT32_MAX))
            return InvalidArgument(part + " does not fit in the int32 elements of '" + value + "'");
        values.push_back(v);
    }
    *out = Tensor::FromVector(dtype, {static_cast<int64_t>(values.size())}, values);
    return Status::OK();
}

Status build_call(const OpSpec &spec, const std::vector<std::string> &arguments, OpCall *call,
                  std::deque<Tensor> *storage, RunOptions *options) {
    call->op = spec.name;
    std::optional<DataType> t_override;
    std::set<std::string> given;
    for (const std::string &arg : arguments) {
        const auto eq = arg.find('=');
        if (eq == std::string::npos) return InvalidArgument("expected name=value, got '" + arg + "'");
        const std::string name = arg.substr(0, eq), value = arg.substr(eq + 1);
        if (!given.insert(name).second) return InvalidArgument(name + "= is given twice");
        if (name == "device") {
            auto device = device_from_string(value);
            if (!device) return InvalidArgument("device must be cpu or cuda");
            options->device = *device;
            continue;
        }
        if (name == "variant") {
            options->variant = value;
            continue;
        }
        if (name == "T") {
            t_override = DataTypeFromString(value);
            if (!t_override) return InvalidArgument("unknown dtype T=" + value);
            continue;
        }
        auto input = std::find(spec.inputs.begin(), spec.inputs.end(), name);
        if (input != spec.inputs.end()) {
            const size_t index = static_cast<size_t>(input - spec.inputs.begin());
            const std::string type = index < spec.input_types.size() ? spec.input_types[index] : "T";
            Tensor t;
            GRADTUNE_RETURN_IF_ERROR(parse_tensor(value, type, &t));
            storage->push_back(std::move(t));
            call->inputs[name] = storage->back().cref();
            continue;
        }
        const AttrSpec *attr = nullptr;
        for (const AttrSpec &a : spec.attrs)
            if (a.name == name) attr = &a;
        if (!attr) return InvalidArgument(spec.name + " has no input or attr named '" + name + "'");
        AttrValue v;
        GRADTUNE_RETURN_IF_ERROR(parse_attr(*attr, value, &v));
        call->attrs[name] = v;
    }
    if (t_override) {
        // T=bfloat16 (or another T): the T-typed inputs, read from .npy files of
        // another float type, are converted (rounding to nearest even).
        for (size_t i = 0; i < spec.inputs.size(); i++) {
            const std::string type = i < spec.input_types.size() ? spec.input_types[i] : "T";
            auto it = call->inputs.find(spec.inputs[i]);
            if (type != "T" || it == call->inputs.end() || it->second.dtype == *t_override) continue;
            Tensor converted(*t_override, it->second.shape);
            for (int64_t k = 0; k < converted.num_elements(); k++) converted.store(k, LoadElement(it->second, k));
            storage->push_back(std::move(converted));
            it->second = storage->back().cref();
        }
    }
    return Status::OK();
}

}  // namespace

int run_command(const std::string &op, const std::vector<std::string> &arguments,
                const std::vector<std::string> &output_paths) {
    const OpSpec *spec = FindOpSpec(op);
    if (!spec) {
        std::cerr << "InvalidArgument: Op type not registered '" << op << "'\n";
        return 2;
    }
    OpCall call;
    std::deque<Tensor> storage;
    RunOptions options;
    std::vector<Tensor> outputs;
    Status st = build_call(*spec, arguments, &call, &storage, &options);
    if (st.ok() && output_paths.size() > spec->outputs.size())
        st = InvalidArgument(op + " has " + std::to_string(spec->outputs.size()) + " output(s), got " +
                             std::to_string(output_paths.size()) + " -o");
    // Refuse output paths that cannot become files before any work is done.
    // The std::error_code overloads: a name the file system refuses (one
    // longer than NAME_MAX, say) is the user's error, not an exception.
    for (size_t i = 0; st.ok() && i < output_paths.size(); i++) {
        const std::string &path = output_paths[i];
        std::error_code error;
        if (path.empty()) st = InvalidArgument("-o needs a file name");
        else if (std::filesystem::is_directory(path, error)) st = InvalidArgument("-o " + path + ": is a directory");
        else if (error && error != std::errc::no_such_file_or_directory)
            st = InvalidArgument("-o " + path + ": " + error.message());
        for (size_t j = 0; st.ok() && j < i; j++)
            if (std::filesystem::absolute(output_paths[j], error) == std::filesystem::absolute(path, error))
                st = InvalidArgument("-o " + path + " is given twice");
    }
    if (st.ok()) st = RunOp(call, &outputs, options);
    if (!st.ok()) {
        std::cerr << st.ToString() << "\n";
        return 2;
    }
    // Write every output to a temporary name first: all or nothing.
    std::vector<std::string> written;
    for (size_t i = 0; i < output_paths.size(); i++) {
        const std::string temporary = temporary_beside(output_paths[i]);
        st = write_npy(temporary, outputs[i]);
        if (!st.ok()) {
            for (const std::string &w : written) std::remove(w.c_str());
            std::remove(temporary.c_str());
            std::cerr << st.ToString() << "\n";
            return 2;
        }
        written.push_back(temporary);
    }
    for (size_t i = 0; i < output_paths.size(); i++) {
        std::error_code error;
        std::filesystem::rename(written[i], output_paths[i], error);
        if (error) {
            for (size_t j = i; j < written.size(); j++) std::remove(written[j].c_str());
            std::cerr << "InvalidArgument: " << output_paths[i] << ": " << error.message() << "\n";
            return 2;
        }
    }
    if (output_paths.empty()) {
        for (size_t i = 0; i < outputs.size(); i++)
            std::cout << spec->outputs[i] << ": " << DataTypeName(outputs[i].dtype()) << " "
                      << ShapeString(outputs[i].shape()) << "\n";
    }
    return 0;
}

}  // namespace gradtune::tooling
