// The structural parameters of the ops (docs/design.md section 4, rule 3): TF
// attributes that a variant may fix at compile time, 0 = taken from the call
// at run time.
// Each family of ops names its parameters once, in one X-macro table; from it
// come the schema's structure_params, a typed struct read as
// `f.filter_height` (Type::from(structure)), the map a runtime call reports
// for dispatch (Type{.filter_height = 3, ...}.values()) and the generators'
// GeneratorParams and Structure (halide_knobs.h). Halide-free.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "knob_space.h"

// A convolution's window.
#define GRADTUNE_WINDOW_STRUCTURE(PARAM) \
    PARAM(dilation_height) PARAM(dilation_width) PARAM(filter_height) PARAM(filter_width)
// DepthwiseConv2dNative and its two gradients (one stride for rows and columns).
#define GRADTUNE_DEPTHWISE_STRUCTURE(PARAM) PARAM(depth_multiplier) GRADTUNE_WINDOW_STRUCTURE(PARAM) PARAM(stride)
// Conv2D.
#define GRADTUNE_CONV2D_STRUCTURE(PARAM) GRADTUNE_WINDOW_STRUCTURE(PARAM) PARAM(stride_height) PARAM(stride_width)
// Conv2DBackpropInput and Conv2DBackpropFilter (grouped).
#define GRADTUNE_CONV2D_BACKPROP_STRUCTURE(PARAM) \
    GRADTUNE_WINDOW_STRUCTURE(PARAM) PARAM(groups) PARAM(stride_height) PARAM(stride_width)
// FractionalAvgPool and its gradient: 1 not overlapping, 2 overlapping.
#define GRADTUNE_POOLING_STRUCTURE(PARAM) PARAM(overlapping)

#define GRADTUNE_STRUCTURE_FIELD(param) int param = 0;
#define GRADTUNE_STRUCTURE_READ(param) typed.param = structure.fixed.at(#param);
#define GRADTUNE_STRUCTURE_NAME(param) #param,
#define GRADTUNE_STRUCTURE_ENTRY(param) {#param, param},
#define GRADTUNE_TYPED_STRUCTURE(Type, TABLE)                                                   \
    struct Type {                                                                               \
        TABLE(GRADTUNE_STRUCTURE_FIELD)                                                         \
        static Type from(const Structure &structure) {                                          \
            Type typed;                                                                         \
            TABLE(GRADTUNE_STRUCTURE_READ)                                                      \
            return typed;                                                                       \
        }                                                                                       \
        static std::vector<std::string> names() { return {TABLE(GRADTUNE_STRUCTURE_NAME)}; }    \
        std::map<std::string, int> values() const { return {TABLE(GRADTUNE_STRUCTURE_ENTRY)}; } \
    }

namespace gradtune {

GRADTUNE_TYPED_STRUCTURE(DepthwiseStructure, GRADTUNE_DEPTHWISE_STRUCTURE);
GRADTUNE_TYPED_STRUCTURE(Conv2DStructure, GRADTUNE_CONV2D_STRUCTURE);
GRADTUNE_TYPED_STRUCTURE(Conv2DBackpropStructure, GRADTUNE_CONV2D_BACKPROP_STRUCTURE);
GRADTUNE_TYPED_STRUCTURE(PoolingStructure, GRADTUNE_POOLING_STRUCTURE);

}  // namespace gradtune
