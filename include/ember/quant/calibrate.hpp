// SPDX-License-Identifier: Apache-2.0
// Post-training calibration: runs a set of samples through the FP32 graph and gives the range
// [min, max] of every activation the QDQ rewrite (quant/qdq.hpp) quantizes, the float inputs of
// Conv, MatMul and Gemm that are not constants. Three ways to pick a range from the values seen:
//
//   minmax      the smallest and largest value seen.
//   percentile  the range that keeps `percentile` % of the values (default 99.999), cutting half
//               the rest at each end, read off a histogram of `bins` bins over [min, max].
//   entropy     TensorRT's calibrator: a histogram of |x| over [0, max |x|] in `bins` (2048)
//               bins (bin 0 counted as bin 1, as NVIDIA's pytorch-quantization does); for every threshold i >= quantized_bins (128) bins, the distribution
//               clipped at i (the outliers added to the last bin) against the same one quantized
//               to quantized_bins levels; the i with the least Kullback-Leibler divergence
//               gives the threshold T = i bin widths, and the range is [max(min, -T), min(max, T)].
//
// How: the activations are made extra outputs of a copy of the graph, which is compiled once
// (compile_options from the caller) and run on each sample: one pass for min/max, a second one
// for the histograms (percentile, entropy), whose range is then known exactly.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ember/compile/compile.hpp"
#include "ember/config.hpp"
#include "ember/core/span.hpp"
#include "ember/core/tensor.hpp"
#include "ember/graph/graph.hpp"
#include "ember/runtime/executor.hpp"
#include "ember/runtime/session.hpp"
#include "ember/status.hpp"

EMBER_NAMESPACE_BEGIN
namespace quant {

enum class range_method : std::uint8_t { minmax, percentile, entropy };

[[nodiscard]] constexpr std::string_view to_string(range_method m) noexcept {
    switch (m) {
        case range_method::minmax: return "minmax";
        case range_method::percentile: return "percentile";
        case range_method::entropy: return "entropy";
    }
    return "?";
}

/// "minmax", "percentile" or "entropy" -> the method; false for anything else.
[[nodiscard]] inline bool parse_range_method(std::string_view text, range_method& out) noexcept {
    for (range_method m : {range_method::minmax, range_method::percentile, range_method::entropy})
        if (text == to_string(m)) {
            out = m;
            return true;
        }
    return false;
}

/// The range of one value, by name, as calibration found it.
struct value_range {
    std::string name;
    float min = 0.0f;
    float max = 0.0f;
};

/// Counts of values in `bins` equal bins over [lo, hi]; values outside go to the end bins.
class histogram {
public:
    histogram() = default;
    histogram(double lo, double hi, std::size_t bins) : lo_(lo), hi_(hi < lo ? lo : hi), counts_(bins == 0 ? 1 : bins, 0) {}

    void add(const float* x, std::size_t n) noexcept {
        const double width = bin_width();
        const auto last = static_cast<double>(counts_.size() - 1);
        for (std::size_t i = 0; i < n; ++i) {
            if (std::isnan(x[i])) continue;
            double b = width > 0.0 ? std::floor((static_cast<double>(x[i]) - lo_) / width) : 0.0;
            b = b < 0.0 ? 0.0 : (b > last ? last : b);
            ++counts_[static_cast<std::size_t>(b)];
        }
    }
    /// Adds |x| for each x (the entropy method's histogram over [0, max |x|]).
    void add_abs(const float* x, std::size_t n) noexcept {
        float buf[256];
        for (std::size_t at = 0; at < n;) {
            const std::size_t k = std::min<std::size_t>(n - at, 256);
            for (std::size_t j = 0; j < k; ++j) buf[j] = std::fabs(x[at + j]);
            add(buf, k);
            at += k;
        }
    }

