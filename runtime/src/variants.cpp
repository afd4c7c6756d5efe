#include "gradtune/variants.h"

#include "cpu_features.h"
#include "variant_table.h"

namespace gradtune {

namespace internal {

const char *running_knobs(const Kernel &kernel) {
    return *kernel.avx2_knobs && cpu_runs_avx2_baseline() ? kernel.avx2_knobs : kernel.knobs;
}

}  // namespace internal

std::vector<VariantInfo> Variants(std::string_view op) {
    const auto &table = internal::kernels();
    std::vector<VariantInfo> result;
    for (const internal::Kernel &k : table) {
        if (!op.empty() && op != k.op) continue;
        VariantInfo v;
        v.op = k.op;
        v.name = k.name;
        v.device = k.device;
        v.dtype = k.dtype;
        v.data_format = k.data_format;
        for (const auto &[name, value] : k.structure) v.structure[name] = value;
        v.knobs = internal::running_knobs(k);
        v.generic = k.generic();
        v.structure_default = k.structure_default;
        v.runs_here = !k.tuned_targets_only || internal::tuned_cpu_variants_usable();
        for (const internal::TunedShape &t : internal::tuned_shapes()) {
            if (&table[t.kernel] != &k) continue;
            TunedShapeInfo info{t.source_class, t.padding, {}, t.median_ms, t.generic_median_ms};
            for (const auto &[name, value] : t.shape) info.shape[name] = value;
            v.tuned_for.push_back(std::move(info));
        }
        result.push_back(std::move(v));
    }
    return result;
}

std::string TargetClass() { return internal::target_class(); }

}  // namespace gradtune
