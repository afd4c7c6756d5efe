#include "npy.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <optional>
#include <fstream>
#include <sstream>

namespace gradtune::tooling {

namespace {

const char kMagic[] = "\x93NUMPY";

Status bad(const std::string &path, const std::string &why) {
    return InvalidArgument(path + ": not a supported .npy file: " + why);
}

// The dtype of a descr such as '<f4' and whether its bytes are big-endian.
std::optional<DataType> dtype_of_descr(const std::string &descr, bool *big_endian) {
    if (descr.size() != 3) return std::nullopt;
    const char order = descr[0];
    if (order != '<' && order != '>' && order != '=') return std::nullopt;
    *big_endian = order == '>';  // '=' is native: little-endian on every target gradtune builds for
    const std::string kind = descr.substr(1);
    if (kind == "f2") return DataType::kHalf;
    if (kind == "f4") return DataType::kFloat;
    if (kind == "f8") return DataType::kDouble;
    if (kind == "i4") return DataType::kInt32;
    if (kind == "i8") return DataType::kInt64;
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

// The header is a Python dict literal, e.g.
//   {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
// Parsed by hand, linearly (a regex over a long header overflowed the stack).
struct Header {
    std::string descr;
    bool fortran_order = false;
    std::vector<int64_t> shape;
};

std::string parse_header(const std::string &text, Header *h) {
    size_t i = 0;
    auto skip = [&] {
        while (i < text.size() && (text[i] == ' ' || text[i] == '\t' || text[i] == '\n' || text[i] == '\r')) i++;
    };
    auto quoted = [&](std::string *out) -> bool {
        skip();
        if (i >= text.size() || (text[i] != '\'' && text[i] != '"')) return false;
        const char quote = text[i++];
        const size_t end = text.find(quote, i);
        if (end == std::string::npos) return false;
        *out = text.substr(i, end - i);
        i = end + 1;
        return true;
    };
    skip();
    if (i >= text.size() || text[i++] != '{') return "the header is not a dict";
    bool have_descr = false, have_order = false, have_shape = false;
    for (;;) {
        skip();
        if (i < text.size() && text[i] == '}') break;
        std::string key;
        if (!quoted(&key)) return "malformed header";
        skip();
        if (i >= text.size() || text[i++] != ':') return "malformed header";
        skip();
        if (key == "descr") {
            if (!quoted(&h->descr)) return "descr is not a string";
            have_descr = true;
        } else if (key == "fortran_order") {
            if (text.compare(i, 4, "True") == 0) {
                h->fortran_order = true;
                i += 4;
            } else if (text.compare(i, 5, "False") == 0) {
                h->fortran_order = false;
                i += 5;
            } else {
                return "fortran_order is not True or False";
            }
            have_order = true;
        } else if (key == "shape") {
            if (i >= text.size() || text[i++] != '(') return "shape is not a tuple";
            for (;;) {
                skip();
                if (i < text.size() && text[i] == ')') {
                    i++;
                    break;
                }
                if (i >= text.size() || text[i] < '0' || text[i] > '9') return "a shape dimension is not a number";
                int64_t dim = 0;
                while (i < text.size() && text[i] >= '0' && text[i] <= '9') {
                    if (dim > (std::numeric_limits<int64_t>::max() - 9) / 10) return "a shape dimension is too large";
                    dim = dim * 10 + (text[i++] - '0');
                }
                if (i < text.size() && text[i] == 'L') i++;  // Python 2 longs
                h->shape.push_back(dim);
                skip();
                if (i < text.size() && text[i] == ',') {
                    i++;
                } else if (i < text.size() && text[i] == ')') {
                    continue;
                } else {
                    return "malformed shape";
                }
            }
            have_shape = true;
        } else {
            return "unknown header key '" + key + "'";
        }
        skip();
        if (i < text.size() && text[i] == ',') {
            i++;
        } else if (i >= text.size() || text[i] != '}') {
            return "malformed header";
        }
    }
    if (!have_descr) return "no descr";
    if (!have_order) return "no fortran_order";
    if (!have_shape) return "no shape";
    return "";
}

}  // namespace

Status read_npy(const std::string &path, Tensor *out) {
    std::ifstream in(path, std::ios::binary | std::ios::ate);
    if (!in) return InvalidArgument(path + ": cannot be read");
    const uint64_t file_size = static_cast<uint64_t>(in.tellg());
    in.seekg(0);
    char magic[6];
    in.read(magic, 6);
    if (!in || std::memcmp(magic, kMagic, 6) != 0) return bad(path, "no NUMPY magic");
    unsigned char version[2];
    in.read(reinterpret_cast<char *>(version), 2);
    if (!in) return bad(path, "truncated header");
    uint64_t header_len = 0, preamble = 10;
    if (version[0] == 1) {
        unsigned char len[2];
        in.read(reinterpret_cast<char *>(len), 2);
        header_len = len[0] | (len[1] << 8);
    } else if (version[0] == 2 || version[0] == 3) {
        unsigned char len[4];
        in.read(reinterpret_cast<char *>(len), 4);
        header_len = len[0] | (len[1] << 8) | (len[2] << 16) | (static_cast<uint64_t>(len[3]) << 24);
        preamble = 12;
    } else {
        return bad(path, "format version " + std::to_string(version[0]));
    }
    // Sizes are checked against the file before anything is allocated.
    if (!in || header_len > file_size - std::min(file_size, preamble)) return bad(path, "truncated header");
    std::string text(header_len, '\0');
    in.read(text.data(), static_cast<std::streamsize>(header_len));
    if (!in) return bad(path, "truncated header");

    Header header;
    if (std::string why = parse_header(text, &header); !why.empty()) return bad(path, why);
    bool big_endian = false;
    auto dtype = dtype_of_descr(header.descr, &big_endian);
    if (!dtype) return bad(path, "dtype " + header.descr + " (supported: float16/32/64, int32/64)");
    const uint64_t element_size = static_cast<uint64_t>(DataTypeSize(*dtype));
    uint64_t elements = 1;
    for (int64_t dim : header.shape) {
        if (dim != 0 && elements > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) / element_size /
                                        static_cast<uint64_t>(dim))
            return bad(path, "the shape holds more bytes than a tensor can");
        elements *= static_cast<uint64_t>(dim);
    }
    const uint64_t bytes = elements * element_size, data_bytes = file_size - preamble - header_len;
    if (bytes > data_bytes) return bad(path, "fewer data bytes than the shape needs");

