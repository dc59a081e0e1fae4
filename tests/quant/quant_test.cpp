// SPDX-License-Identifier: Apache-2.0
// quant/: the range math against hand-worked values (uint8 parameters, int8 scales, percentile
// cuts, TensorRT's entropy threshold), calibration on small graphs against plain loops, and the
// QDQ rewrite: per-channel scales = max |w| / 127, int32 biases, keep_fp32, and a QDQ model that
// runs in ember (also after an ONNX round trip) within a few quantization steps of FP32; the
// measured choice of nodes to keep in FP32.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include <ember/ember.hpp>
#include <ember/onnx.hpp>
#include <ember/quant/quant.hpp>

using ember::dtype;
using ember::status;
namespace q = ember::quant;

namespace {

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

/// Deterministic values in [-1, 1).
float pseudo(std::uint32_t& state) {
    state = state * 1664525u + 1013904223u;
    return static_cast<float>(state >> 8) / static_cast<float>(1u << 23) - 1.0f;
}

std::vector<ember::tensor> make_samples(const ember::shape& dims, std::size_t count, float scale, std::uint32_t seed) {
    std::vector<ember::tensor> out;
    for (std::size_t s = 0; s < count; ++s) {
        ember::result<ember::tensor> t = ember::tensor::create(dtype::float32, dims);
        REQUIRE(t);
        for (std::size_t i = 0; i < t->size(); ++i) t->data<float>()[i] = scale * pseudo(seed);
        out.push_back(std::move(*t));
    }
    return out;
}

std::vector<float> run(const ember::graph& g, const ember::tensor& x) {
    ember::compile_options options;
    options.input_shapes = {{g.values[g.inputs[0]].name, x.dims()}};
    ember::result<ember::plan> p = ember::compile(g, options);
    REQUIRE_MESSAGE(p, p.error().message);
    ember::session s(*p);
    REQUIRE(s.state() == status::ok);
    REQUIRE(s.bind_input(0, x.bytes(), x.size_bytes()) == status::ok);
    std::vector<float> y(p->output(0).bytes / sizeof(float));
    REQUIRE(s.bind_output(0, y) == status::ok);
    REQUIRE(s.run() == status::ok);
    return y;
}

const ember::node* find_node(const ember::graph& g, const std::string& name) {
    for (const ember::node& n : g.nodes)
        if (n.name == name) return &n;
    return nullptr;
}

const ember::tensor* constant(const ember::graph& g, const std::string& name) {
    const ember::value_id v = g.find_value(name);
    return v == ember::no_value ? nullptr : g.constant_of(v);
}

std::size_t count_ops(const ember::graph& g, const std::string& op) {
    return static_cast<std::size_t>(std::count_if(g.nodes.begin(), g.nodes.end(), [&](const ember::node& n) { return n.op_type == op; }));
}

/// x [N, 2, 6, 6] -> Conv(w [4, 2, 3, 3], b [4]) -> Relu -> Flatten -> Gemm(fc [16, 5], transB 0) -> y.
ember::graph small_cnn(std::int64_t opset = 13) {
    ember::graph_builder b("cnn");
    auto x = b.input("x", dtype::float32, {"N", 2, 6, 6});
    std::uint32_t seed = 7;
    std::vector<float> w(4 * 2 * 3 * 3), fc(64 * 5), bias(4), fcb(5);
    for (std::size_t c = 0; c < 4; ++c)  // channels of different magnitudes: per-channel scales differ
        for (std::size_t i = 0; i < 18; ++i) w[c * 18 + i] = static_cast<float>(c + 1) * 0.25f * pseudo(seed);
    for (float& v : fc) v = 0.2f * pseudo(seed);
    for (float& v : bias) v = 0.1f * pseudo(seed);
    for (float& v : fcb) v = 0.1f * pseudo(seed);
    auto wc = b.constant<float>("w", {4, 2, 3, 3}, ember::span<const float>(w.data(), w.size()));
    auto bc = b.constant<float>("b", {4}, ember::span<const float>(bias.data(), bias.size()));
    auto conv = b.node("Conv", {x, wc, bc}, {ember::attribute::of("strides", std::vector<std::int64_t>{2, 2})}, "conv");
    auto relu = b.node("Relu", {conv}, {}, "relu");
    auto flat = b.node("Flatten", {relu}, {ember::attribute::of("axis", 1)}, "flat");
    auto fcw = b.constant<float>("fc", {16, 5}, ember::span<const float>(fc.data(), 16 * 5));
    auto fcbias = b.constant<float>("fcb", {5}, ember::span<const float>(fcb.data(), fcb.size()));
    b.output(b.node("Gemm", {flat, fcw, fcbias}, {}, "gemm"), "y");
    ember::result<ember::graph> g = std::move(b).build();
    REQUIRE_MESSAGE(g, g.error().message);
    g->opsets = {{"", opset}};
    return std::move(*g);
}

} // namespace

