// SPDX-License-Identifier: Apache-2.0
// Which nodes to leave in FP32 (ember-quantize --keep-fp32 auto): measured, not guessed. The
// error of a QDQ model is the largest difference between its outputs and the FP32 model's on the
// samples, relative to each output's range there (max |y - y_fp32| / (max y_fp32 - min y_fp32),
// the largest over the float outputs). Each quantizable node's sensitivity is that error with it
// alone quantized; nodes are then kept in FP32, most sensitive first, until the model with all
// the others quantized is within max_error. 2N + 2 compiles for N nodes, each run on the samples.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "ember/compile/compile.hpp"
#include "ember/config.hpp"
#include "ember/core/span.hpp"
#include "ember/core/tensor.hpp"
#include "ember/graph/graph.hpp"
#include "ember/quant/calibrate.hpp"
#include "ember/quant/evaluate.hpp"
#include "ember/quant/qdq.hpp"
#include "ember/runtime/executor.hpp"
#include "ember/status.hpp"

EMBER_NAMESPACE_BEGIN
namespace quant {

/// How choose_keep_fp32() measures.
struct keep_fp32_options {
    /// The error (relative to each output's range) the QDQ model may have.
    double max_error = 0.01;
    /// The first this many samples are run for each measurement.
    std::size_t max_samples = 32;
    compile_options compile;
    const executor* exec = nullptr;
};

/// What choose_keep_fp32() found.
struct keep_fp32_result {
    std::vector<std::string> keep;  ///< the nodes to leave in FP32 (the caller's own list first)
    double error = 0.0;             ///< the QDQ model's error with them kept
    double error_all = 0.0;         ///< the error with only the caller's list kept
};

namespace detail {

/// max over outputs of max |got - ref| / (max ref - min ref) (or / max |ref|, or / 1, when that is 0).
inline double relative_error(const std::vector<std::vector<float>>& ref, const std::vector<std::vector<float>>& got) {
    double worst = 0.0;
    for (std::size_t k = 0; k < ref.size() && k < got.size(); ++k) {
        if (ref[k].empty() || ref[k].size() != got[k].size()) continue;
        const auto [lo, hi] = std::minmax_element(ref[k].begin(), ref[k].end());
        double span_k = static_cast<double>(*hi) - static_cast<double>(*lo);
        if (!(span_k > 0.0)) span_k = std::max(std::fabs(static_cast<double>(*lo)), std::fabs(static_cast<double>(*hi)));
        if (!(span_k > 0.0)) span_k = 1.0;
        double diff = 0.0;
        for (std::size_t i = 0; i < ref[k].size(); ++i)
            diff = std::max(diff, std::fabs(static_cast<double>(got[k][i]) - static_cast<double>(ref[k][i])));
        worst = std::max(worst, diff / span_k);
    }
    return worst;
}

} // namespace detail

/// The nodes to leave in FP32 so that quantize_qdq(g, ranges, options with them) stays within
/// o.max_error of the FP32 model on the samples (see the top of this file). options.keep_fp32
/// is always kept. When even every node in FP32 misses the target, all are returned. Errors as
/// calibrate() and compile().
[[nodiscard]] inline result<keep_fp32_result> choose_keep_fp32(const graph& g, span<const tensor> samples, span<const value_range> ranges,
                                                               const qdq_options& options, const keep_fp32_options& o = {}) {
    if (g.inputs.size() != 1)
        return error_info{status::unsupported_op, -1,
                          ember::detail::format("choose_keep_fp32: the graph has {} inputs; only graphs with one input are supported", g.inputs.size())};
    if (samples.empty()) return error_info{status::invalid_argument, -1, "choose_keep_fp32: no samples"};
    const span<const tensor> used(samples.data(), std::min(samples.size(), std::max<std::size_t>(o.max_samples, 1)));
    result<std::vector<std::vector<float>>> ref = detail::run_float_outputs(g, used, o.compile, o.exec, "choose_keep_fp32");
    if (!ref) return ref.error();
    auto error_with = [&](const std::vector<std::string>& keep) -> result<double> {
        qdq_options q = options;
        q.keep_fp32 = keep;
        result<graph> qg = quantize_qdq(g, ranges, q);
        if (!qg) return qg.error();
        result<std::vector<std::vector<float>>> got = detail::run_float_outputs(*qg, used, o.compile, o.exec, "choose_keep_fp32");
        if (!got) return got.error();
        return detail::relative_error(*ref, *got);
    };

    keep_fp32_result r;
    r.keep = options.keep_fp32;
    result<double> all = error_with(r.keep);
    if (!all) return all.error();
    r.error = r.error_all = *all;
    if (r.error <= o.max_error) return r;

    // Sensitivity: the error with each candidate alone quantized.
    std::vector<std::string> candidates;
    for (const node& n : g.nodes)
        if (quantizable_op(n) && !n.name.empty() && std::find(r.keep.begin(), r.keep.end(), n.name) == r.keep.end())
            candidates.push_back(n.name);
    std::vector<std::pair<double, std::string>> ranked;
    for (const std::string& c : candidates) {
        std::vector<std::string> keep = r.keep;
        for (const std::string& other : candidates)
            if (other != c) keep.push_back(other);
        result<double> e = error_with(keep);
        if (!e) return e.error();
        ranked.emplace_back(*e, c);
    }
    std::stable_sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
    for (const auto& [sensitivity, name] : ranked) {
        (void)sensitivity;
        r.keep.push_back(name);
        result<double> e = error_with(r.keep);
        if (!e) return e.error();
        r.error = *e;
        if (r.error <= o.max_error) break;
    }
    return r;
}

} // namespace quant
EMBER_NAMESPACE_END
