// NumPy .npy files (format versions 1-3; little- or big-endian; C or Fortran
// order, as np.save writes them): the tensor format of `gradtune run`.
// bfloat16 has no .npy dtype: such tensors travel as float32 files. Every
// size in the header is checked against the file before memory is allocated.
#pragma once

#include <string>

#include "gradtune/status.h"
#include "gradtune/tensor.h"

namespace gradtune::tooling {

Status read_npy(const std::string &path, Tensor *out);
// bfloat16 tensors are written as float32.
Status write_npy(const std::string &path, const Tensor &t);
// `t` in `dtype`, element by element: exact where `dtype` is wider, rounded
// to nearest even where narrower (a bfloat16 tensor read back from its
// float32 file is exact).
Tensor with_dtype(const Tensor &t, DataType dtype);

}  // namespace gradtune::tooling