TEST_CASE("quant: uint8 activation parameters and int8 weight scales by hand") {
    q::uint8_params p = q::activation_params(-1.0f, 3.0f);
    CHECK(p.scale == doctest::Approx(4.0 / 255.0));
    CHECK(p.zero_point == 64);  // round(1 / (4 / 255)) = round(63.75)
    p = q::activation_params(0.5f, 2.0f);  // widened to hold 0
    CHECK(p.scale == doctest::Approx(2.0 / 255.0));
    CHECK(p.zero_point == 0);
    p = q::activation_params(-2.0f, -1.0f);
    CHECK(p.scale == doctest::Approx(2.0 / 255.0));
    CHECK(p.zero_point == 255);
    p = q::activation_params(0.0f, 0.0f);
    CHECK(p.scale == 1.0f);
    CHECK(p.zero_point == 0);
    CHECK(q::weight_scale(1.27f) == doctest::Approx(0.01));
    CHECK(q::weight_scale(0.0f) == 1.0f);
}

TEST_CASE("quant: percentile ranges cut (100 - p) / 2 % at each end") {
    q::histogram h(0.0, 10.0, 10);
    std::vector<float> values(100, 0.5f);
    values.push_back(9.5f);
    h.add(values.data(), values.size());
    CHECK(h.total() == 101);
    // 98 %: 1.01 values cut at each end; bin 0 holds 100 of 101, so the range is bin 0: [0, 1].
    q::value_range r = q::percentile_range(h, 98.0);
    CHECK(r.min == 0.0f);
    CHECK(r.max == 1.0f);
    r = q::percentile_range(h, 100.0);  // everything: the histogram's own range
    CHECK(r.min == 0.0f);
    CHECK(r.max == 10.0f);

    q::histogram s(-5.0, 5.0, 10);  // one value per bin
    std::vector<float> ten;
    for (int k = -5; k < 5; ++k) ten.push_back(static_cast<float>(k) + 0.5f);
    s.add(ten.data(), ten.size());
    r = q::percentile_range(s, 80.0);  // one value off each end
    CHECK(r.min == -4.0f);
    CHECK(r.max == 4.0f);
}

TEST_CASE("quant: the entropy threshold keeps a uniform range and clips a lone outlier") {
    q::histogram uniform(0.0, 1.0, 2048);
    for (std::uint64_t& c : uniform.counts()) c = 100;
    CHECK(q::entropy_threshold(uniform, 128) == doctest::Approx(1.0));

    q::histogram tail(0.0, 1.0, 2048);
    for (std::size_t k = 0; k < 2048; ++k) {
        const double z = static_cast<double>(k) / 100.0;
        tail.counts()[k] = static_cast<std::uint64_t>(std::llround(1e6 * std::exp(-z * z)));
    }
    tail.counts()[2047] = 1;  // one outlier at the top
    const double t = q::entropy_threshold(tail, 128);
    CHECK(t < 0.5);
    CHECK(t >= 128.0 / 2048.0);
}

