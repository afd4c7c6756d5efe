// libFuzzer target: `gradtune run` (tuner/run_command.cpp) with command lines
// built from the input. The input is lines: the first names the op ('#'
// and a byte: a registered op; else the text itself), then "name=value"
// arguments, where "@K" in a value stands for the K-th of a few small .npy
// files written at start-up, and "-oNAME" lines, each an output path inside a
// private directory ("-o" alone: an empty path; "-odir": a directory).
// A finding: a crash, a sanitizer report, an exception, an exit status other
// than 0 or 2, an output missing after 0, or anything left behind after 2 (an
// output or a temporary file), or after 0 anything but the outputs.
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "gradtune/op_call.h"
#include "npy.h"
#include "run_command.h"

namespace {

namespace fs = std::filesystem;
using namespace gradtune;

fs::path work_dir;
std::vector<std::string> npy_files;

void write(const std::string &name, const Tensor &t) {
    const std::string path = (work_dir / "inputs" / name).string();
    if (!tooling::write_npy(path, t).ok()) __builtin_trap();
    npy_files.push_back(path);
}

Tensor ramp(DataType dtype, std::vector<int64_t> shape) {
    Tensor t(dtype, std::move(shape));
    for (int64_t i = 0; i < t.num_elements(); i++) t.store(i, static_cast<double>(i % 7) - 3);
    return t;
}

std::vector<std::string> lines(const uint8_t *data, size_t size) {
    std::vector<std::string> out(1);
    for (size_t i = 0; i < size; i++) {
        if (data[i] == '\n') {
            out.emplace_back();
        } else {
            out.back().push_back(static_cast<char>(data[i]));
        }
    }
    return out;
}

// "@K" -> the K-th input file.
std::string expand(const std::string &value) {
    std::string out;
    for (size_t i = 0; i < value.size(); i++) {
        if (value[i] == '@' && i + 1 < value.size() && value[i + 1] >= '0' && value[i + 1] <= '9') {
            out += npy_files[static_cast<size_t>(value[i + 1] - '0') % npy_files.size()];
            i++;
        } else {
            out.push_back(value[i]);
        }
    }
    return out;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
    work_dir = fs::temp_directory_path() / ("gradtune-fuzz-cli-" + std::to_string(getpid()));
    fs::create_directories(work_dir / "inputs");
    fs::create_directories(work_dir / "out" / "dir");
    std::atexit([] { fs::remove_all(work_dir); });
    write("filter.npy", ramp(DataType::kFloat, {2, 2, 2, 2}));        // @0
    write("dy.npy", ramp(DataType::kFloat, {1, 1, 2, 4}));            // @1
    write("filter64.npy", ramp(DataType::kDouble, {2, 2, 2, 2}));     // @2
    write("input.npy", ramp(DataType::kFloat, {1, 4, 4, 2}));         // @3
    write("sizes.npy", Tensor::FromVector(DataType::kInt32, {4}, std::vector<int>{1, 2, 3, 2}));  // @4
    write("dy2.npy", ramp(DataType::kFloat, {1, 3, 3, 2}));           // @5
    write("seq.npy", Tensor::FromVector(DataType::kInt64, {4}, std::vector<int64_t>{0, 1, 3, 4}));  // @6
    write("half.npy", ramp(DataType::kHalf, {1, 4, 4, 2}));           // @7
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    std::vector<std::string> text = lines(data, size);
    std::string op = text[0];
    if (op.size() == 2 && op[0] == '#') {
        const std::vector<OpSpec> &ops = RegisteredOps();
        op = ops[static_cast<uint8_t>(op[1]) % ops.size()].name;
    }
    const fs::path out_dir = work_dir / "out";
    std::vector<std::string> arguments, outputs;
    for (size_t i = 1; i < text.size(); i++) {
        const std::string &line = text[i];
        if (line.rfind("-o", 0) == 0) {
            std::string name;
            for (char c : line.substr(2))
                if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '_') name.push_back(c);
            if (name == "." || name == "..") name = "dot";
            outputs.push_back(line.size() == 2 ? std::string() : (out_dir / name).string());
        } else {
            arguments.push_back(expand(line));
        }
    }
    int rc = 0;
    try {
        rc = tooling::run_command(op, arguments, outputs);
    } catch (...) {
        __builtin_trap();  // run_command reports through its exit status
    }
    if (rc != 0 && rc != 2) __builtin_trap();
    // What the run left in the output directory ("dir" is ours).
    std::vector<fs::path> left;
    for (const auto &entry : fs::directory_iterator(out_dir))
        if (entry.path().filename() != "dir") left.push_back(entry.path());
    if (rc == 2 && !left.empty()) __builtin_trap();  // a refusal writes nothing
    if (rc == 0) {
        for (const std::string &path : outputs)
            if (!fs::is_regular_file(path)) __builtin_trap();  // an output is missing
        for (const fs::path &path : left)  // anything else is a temporary left behind
            if (std::find(outputs.begin(), outputs.end(), path.string()) == outputs.end()) __builtin_trap();
    }
    for (const fs::path &path : left) fs::remove_all(path);
    return 0;
}
