// Status: the result of every gradtune call. Errors carry TensorFlow's error
// kind and TensorFlow's message text, so a TF user recognises them. No
// gradtune function throws across the API or aborts the process.
#pragma once

#include <string>
#include <utility>

namespace gradtune {

enum class StatusCode {
    kOk,
    kInvalidArgument,  // TF's InvalidArgument: bad shapes, attrs or values
    kUnimplemented,    // TF's Unimplemented
    kUnavailable,      // the device asked for is not present (no GPU)
    kResourceExhausted,  // TF's ResourceExhausted: an output TF could not allocate either
    kInternal,         // a kernel failed; a bug in gradtune
};

// "InvalidArgument", "Unimplemented", ... as TF names its error classes.
const char *StatusCodeName(StatusCode code);

class Status {
public:
    Status() = default;  // OK
    Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}
    static Status OK() { return Status(); }

    bool ok() const { return code_ == StatusCode::kOk; }
    StatusCode code() const { return code_; }
    const std::string &message() const { return message_; }
    // "OK" or "<Kind>: <message>", e.g. "InvalidArgument: Stride must be > 0, but got 0".
    std::string ToString() const;

private:
    StatusCode code_ = StatusCode::kOk;
    std::string message_;
};

inline Status InvalidArgument(std::string message) {
    return Status(StatusCode::kInvalidArgument, std::move(message));
}
inline Status Unimplemented(std::string message) {
    return Status(StatusCode::kUnimplemented, std::move(message));
}
inline Status Internal(std::string message) {
    return Status(StatusCode::kInternal, std::move(message));
}
inline Status Unavailable(std::string message) {
    return Status(StatusCode::kUnavailable, std::move(message));
}
inline Status ResourceExhausted(std::string message) {
    return Status(StatusCode::kResourceExhausted, std::move(message));
}

}  // namespace gradtune

// Returns from the enclosing function when `expr` is an error Status.
#define GRADTUNE_RETURN_IF_ERROR(expr)            \
    do {                                          \
        ::gradtune::Status _status = (expr);      \
        if (!_status.ok()) return _status;        \
    } while (0)
