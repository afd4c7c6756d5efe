// TensorFlow as a baseline for the benchmark report: the same suite call as
// TensorFlow's own op inside a tf.function, timed by bench/tf_timer.py in
// TensorFlow's virtual environment (.tf-venv, made by scripts/tf-venv.sh),
// one child process per TF CPU path, with samples interleaved with
// gradtune's. The child times its calls itself: the pipe's round trip is not
// part of TensorFlow's time. Between its requests the child is stopped
// (SIGSTOP), so that its threads cannot take the cores from other samples.
#pragma once

#include <sys/types.h>

#include <cstdio>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "gradtune/status.h"

namespace gradtune::tooling {

class TfBaseline {
public:
    // onednn: TF_ENABLE_ONEDNN_OPTS=1 (pip TF's default path) or 0 (Eigen).
    // nullptr and `why_not` where the child does not start.
    static std::unique_ptr<TfBaseline> start(const std::string &python, const std::string &script, bool onednn,
                                             int threads, std::string *why_not);
    ~TfBaseline();
    TfBaseline(const TfBaseline &) = delete;
    TfBaseline &operator=(const TfBaseline &) = delete;

    // Builds the call's tensors and its tf.function, and runs it once. false
    // (and `why_not`: TF's error) where TensorFlow refuses the call.
    bool setup(const nlohmann::json &call, std::string *why_not);
    // Runs the call `iterations` times; their total time in *elapsed_ms.
    Status run(int iterations, double *elapsed_ms);

private:
    TfBaseline() = default;
    bool request(const nlohmann::json &message, nlohmann::json *answer, std::string *why_not);
    pid_t pid_ = -1;
    FILE *to_child_ = nullptr, *from_child_ = nullptr;
};

}  // namespace gradtune::tooling
