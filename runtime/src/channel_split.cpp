#include "channel_split.h"

#include <cstdlib>
#include <sstream>

namespace gradtune::internal {

int64_t output_channel_tile(const std::string &knobs) {
    std::istringstream words(knobs);
    std::string word;
    int64_t width = 0, vectors = 0;
    while (words >> word) {
        const size_t eq = word.find('=');
        if (eq == std::string::npos) continue;
        const std::string name = word.substr(0, eq);
        if (name == "vector_width") width = std::strtoll(word.c_str() + eq + 1, nullptr, 10);
        if (name == "vectors_per_tile") vectors = std::strtoll(word.c_str() + eq + 1, nullptr, 10);
    }
    return width * vectors;
}

int64_t split_output_channels(const CallInfo &info, Device device, int64_t tile) {
    if (info.op != "Conv2DBackpropFilter" || device != Device::cpu || info.data_format != "NHWC" ||
        info.structure.at("groups") != 1)
        return 0;
    const int64_t channels = info.shape.at("O");
    if (tile <= 0 || channels <= tile || channels % tile == 0) return 0;
    return channels - channels % tile;
}

}  // namespace gradtune::internal