TEST_CASE("quant: calibrate measures the inputs of Conv, MatMul and Gemm") {
    ember::graph g = small_cnn();
    const std::vector<ember::tensor> samples = make_samples({1, 2, 6, 6}, 4, 2.0f, 11);
    ember::result<std::vector<q::value_range>> ranges = q::calibrate(g, ember::span<const ember::tensor>(samples.data(), samples.size()));
    REQUIRE_MESSAGE(ranges, ranges.error().message);
    REQUIRE(ranges->size() == 2);
    CHECK((*ranges)[0].name == "x");
    CHECK((*ranges)[1].name == "flat");
    float lo = samples[0].data<float>()[0], hi = lo;
    for (const ember::tensor& s : samples)
        for (std::size_t i = 0; i < s.size(); ++i) {
            lo = std::min(lo, s.data<float>()[i]);
            hi = std::max(hi, s.data<float>()[i]);
        }
    CHECK((*ranges)[0].min == lo);
    CHECK((*ranges)[0].max == hi);
    CHECK((*ranges)[1].min == 0.0f);  // after Relu (some output is 0 among 64 per sample)
    CHECK((*ranges)[1].max > 0.0f);

    // percentile 100 gives min-max; entropy stays inside it; progress is reported per run.
    q::calibration_options o;
    o.method = q::range_method::percentile;
    o.percentile = 100.0;
    std::size_t calls = 0, last_total = 0;
    struct counter { std::size_t* calls; std::size_t* total; } c{&calls, &last_total};
    o.progress = [](void* user, std::size_t, std::size_t total) {
        auto* k = static_cast<counter*>(user);
        ++*k->calls;
        *k->total = total;
    };
    o.progress_user = &c;
    auto pr = q::calibrate(g, ember::span<const ember::tensor>(samples.data(), samples.size()), o);
    REQUIRE(pr);
    CHECK((*pr)[0].min == lo);
    CHECK((*pr)[0].max == hi);
    CHECK(calls == 8);  // two passes over 4 samples
    CHECK(last_total == 8);
    o.method = q::range_method::entropy;
    o.progress = nullptr;
    auto er = q::calibrate(g, ember::span<const ember::tensor>(samples.data(), samples.size()), o);
    REQUIRE(er);
    for (std::size_t k = 0; k < 2; ++k) {
        CHECK((*er)[k].min >= (*ranges)[k].min);
        CHECK((*er)[k].max <= (*ranges)[k].max);
        CHECK((*er)[k].max > 0.0f);
    }

    o.keep_fp32 = {"gemm"};
    auto kept = q::calibrate(g, ember::span<const ember::tensor>(samples.data(), samples.size()), o);
    REQUIRE(kept);
    CHECK(kept->size() == 1);

    // Bad input names what is wrong.
    auto none = q::calibrate(g, ember::span<const ember::tensor>());
    REQUIRE_FALSE(none);
    CHECK(contains(none.error().message, "no calibration samples"));
    std::vector<ember::tensor> mixed = make_samples({1, 2, 6, 6}, 1, 1.0f, 3);
    mixed.push_back(make_samples({2, 2, 6, 6}, 1, 1.0f, 3)[0]);
    auto bad = q::calibrate(g, ember::span<const ember::tensor>(mixed.data(), mixed.size()));
    REQUIRE_FALSE(bad);
    CHECK(bad.error().code == status::invalid_argument);
    CHECK(contains(bad.error().message, "sample 1 is float32 [2, 2, 6, 6]"));
}

