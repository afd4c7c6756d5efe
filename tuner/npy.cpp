#include "npy.h"

#include <cstring>
#include <fstream>
#include <regex>
#include <sstream>

namespace gradtune::tooling {

namespace {

const char kMagic[] = "\x93NUMPY";

Status bad(const std::string &path, const std::string &why) {
    return InvalidArgument(path + ": not a supported .npy file: " + why);
}

std::optional<DataType> dtype_of_descr(const std::string &descr) {
    if (descr == "<f2") return DataType::kHalf;
    if (descr == "<f4") return DataType::kFloat;
    if (descr == "<f8") return DataType::kDouble;
    if (descr == "<i4") return DataType::kInt32;
    if (descr == "<i8") return DataType::kInt64;
    return std::nullopt;
}

const char *descr_of(DataType dtype) {
    switch (dtype) {
    case DataType::kHalf: return "<f2";
    case DataType::kFloat:
    case DataType::kBFloat16: return "<f4";
    case DataType::kDouble: return "<f8";
    case DataType::kInt32: return "<i4";
    case DataType::kInt64: return "<i8";
    }
    return "<f4";
}

}  // namespace

Status read_npy(const std::string &path, Tensor *out) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return InvalidArgument(path + ": cannot be read");
    char magic[6];
    in.read(magic, 6);
    if (!in || std::memcmp(magic, kMagic, 6) != 0) return bad(path, "no NUMPY magic");
    unsigned char version[2];
    in.read(reinterpret_cast<char *>(version), 2);
    uint32_t header_len = 0;
    if (version[0] == 1) {
        unsigned char len[2];
        in.read(reinterpret_cast<char *>(len), 2);
        header_len = len[0] | (len[1] << 8);
    } else if (version[0] == 2 || version[0] == 3) {
        unsigned char len[4];
        in.read(reinterpret_cast<char *>(len), 4);
        header_len = len[0] | (len[1] << 8) | (len[2] << 16) | (static_cast<uint32_t>(len[3]) << 24);
    } else {
        return bad(path, "format version " + std::to_string(version[0]));
    }
    std::string header(header_len, '\0');
    in.read(header.data(), header_len);
    if (!in) return bad(path, "truncated header");

    std::smatch m;
    if (!std::regex_search(header, m, std::regex("'descr':\\s*'([^']*)'"))) return bad(path, "no descr");
    const std::string descr = m[1];
    auto dtype = dtype_of_descr(descr);
    if (!dtype) return bad(path, "dtype " + descr + " (supported: float16/32/64, int32/64, little-endian)");
    if (std::regex_search(header, m, std::regex("'fortran_order':\\s*True"))) return bad(path, "Fortran order");
    if (!std::regex_search(header, m, std::regex("'shape':\\s*\\(([^)]*)\\)"))) return bad(path, "no shape");
    std::vector<int64_t> shape;
    std::stringstream dims(m[1].str());
    for (std::string d; std::getline(dims, d, ',');) {
        d.erase(0, d.find_first_not_of(" "));
        if (!d.empty()) shape.push_back(std::stoll(d));
    }
    Tensor t(*dtype, shape);
    const size_t bytes = static_cast<size_t>(t.num_elements()) * DataTypeSize(*dtype);
    in.read(static_cast<char *>(t.data()), static_cast<std::streamsize>(bytes));
    if (static_cast<size_t>(in.gcount()) != bytes) return bad(path, "fewer data bytes than the shape needs");
    *out = std::move(t);
    return Status::OK();
}

Status write_npy(const std::string &path, const Tensor &t) {
    Tensor data = t;
    if (t.dtype() == DataType::kBFloat16) {  // no .npy bfloat16: widen exactly to float32
        data = Tensor(DataType::kFloat, t.shape());
        for (int64_t i = 0; i < t.num_elements(); i++) data.store(i, t.load(i));
    }
    std::ostringstream shape;
    shape << "(";
    for (size_t i = 0; i < t.shape().size(); i++) shape << t.shape()[i] << (t.shape().size() == 1 || i + 1 < t.shape().size() ? "," : "");
    shape << ")";
    std::string header = "{'descr': '" + std::string(descr_of(data.dtype())) +
                         "', 'fortran_order': False, 'shape': " + shape.str() + ", }";
    // Pad so that the data starts on a 64-byte boundary, header ends in '\n'.
    const size_t unpadded = 10 + header.size() + 1;
    header.append((64 - unpadded % 64) % 64, ' ');
    header.push_back('\n');
    std::ofstream out(path, std::ios::binary);
    if (!out) return InvalidArgument(path + ": cannot be written");
    out.write(kMagic, 6);
    const unsigned char version[2] = {1, 0};
    out.write(reinterpret_cast<const char *>(version), 2);
    const unsigned char len[2] = {static_cast<unsigned char>(header.size() & 0xff),
                                  static_cast<unsigned char>(header.size() >> 8)};
    out.write(reinterpret_cast<const char *>(len), 2);
    out.write(header.data(), static_cast<std::streamsize>(header.size()));
    out.write(static_cast<const char *>(data.data()),
              static_cast<std::streamsize>(data.num_elements() * DataTypeSize(data.dtype())));
    if (!out) return InvalidArgument(path + ": write failed");
    return Status::OK();
}

}  // namespace gradtune::tooling
