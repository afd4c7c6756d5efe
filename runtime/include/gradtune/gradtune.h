// gradtune: tuned kernels for TensorFlow's convolution and pooling gradients.
// Link libgradtune.a (plus -lpthread -ldl); no libHalide is needed.
#pragma once

#include "gradtune/conv2d.h"
#include "gradtune/conv2d_backprop_filter.h"
#include "gradtune/conv2d_backprop_input.h"
#include "gradtune/depthwise_conv2d_native.h"
#include "gradtune/depthwise_conv2d_native_backprop_filter.h"
#include "gradtune/depthwise_conv2d_native_backprop_input.h"
#include "gradtune/device.h"
#include "gradtune/fractional_avg_pool.h"
#include "gradtune/fractional_avg_pool_grad.h"
#include "gradtune/op_call.h"
#include "gradtune/run_options.h"
#include "gradtune/status.h"
#include "gradtune/tensor.h"
#include "gradtune/variants.h"