TEST_CASE("quant: the QDQ model has per-channel int8 weights, int32 biases and runs close to FP32") {
    const ember::graph g = small_cnn();
    const std::vector<ember::tensor> samples = make_samples({1, 2, 6, 6}, 8, 1.5f, 5);
    auto ranges = q::calibrate(g, ember::span<const ember::tensor>(samples.data(), samples.size()));
    REQUIRE(ranges);
    q::qdq_options o;
    o.per_channel = true;
    ember::result<ember::graph> qg = q::quantize_qdq(g, ember::span<const q::value_range>(ranges->data(), ranges->size()), o);
    REQUIRE_MESSAGE(qg, qg.error().message);
    REQUIRE(ember::validate(*qg));
    CHECK(count_ops(*qg, "QuantizeLinear") == 2);    // x, flat
    CHECK(count_ops(*qg, "DequantizeLinear") == 6);  // x, flat, w, fc, b, fcb
    for (const char* replaced : {"w", "b", "fc", "fcb"}) CHECK(qg->find_value(replaced) == ember::no_value);  // float copies dropped
    CHECK(qg->constants.size() == 2 * 2 + 4 * 3);  // scale + zero point per activation; data, scale, zero point per weight/bias

    // Weights: int8, scale max |w_c| / 127 per output channel (Conv axis 0; Gemm B [K, N] axis 1).
    const ember::tensor* w = constant(g, "w");
    const ember::tensor* wq = constant(*qg, "w_quantized");
    const ember::tensor* ws = constant(*qg, "w_scale");
    REQUIRE(wq);
    REQUIRE(ws);
    CHECK(wq->type() == dtype::int8);
    REQUIRE(ws->dims() == ember::shape{4});
    for (std::size_t c = 0; c < 4; ++c) {
        float absmax = 0.0f;
        for (std::size_t i = 0; i < 18; ++i) absmax = std::max(absmax, std::fabs(w->data<float>()[c * 18 + i]));
        CHECK(ws->data<float>()[c] == doctest::Approx(absmax / 127.0f));
        for (std::size_t i = 0; i < 18; ++i) {
            const float back = static_cast<float>(wq->data<std::int8_t>()[c * 18 + i]) * ws->data<float>()[c];
            CHECK(std::fabs(back - w->data<float>()[c * 18 + i]) <= 0.5f * ws->data<float>()[c] + 1e-7f);
        }
    }
    const ember::node* wdq = find_node(*qg, "w_DequantizeLinear");
    REQUIRE(wdq);
    REQUIRE(wdq->find_attribute("axis"));
    CHECK(wdq->find_attribute("axis")->i == 0);
    REQUIRE(find_node(*qg, "fc_DequantizeLinear"));
    CHECK(find_node(*qg, "fc_DequantizeLinear")->find_attribute("axis")->i == 1);
    CHECK(constant(*qg, "fc_scale")->dims() == ember::shape{5});

    // Bias: int32 with scale x_scale * w_scale[c].
    const ember::tensor* bq = constant(*qg, "b_quantized");
    const ember::tensor* bs = constant(*qg, "b_quantized_scale");
    const ember::tensor* xs = constant(*qg, "x_scale");
    REQUIRE(bq);
    REQUIRE(bs);
    REQUIRE(xs);
    CHECK(bq->type() == dtype::int32);
    for (std::size_t c = 0; c < 4; ++c) {
        CHECK(bs->data<float>()[c] == xs->data<float>()[0] * ws->data<float>()[c]);
        const float back = static_cast<float>(bq->data<std::int32_t>()[c]) * bs->data<float>()[c];
        CHECK(std::fabs(back - constant(g, "b")->data<float>()[c]) <= 0.5f * bs->data<float>()[c] + 1e-7f);
    }
    const ember::node* conv = find_node(*qg, "conv");
    REQUIRE(conv);
    CHECK(qg->values[conv->inputs[0]].name == "x_DequantizeLinear_Output");
    CHECK(qg->values[conv->inputs[1]].name == "w_DequantizeLinear_Output");
    CHECK(qg->values[conv->inputs[2]].name == "b_quantized_DequantizeLinear_Output");

    // The QDQ model runs, also after an ONNX round trip, within a few output steps of FP32.
    auto bytes = ember::onnx::save_memory(*qg);
    REQUIRE(bytes);
    auto reloaded = ember::onnx::load_memory(bytes->data(), bytes->size());
    REQUIRE_MESSAGE(reloaded, reloaded.error().message);
    float y_lo = 0.0f, y_hi = 0.0f, worst = 0.0f;
    for (const ember::tensor& s : samples) {
        const std::vector<float> ref = run(g, s), got = run(*qg, s), again = run(*reloaded, s);
        CHECK(got == again);
        for (std::size_t i = 0; i < ref.size(); ++i) {
            y_lo = std::min(y_lo, ref[i]);
            y_hi = std::max(y_hi, ref[i]);
            worst = std::max(worst, std::fabs(ref[i] - got[i]));
        }
    }
    const float step = (y_hi - y_lo) / 255.0f;
    MESSAGE("small CNN: FP32 vs QDQ max |diff| " << worst << " (" << worst / step << " output steps of " << step << ")");
    CHECK(worst > 0.0f);
    CHECK(worst <= 4.0f * step);
}

