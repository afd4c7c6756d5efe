// `gradtune run OP name=value ... -o out.npy`: one op call on .npy tensors.
#pragma once

#include <string>
#include <vector>

namespace gradtune::tooling {

// Returns the process exit status: 0, or 2 for a call TF would reject (the
// error is printed as "<Kind>: <TF text>" and no output file is written).
int run_command(const std::string &op, const std::vector<std::string> &arguments,
                const std::vector<std::string> &outputs);

}  // namespace gradtune::tooling