    double lo() const noexcept { return lo_; }
    double hi() const noexcept { return hi_; }
    double bin_width() const noexcept { return (hi_ - lo_) / static_cast<double>(counts_.size()); }
    std::size_t bins() const noexcept { return counts_.size(); }
    const std::vector<std::uint64_t>& counts() const noexcept { return counts_; }
    std::vector<std::uint64_t>& counts() noexcept { return counts_; }
    std::uint64_t total() const noexcept {
        std::uint64_t t = 0;
        for (std::uint64_t c : counts_) t += c;
        return t;
    }

private:
    double lo_ = 0.0, hi_ = 0.0;
    std::vector<std::uint64_t> counts_ = std::vector<std::uint64_t>(1, 0);
};

/// The range keeping `percentile` % of the histogram's values: the lower end is the left edge of
/// the first bin where more than (100 - percentile) / 2 % of the values are at or below it, the
/// upper end the right edge of the first bin where at least 100 - that % are. Inside [lo, hi].
[[nodiscard]] inline value_range percentile_range(const histogram& h, double percentile) {
    const std::vector<std::uint64_t>& c = h.counts();
    const double total = static_cast<double>(h.total());
    value_range r;
    r.min = static_cast<float>(h.lo());
    r.max = static_cast<float>(h.hi());
    if (total == 0.0) return r;
    const double cut = (100.0 - std::clamp(percentile, 0.0, 100.0)) / 200.0 * total;
    double cum = 0.0;
    bool have_lower = false;
    for (std::size_t i = 0; i < c.size(); ++i) {
        cum += static_cast<double>(c[i]);
        if (!have_lower && cum > cut) {
            r.min = static_cast<float>(h.lo() + static_cast<double>(i) * h.bin_width());
            have_lower = true;
        }
        if (cum >= total - cut) {
            r.max = static_cast<float>(i + 1 == c.size() ? h.hi() : h.lo() + static_cast<double>(i + 1) * h.bin_width());
            break;
        }
    }
    return r;
}

namespace detail {
/// MXNet's and TensorRT's smoothing: zero bins get eps, taken evenly from the non-zero ones, so
/// the divergence stays finite. False when every bin is zero.
inline bool smooth(std::vector<double>& d, double eps = 1e-4) {
    std::size_t zeros = 0;
    for (double v : d) zeros += v == 0.0 ? 1 : 0;
    const std::size_t nonzeros = d.size() - zeros;
    if (nonzeros == 0) return false;
    const double take = eps * static_cast<double>(zeros) / static_cast<double>(nonzeros);
    for (double& v : d) v = v == 0.0 ? eps : v - take;
    return true;
}
} // namespace detail

/// TensorRT's entropy threshold over a histogram of |x| starting at 0: the T that loses the
/// least information (Kullback-Leibler divergence) when [0, T] is quantized to quantized_bins
/// levels and everything above T is clipped to T. At least quantized_bins bin widths.
[[nodiscard]] inline double entropy_threshold(const histogram& h, std::size_t quantized_bins = 128) {
    // Bin 0 counts as bin 1, as NVIDIA's pytorch-quantization does: the zeros of a ReLU would
    // otherwise outweigh everything and pull the threshold far in (measured: 1.15 instead of
    // 4.7 on the bundled model's first pooled activations, whose max is 6.2).
    std::vector<std::uint64_t> hist = h.counts();
    const std::size_t bins = hist.size();
    if (quantized_bins == 0 || bins <= quantized_bins) return h.hi();
    hist[0] = hist[1];
    double best_kl = 0.0;
    std::size_t best = 0;  // none yet
    double outliers = 0.0;
    for (std::size_t k = quantized_bins; k < bins; ++k) outliers += static_cast<double>(hist[k]);
    std::vector<double> p, q;
    for (std::size_t i = quantized_bins; i <= bins; ++i) {
        if (i > quantized_bins) outliers -= static_cast<double>(hist[i - 1]);
        p.assign(i, 0.0);
        for (std::size_t k = 0; k < i; ++k) p[k] = static_cast<double>(hist[k]);
        p[i - 1] += outliers;
        // Q: hist[0, i) merged into quantized_bins groups (the last takes the remainder), each
        // group's count spread evenly over its non-empty bins.
        q.assign(i, 0.0);
        const std::size_t per = i / quantized_bins;
        for (std::size_t j = 0; j < quantized_bins; ++j) {
            const std::size_t start = j * per, stop = j + 1 == quantized_bins ? i : start + per;
            double sum = 0.0;
            std::size_t nonzero = 0;
            for (std::size_t k = start; k < stop; ++k) {
                sum += static_cast<double>(hist[k]);
                nonzero += hist[k] != 0 ? 1 : 0;
            }
            if (nonzero == 0) continue;
            for (std::size_t k = start; k < stop; ++k)
                if (hist[k] != 0) q[k] = sum / static_cast<double>(nonzero);
        }
        double p_sum = 0.0, q_sum = 0.0;
        for (double v : p) p_sum += v;
        for (double v : q) q_sum += v;
        if (p_sum == 0.0 || q_sum == 0.0) continue;
        for (double& v : p) v /= p_sum;
        for (double& v : q) v /= q_sum;
        if (!detail::smooth(p) || !detail::smooth(q)) continue;
        double kl = 0.0;
        for (std::size_t k = 0; k < i; ++k)
            if (p[k] > 0.0 && q[k] > 0.0) kl += p[k] * std::log(p[k] / q[k]);
        if (best == 0 || kl < best_kl) {
            best_kl = kl;
            best = i;
        }
    }
    if (best == 0) return h.hi();
    return h.lo() + static_cast<double>(best) * h.bin_width();
}

/// What calibrate() does and how it reports progress.
struct calibration_options {
    range_method method = range_method::minmax;
    double percentile = 99.999;      ///< percentile: % of the values the range keeps
    std::size_t bins = 2048;         ///< percentile, entropy: histogram bins
    std::size_t quantized_bins = 128;///< entropy: levels the candidate distributions are quantized to
    /// Nodes (by name) left in float: their inputs are not calibrated.
    std::vector<std::string> keep_fp32;
    /// How the FP32 graph is compiled (threads, ISA, ...); input_shapes is set from the samples.
    compile_options compile;
    /// The threads the calibration runs use (a thread_pool's as_executor()); null: the caller's.
    const executor* exec = nullptr;
    /// Called after each run with (user, runs done, runs in all); may be null.
    void (*progress)(void* user, std::size_t done, std::size_t total) = nullptr;
    void* progress_user = nullptr;
};

/// Whether the QDQ rewrite handles this node: Conv, MatMul or Gemm of the standard domain.
[[nodiscard]] inline bool quantizable_op(const node& n) noexcept {
    return (n.domain.empty() || n.domain == "ai.onnx") && (n.op_type == "Conv" || n.op_type == "MatMul" || n.op_type == "Gemm");
}

/// The inputs of a quantizable node that hold data (as opposed to its bias): Conv's X and W,
/// MatMul's A and B, Gemm's A and B.
inline constexpr std::size_t quantized_operands = 2;

[[nodiscard]] inline bool kept_fp32(const node& n, span<const std::string> keep) noexcept {
    if (n.name.empty()) return false;
    for (const std::string& k : keep)
        if (k == n.name) return true;
    return false;
}

/// The values calibrate() measures: the non-constant data inputs of every quantizable node
/// not in keep_fp32, each once, in node order.
[[nodiscard]] inline std::vector<value_id> activations_to_calibrate(const graph& g, span<const std::string> keep_fp32) {
    std::vector<value_id> out;
    for (const node& n : g.nodes) {
        if (!quantizable_op(n) || kept_fp32(n, keep_fp32)) continue;
        for (std::size_t k = 0; k < quantized_operands && k < n.inputs.size(); ++k) {
            const value_id v = n.inputs[k];
            if (v == no_value || g.values[v].kind == value_kind::constant) continue;
            if (std::find(out.begin(), out.end(), v) == out.end()) out.push_back(v);
        }
    }
    return out;
}

/// Runs every sample through g and returns the range of each float activation that
/// activations_to_calibrate() names, by options.method. g must have one input; each sample is a
/// whole input tensor (batch dimension included), all of one dtype and shape, which fixes the
/// input's shape for the compile. Fails with invalid_argument (no samples, a sample of another
/// shape or dtype: the message gives its index), unsupported_op (several inputs) or what
/// compile() gives. Allocates; compiles once and runs each sample once (minmax) or twice.
[[nodiscard]] inline result<std::vector<value_range>> calibrate(const graph& g, span<const tensor> samples,
                                                                const calibration_options& options = {}) {
    if (g.inputs.size() != 1)
        return error_info{status::unsupported_op, -1,
                          ember::detail::format("calibrate: the graph has {} inputs; only graphs with one input are supported", g.inputs.size())};
    if (samples.empty()) return error_info{status::invalid_argument, -1, "calibrate: no calibration samples"};
    if (options.method == range_method::percentile && !(options.percentile > 0.0 && options.percentile <= 100.0))
        return error_info{status::invalid_argument, -1, ember::detail::format("calibrate: percentile {} is not in (0, 100]", options.percentile)};
    const std::string& input_name = g.values[g.inputs[0]].name;
    for (std::size_t i = 0; i < samples.size(); ++i)
        if (samples[i].type() != samples[0].type() || samples[i].dims() != samples[0].dims())
            return error_info{status::invalid_argument, -1,
                              ember::detail::format("calibrate: sample {} is {} {}, sample 0 is {} {}", i, samples[i].type(), samples[i].dims(),
                                                    samples[0].type(), samples[0].dims())};

    const std::vector<value_id> targets = activations_to_calibrate(g, span<const std::string>(options.keep_fp32.data(), options.keep_fp32.size()));
    if (targets.empty()) return std::vector<value_range>{};
    graph probe = g;
    for (value_id v : targets)
        if (std::find(probe.outputs.begin(), probe.outputs.end(), v) == probe.outputs.end()) probe.outputs.push_back(v);
    compile_options co = options.compile;
    co.input_shapes = {{input_name, samples[0].dims()}};
    result<plan> p = compile(probe, co);
    if (!p) return p.error();
    session s(*p, options.exec);
    if (s.state() != status::ok)
        return error_info{s.state(), -1, ember::detail::format("calibrate: cannot create a session (arena {} bytes)", p->arena_bytes())};
    if (p->input_count() == 1 && p->input(0).type != samples[0].type())
        return error_info{status::invalid_argument, -1,
                          ember::detail::format("calibrate: the model's input '{}' is {}, the samples are {}", input_name, p->input(0).type,
                                                samples[0].type())};

    struct probe_buffer {
        std::size_t value;  ///< index into targets
        std::vector<float> data;
        float min = 0.0f, max = 0.0f;
        bool seen = false;
        histogram hist;
    };
    std::vector<probe_buffer> buffers;
    for (std::size_t t = 0; t < targets.size(); ++t) {
        const std::size_t o = p->output_index(g.values[targets[t]].name);
        if (o >= p->output_count() || p->output(o).type != dtype::float32) continue;  // integer data is not quantized
        probe_buffer b;
        b.value = t;
        b.data.resize(p->output(o).bytes / sizeof(float));
        buffers.push_back(std::move(b));
    }
    for (probe_buffer& b : buffers)
        if (s.bind_output(p->output_index(g.values[targets[b.value]].name), b.data.data(), b.data.size() * sizeof(float)) != status::ok)
            return error_info{status::invalid_argument, -1, "calibrate: cannot bind an activation's buffer"};

    const std::size_t passes = options.method == range_method::minmax ? 1 : 2;
    const std::size_t total_runs = passes * samples.size();
    std::size_t done = 0;
    for (std::size_t pass = 0; pass < passes; ++pass) {
        if (pass == 1)
            for (probe_buffer& b : buffers) {
                if (options.method == range_method::percentile)
                    b.hist = histogram(b.min, b.max, options.bins);
                else
                    b.hist = histogram(0.0, std::max(std::fabs(b.min), std::fabs(b.max)), options.bins);
            }
        for (std::size_t i = 0; i < samples.size(); ++i) {
            if (p->input_count() == 1 && s.bind_input(0, samples[i].bytes(), samples[i].size_bytes()) != status::ok)
                return error_info{status::invalid_argument, -1,
                                  ember::detail::format("calibrate: sample {} ({} {}) does not fit the model's input '{}' ({} {})", i,
                                                        samples[i].type(), samples[i].dims(), input_name, p->input(0).type, p->input(0).dims)};
            if (const status st = s.run(); st != status::ok)
                return error_info{st, -1, ember::detail::format("calibrate: running sample {} failed with {}", i, to_string(st))};
            for (probe_buffer& b : buffers) {
                if (pass == 0) {
                    for (float x : b.data) {
                        if (std::isnan(x)) continue;
                        if (!b.seen) {
                            b.min = b.max = x;
                            b.seen = true;
                        }
                        b.min = std::min(b.min, x);
                        b.max = std::max(b.max, x);
                    }
                } else if (options.method == range_method::percentile) {
                    b.hist.add(b.data.data(), b.data.size());
                } else {
                    b.hist.add_abs(b.data.data(), b.data.size());
                }
            }
            ++done;
            if (options.progress) options.progress(options.progress_user, done, total_runs);
        }
    }

    std::vector<value_range> out;
    for (const probe_buffer& b : buffers) {
        value_range r;
        r.name = g.values[targets[b.value]].name;
        r.min = b.min;
        r.max = b.max;
        if (options.method == range_method::percentile) {
            const value_range pr = percentile_range(b.hist, options.percentile);
            r.min = pr.min;
            r.max = pr.max;
        } else if (options.method == range_method::entropy) {
            const auto t = static_cast<float>(entropy_threshold(b.hist, options.quantized_bins));
            r.min = std::max(b.min, -t);
            r.max = std::min(b.max, t);
        }
        out.push_back(std::move(r));
    }
    return out;
}

} // namespace quant
EMBER_NAMESPACE_END