TEST_CASE("quant: per-tensor weights, MatMul, keep_fp32 and the opset check") {
    std::uint32_t seed = 3;
    std::vector<float> w(8 * 4);
    for (float& v : w) v = pseudo(seed);
    ember::graph_builder b2("mlp");
    auto x2 = b2.input("x", dtype::float32, {1, 8});
    auto w2 = b2.constant<float>("w", {8, 4}, ember::span<const float>(w.data(), w.size()));
    auto h2 = b2.node("MatMul", {x2, w2}, {}, "mm1");
    auto r2 = b2.node("Relu", {h2}, {}, "relu");
    auto w3 = b2.constant<float>("w3", {4, 4}, ember::span<const float>(w.data(), 16));
    b2.output(b2.node("MatMul", {r2, w3}, {}, "mm2"), "y");
    ember::result<ember::graph> g = std::move(b2).build();
    REQUIRE(g);
    g->opsets = {{"", 13}};
    const std::vector<ember::tensor> samples = make_samples({1, 8}, 6, 1.0f, 9);
    auto ranges = q::calibrate(*g, ember::span<const ember::tensor>(samples.data(), samples.size()));
    REQUIRE(ranges);
    CHECK(ranges->size() == 2);
    const ember::span<const q::value_range> rs(ranges->data(), ranges->size());

    auto per_tensor = q::quantize_qdq(*g, rs);
    REQUIRE(per_tensor);
    const ember::tensor* ws = constant(*per_tensor, "w_scale");
    REQUIRE(ws);
    CHECK(ws->rank() == 0);
    float absmax = 0.0f;
    for (float v : w) absmax = std::max(absmax, std::fabs(v));
    CHECK(ws->data<float>()[0] == doctest::Approx(absmax / 127.0f));
    CHECK(find_node(*per_tensor, "w_DequantizeLinear")->find_attribute("axis") == nullptr);
    CHECK(count_ops(*per_tensor, "QuantizeLinear") == 2);

    q::qdq_options keep;
    keep.keep_fp32 = {"mm2"};
    auto kept = q::quantize_qdq(*g, rs, keep);
    REQUIRE(kept);
    CHECK(count_ops(*kept, "QuantizeLinear") == 1);
    CHECK(kept->values[find_node(*kept, "mm2")->inputs[0]].name == "relu");
    for (const ember::tensor& s : samples) {
        const std::vector<float> ref = run(*g, s), got = run(*kept, s);
        for (std::size_t i = 0; i < ref.size(); ++i) CHECK(got[i] == doctest::Approx(ref[i]).epsilon(0.05).scale(1.0));
    }

    g->opsets = {{"", 12}};
    q::qdq_options pc;
    pc.per_channel = true;
    auto old = q::quantize_qdq(*g, rs, pc);
    REQUIRE_FALSE(old);
    CHECK(old.error().code == status::invalid_argument);
    CHECK(contains(old.error().message, "needs opset 13 or later; the model's opset is 12"));
    CHECK(q::quantize_qdq(*g, rs));  // per tensor is fine at 12
}

TEST_CASE("quant: choose_keep_fp32 keeps the node whose quantization costs most") {
    const ember::graph g = small_cnn();
    const std::vector<ember::tensor> samples = make_samples({1, 2, 6, 6}, 6, 1.5f, 21);
    const ember::span<const ember::tensor> ss(samples.data(), samples.size());
    auto ranges = q::calibrate(g, ss);
    REQUIRE(ranges);
    REQUIRE((*ranges)[1].name == "flat");
    (*ranges)[1].max *= 0.05f;  // the Gemm's input clipped to a twentieth: that node must stay FP32
    const ember::span<const q::value_range> rs(ranges->data(), ranges->size());
    q::keep_fp32_options o;
    o.max_error = 0.02;
    auto chosen = q::choose_keep_fp32(g, ss, rs, q::qdq_options{}, o);
    REQUIRE_MESSAGE(chosen, chosen.error().message);
    CHECK(chosen->keep == std::vector<std::string>{"gemm"});
    CHECK(chosen->error_all > 0.02);
    CHECK(chosen->error <= 0.02);
    CHECK(chosen->error > 0.0);

    // A model already within the target keeps nothing; the caller's own list is always kept.
    o.max_error = 1.0;
    q::qdq_options named;
    named.keep_fp32 = {"conv"};
    auto none = q::choose_keep_fp32(g, ss, rs, named, o);
    REQUIRE(none);
    CHECK(none->keep == std::vector<std::string>{"conv"});
    CHECK(none->error == none->error_all);
}
