// Reading integers from JSON files without undefined behaviour.
//
// nlohmann's get<int>() turns a floating-point number into an integer with a
// plain cast, which is undefined behaviour when the number is out of the
// integer's range: the JSON fuzzer found it with a suite row of
// "batch": 1.1e91. Every integer the tools read from a file (records, trials
// logs, suites, call specs) goes through these readers instead: the value must
// be a JSON integer within the type's range. Anything else is refused with
// json_range_error, a json::exception, so each reader's existing handler for
// malformed JSON reports it with the file and record it came from.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>

#include <nlohmann/json.hpp>

namespace gradtune::tooling {

class json_range_error : public nlohmann::json::exception {
public:
    explicit json_range_error(const std::string &what)
        : nlohmann::json::exception(0, ("[gradtune.json] " + what).c_str()) {}
};

// `value` as an Int; `what` names it in the error.
template <typename Int>
Int json_integer(const nlohmann::json &value, std::string_view what) {
    if (value.is_number_unsigned()) {
        const auto v = value.get<std::uint64_t>();
        if (std::in_range<Int>(v)) return static_cast<Int>(v);
    } else if (value.is_number_integer()) {
        const auto v = value.get<std::int64_t>();
        if (std::in_range<Int>(v)) return static_cast<Int>(v);
    }
    throw json_range_error(std::string(what) + " must be an integer in range, not " + value.dump());
}

// object[key] as an Int, or `otherwise` where the key is absent.
template <typename Int>
Int json_integer_or(const nlohmann::json &object, const char *key, Int otherwise) {
    if (!object.is_object()) throw json_range_error(std::string("reading '") + key + "' from a non-object");
    const auto found = object.find(key);
    return found == object.end() ? otherwise : json_integer<Int>(*found, key);
}

// An object of integers, e.g. a record's knobs or shape.
template <typename Int>
std::map<std::string, Int> json_integer_map(const nlohmann::json &object, std::string_view what) {
    if (!object.is_object()) throw json_range_error(std::string(what) + " must be an object, not " + object.dump());
    std::map<std::string, Int> map;
    for (const auto &[key, value] : object.items()) map[key] = json_integer<Int>(value, std::string(what) + "." + key);
    return map;
}

}  // namespace gradtune::tooling