    Tensor t(*dtype, header.shape);
    in.read(static_cast<char *>(t.data()), static_cast<std::streamsize>(bytes));
    if (static_cast<uint64_t>(in.gcount()) != bytes) return bad(path, "fewer data bytes than the shape needs");
    if (big_endian) {
        auto *p = static_cast<unsigned char *>(t.data());
        for (uint64_t e = 0; e < elements; e++) std::reverse(p + e * element_size, p + (e + 1) * element_size);
    }
    if (header.fortran_order && header.shape.size() > 1) {
        // Column-major on disk (what np.save writes for a transposed array):
        // element (i0, i1, ...) sits at i0 + d0 * (i1 + d1 * (...)).
        Tensor c_order(*dtype, header.shape);
        const auto *from = static_cast<const unsigned char *>(t.data());
        auto *to = static_cast<unsigned char *>(c_order.data());
        const size_t rank = header.shape.size();
        std::vector<int64_t> index(rank, 0);
        for (uint64_t e = 0; e < elements; e++) {  // e walks C order
            uint64_t f = 0;
            for (size_t d = rank; d-- > 0;) f = f * header.shape[d] + index[d];
            std::memcpy(to + e * element_size, from + f * element_size, element_size);
            for (size_t d = rank; d-- > 0;) {
                if (++index[d] < header.shape[d]) break;
                index[d] = 0;
            }
        }
        t = std::move(c_order);
    }
    *out = std::move(t);
    return Status::OK();
}

Tensor with_dtype(const Tensor &t, DataType dtype) {
    Tensor converted(dtype, t.shape());
    for (int64_t i = 0; i < t.num_elements(); i++) converted.store(i, t.load(i));
    return converted;
}

Status write_npy(const std::string &path, const Tensor &t) {
    // No .npy bfloat16: widen exactly to float32.
    const Tensor data = t.dtype() == DataType::kBFloat16 ? with_dtype(t, DataType::kFloat) : t;
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
    // Checked after the close: a full disk shows only when the buffer is flushed.
    out.close();
    if (!out) return InvalidArgument(path + ": write failed");
    return Status::OK();
}

}  // namespace gradtune::tooling
