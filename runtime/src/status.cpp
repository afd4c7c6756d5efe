#include "gradtune/status.h"

namespace gradtune {

const char *StatusCodeName(StatusCode code) {
    switch (code) {
    case StatusCode::kOk: return "OK";
    case StatusCode::kInvalidArgument: return "InvalidArgument";
    case StatusCode::kUnimplemented: return "Unimplemented";
    case StatusCode::kUnavailable: return "Unavailable";
    case StatusCode::kInternal: return "Internal";
    case StatusCode::kResourceExhausted: return "ResourceExhausted";
    }
    return "Unknown";
}

std::string Status::ToString() const {
    if (ok()) return "OK";
    return std::string(StatusCodeName(code_)) + ": " + message_;
}

}  // namespace gradtune
