// SPDX-License-Identifier: Apache-2.0
// Measuring a model on samples: every float output on each sample (what choose_keep_fp32 compares)
// and top-1 accuracy against labels (what ember-quantize --evaluate prints for FP32 and INT8).
// Each call compiles g for the samples' shape once and runs them one after another on one session.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "ember/compile/compile.hpp"
#include "ember/config.hpp"
#include "ember/core/span.hpp"
#include "ember/core/tensor.hpp"
#include "ember/detail/format.hpp"
#include "ember/graph/graph.hpp"
#include "ember/runtime/executor.hpp"
#include "ember/runtime/session.hpp"
#include "ember/status.hpp"

EMBER_NAMESPACE_BEGIN
namespace quant {

/// How top1_accuracy() runs the model.
struct accuracy_options {
    compile_options compile;
    const executor* exec = nullptr;
    /// The output whose last axis holds the class scores.
    std::size_t output = 0;
};

/// What top1_accuracy() counted.
struct accuracy_result {
    std::size_t correct = 0;
    std::size_t total = 0;
    /// correct / total, in [0, 1] (0 for no rows).
    double top1() const noexcept { return total ? static_cast<double>(correct) / static_cast<double>(total) : 0.0; }
};

namespace detail {

/// Every float32 output of g (one input) on each sample, concatenated per output; other outputs
/// stay empty. `who` starts the error messages.
inline result<std::vector<std::vector<float>>> run_float_outputs(const graph& g, span<const tensor> samples, const compile_options& options,
                                                                 const executor* exec, const char* who) {
    if (g.inputs.size() != 1)
        return error_info{status::unsupported_op, -1,
                          ember::detail::format("{}: the graph has {} inputs; only graphs with one input are supported", who, g.inputs.size())};
    if (samples.empty()) return error_info{status::invalid_argument, -1, ember::detail::format("{}: no samples", who)};
    compile_options co = options;
    co.input_shapes = {{g.values[g.inputs[0]].name, samples[0].dims()}};
    result<plan> p = compile(g, co);
    if (!p) return p.error();
    session s(*p, exec);
    if (s.state() != status::ok) return error_info{s.state(), -1, ember::detail::format("{}: cannot create a session", who)};
    std::vector<std::vector<float>> out(p->output_count()), step(p->output_count());
    for (std::size_t k = 0; k < p->output_count(); ++k) {
        if (p->output(k).type != dtype::float32) continue;
        step[k].resize(p->output(k).bytes / sizeof(float));
        if (s.bind_output(k, step[k].data(), step[k].size() * sizeof(float)) != status::ok)
            return error_info{status::invalid_argument, -1, ember::detail::format("{}: cannot bind output {}", who, k)};
    }
    for (std::size_t i = 0; i < samples.size(); ++i) {
        const tensor& x = samples[i];
        if (x.dims() != samples[0].dims() || s.bind_input(0, x.bytes(), x.size_bytes()) != status::ok)
            return error_info{status::invalid_argument, -1,
                              ember::detail::format("{}: sample {} is {}, the model was compiled for {} ({})", who, i, x.dims(),
                                                    samples[0].dims(), x.type())};
        if (const status st = s.run(); st != status::ok)
            return error_info{st, -1, ember::detail::format("{}: the run of sample {} failed", who, i)};
        for (std::size_t k = 0; k < step.size(); ++k) out[k].insert(out[k].end(), step[k].begin(), step[k].end());
    }
    return out;
}

} // namespace detail

/// Top-1 accuracy of g on labelled samples: each sample is one input tensor whose first axis is
/// its batch (B rows); output o.output must be float32 with B rows of class scores, and labels
/// holds one class index per row, samples in order. A row is correct when its largest score (the
/// first of equal ones, as numpy's argmax) is at its label; a NaN score is never the largest.
[[nodiscard]] inline result<accuracy_result> top1_accuracy(const graph& g, span<const tensor> samples, span<const std::int64_t> labels,
                                                           const accuracy_options& o = {}) {
    constexpr const char* who = "top1_accuracy";
    if (!samples.empty() && samples[0].rank() == 0)
        return error_info{status::invalid_argument, -1, "top1_accuracy: a sample is a scalar; its first axis must be the batch"};
    result<std::vector<std::vector<float>>> outs = detail::run_float_outputs(g, samples, o.compile, o.exec, who);
    if (!outs) return outs.error();
    if (o.output >= outs->size() || (*outs)[o.output].empty())
        return error_info{status::invalid_argument, -1,
                          ember::detail::format("top1_accuracy: output {} is not a float32 output of the model ({} outputs)", o.output, outs->size())};
    const std::vector<float>& scores = (*outs)[o.output];
    const std::size_t rows_per_sample = static_cast<std::size_t>(samples[0].dims()[0]);
    const std::size_t rows = rows_per_sample * samples.size();
    if (rows != labels.size())
        return error_info{status::invalid_argument, -1,
                          ember::detail::format("top1_accuracy: {} labels for {} rows ({} samples of {})", labels.size(), rows, samples.size(),
                                                rows_per_sample)};
    if (rows == 0 || scores.size() % rows != 0)
        return error_info{status::invalid_argument, -1,
                          ember::detail::format("top1_accuracy: output {} has {} values per sample, not a whole number per row of {}", o.output,
                                                scores.size() / samples.size(), rows_per_sample)};
    const std::size_t classes = scores.size() / rows;
    accuracy_result r;
    r.total = rows;
    for (std::size_t i = 0; i < rows; ++i) {
        const float* row = scores.data() + i * classes;
        std::size_t best = classes;
        for (std::size_t c = 0; c < classes; ++c)
            if (!std::isnan(row[c]) && (best == classes || row[c] > row[best])) best = c;
        r.correct += best < classes && static_cast<std::int64_t>(best) == labels[i] ? 1 : 0;
    }
    return r;
}

} // namespace quant
EMBER_NAMESPACE_END
