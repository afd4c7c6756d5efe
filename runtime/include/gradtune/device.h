// Where a gradtune kernel runs.
#pragma once

#include <optional>
#include <string_view>

namespace gradtune {

enum class Device { cpu, cuda };

inline const char *to_string(Device device) {
    return device == Device::cpu ? "cpu" : "cuda";
}

inline std::optional<Device> device_from_string(std::string_view text) {
    if (text == "cpu") return Device::cpu;
    if (text == "cuda") return Device::cuda;
    return std::nullopt;
}

}  // namespace gradtune
