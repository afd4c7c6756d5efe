#include "halide_call.h"

#include <dlfcn.h>

#include <climits>
#include <cstdio>
#include <cstring>
#include <mutex>

#include "cpu_features.h"
#include "journal.h"
#include "thread_pool.h"

namespace gradtune::internal {

namespace {

halide_type_t halide_type(DataType dtype) {
    switch (dtype) {
    case DataType::kHalf: return halide_type_t(halide_type_float, 16);
    case DataType::kBFloat16: return halide_type_t(halide_type_bfloat, 16);
    case DataType::kFloat: return halide_type_t(halide_type_float, 32);
    case DataType::kDouble: return halide_type_t(halide_type_float, 64);
    case DataType::kInt32: return halide_type_t(halide_type_int, 32);
    case DataType::kInt64: return halide_type_t(halide_type_int, 64);
    }
    return halide_type_t(halide_type_float, 32);
}

void halide_error_to_context(void *user_context, const char *message) {
    if (user_context) {
        static_cast<CallContext *>(user_context)->error += message;
    } else {
        std::fprintf(stderr, "gradtune: Halide runtime: %s\n", message);
    }
}

// Every kernel's parallel loop: on the threads the call lends, else on
// gradtune's pool. Kernels run with their call's CallContext as user_context.
int do_par_for(void *user_context, halide_task_t task, int min, int size, uint8_t *closure) {
    if (user_context) {
        if (ParallelRunner *runner = static_cast<CallContext *>(user_context)->parallel)
            return runner_do_par_for(*runner, user_context, task, min, size, closure);
    }
    return pool_do_par_for(user_context, task, min, size, closure);
}

}  // namespace

HalideBuffer::HalideBuffer(DataType dtype, const std::vector<int64_t> &shape, const void *data,
                           const std::array<int, 4> &order, int64_t pitch) {
    std::array<int64_t, 4> row_major_stride{};
    int64_t stride = 1;
    for (int d = 3; d >= 0; d--) {
        row_major_stride[d] = stride;
        stride *= d == 3 && pitch > 0 ? pitch : shape[d];
    }
    for (int i = 0; i < 4; i++) {
        dims_[i].min = 0;
        dims_[i].extent = static_cast<int32_t>(shape[order[i]]);
        dims_[i].stride = static_cast<int32_t>(row_major_stride[order[i]]);
        dims_[i].flags = 0;
    }
    buffer_.host = static_cast<uint8_t *>(const_cast<void *>(data));
    buffer_.type = halide_type(dtype);
    buffer_.dimensions = 4;
    buffer_.dim = dims_.data();
    // Inputs live in host memory; CUDA kernels copy them to the device.
    buffer_.flags = halide_buffer_flag_host_dirty;
}

void install_halide_handlers() {
    static std::once_flag once;
    std::call_once(once, [] {
        halide_set_error_handler(&halide_error_to_context);
        halide_set_custom_do_par_for(&do_par_for);  // thread_pool.h: why
    });
    limit_cpu_features();
}

bool cuda_available(std::string *why) {
    // Halide's CUDA runtime loads libcuda itself at first use; ask the driver
    // first so that a machine without a GPU gets a clear answer.
    static std::once_flag once;
    static bool available = false;
    static std::string reason;
    std::call_once(once, [] {
        void *lib = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_GLOBAL);
        if (!lib) lib = dlopen("libcuda.so", RTLD_LAZY | RTLD_GLOBAL);
        if (!lib) {
            reason = "no CUDA driver (libcuda.so) on this machine";
            return;
        }
        using InitFn = int (*)(unsigned);
        using CountFn = int (*)(int *);
        auto init = reinterpret_cast<InitFn>(dlsym(lib, "cuInit"));
        auto count = reinterpret_cast<CountFn>(dlsym(lib, "cuDeviceGetCount"));
        int devices = 0;
        if (!init || !count || init(0) != 0 || count(&devices) != 0 || devices == 0) {
            reason = "the CUDA driver reports no usable GPU";
            return;
        }
        available = true;
    });
    if (!available && why) *why = reason;
    return available;
}

Status finish_cuda_call(CallContext *context, halide_buffer_t *output,
                        std::initializer_list<halide_buffer_t *> inputs) {
    int result = halide_copy_to_host(context, output);
    for (halide_buffer_t *b : inputs) halide_device_free(context, b);
    halide_device_free(context, output);
    if (result != 0) return Internal("copying the CUDA result to the host failed: " + context->error);
    return Status::OK();
}

Status kernel_status(int result, const CallContext &context, const std::string &kernel) {
    if (result == 0) return Status::OK();
    return Internal("kernel " + kernel + " failed (Halide error " + std::to_string(result) + "): " + context.error);
}

bool output_without_kernel(const TensorRef &output, bool zeros) {
    if (output.num_elements() == 0) return true;
    if (!zeros) return false;
    std::memset(output.data, 0, static_cast<size_t>(output.num_elements()) * DataTypeSize(output.dtype));
    return true;
}

Status check_int32_elements(std::initializer_list<int64_t> element_counts) {
    for (int64_t n : element_counts)
        if (n > INT32_MAX) return Unimplemented("gradtune: tensors of 2**31 or more elements are not supported");
    return Status::OK();
}

Status KernelCall::begin(const CallInfo &info, const RunOptions &options) {
    info_ = &info;
    device_ = options.device;
    context_.parallel = options.parallel;
    GRADTUNE_RETURN_IF_ERROR(select_kernel(info, options, &selection_));
    if (device_ == Device::cuda) {
        std::string why;
        if (!cuda_available(&why)) return Unavailable("device=cuda: " + why);
    }
    install_halide_handlers();
    start_ = std::chrono::steady_clock::now();
    return Status::OK();
}

Status KernelCall::finish(int result, halide_buffer_t *output, std::initializer_list<halide_buffer_t *> inputs) {
    Status status = kernel_status(result, context_, selection_.name);
    if (status.ok() && device_ == Device::cuda) status = finish_cuda_call(&context_, output, inputs);
    if (unreported_here()) return status;  // a probe's run (or a warm-up): the call's own run reports
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start_).count();
    if (verbose_enabled()) report_call(*info_, device_, selection_, ms);
    if (status.ok() && journal_enabled()) journal_call(*info_, device_, selection_, ms);
    return status;
}

}  // namespace gradtune::internal
