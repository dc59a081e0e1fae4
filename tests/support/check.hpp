// SPDX-License-Identifier: Apache-2.0
// Test helpers: build and run a one-node graph, make tensors, compare with tolerances.
#pragma once

#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <ember/ember.hpp>

namespace ember::test {

/// A float32 tensor with the given values (must match the shape).
inline tensor make_f32(const shape& dims, std::vector<float> values) {
    result<tensor> t = tensor::copy_of<float>(dims, span<const float>(values.data(), values.size()));
    REQUIRE_MESSAGE(t, t.error().message);
    return std::move(*t);
}

template <class T>
inline tensor make(const shape& dims, std::vector<T> values) {
    result<tensor> t = tensor::copy_of<T>(dims, span<const T>(values.data(), values.size()));
    REQUIRE_MESSAGE(t, t.error().message);
    return std::move(*t);
}

/// A float32 tensor of uniform random values in [lo, hi), seeded.
inline tensor random_f32(const shape& dims, std::uint32_t seed, float lo = -1.0f, float hi = 1.0f) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> dist(lo, hi);
    std::vector<float> v(static_cast<std::size_t>(dims.elements()));
    for (float& x : v) x = dist(rng);
    return make_f32(dims, std::move(v));
}

/// The elements of t as a std::vector<T> (T must be t's element type).
template <class T>
std::vector<T> values_of(const tensor& t) {
    const T* p = t.data<T>();
    return std::vector<T>(p, p + t.size());
}

/// A float32 tensor holding start, start + 1, start + 2, ...
inline tensor iota(const shape& dims, float start = 1.0f) {
    std::vector<float> v(static_cast<std::size_t>(dims.elements()));
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = start + float(i);
    return make_f32(dims, std::move(v));
}

inline std::vector<float> values_f32(const tensor& t) {
    const float* p = t.data<float>();
    return std::vector<float>(p, p + t.size());
}

/// A bool tensor (one byte per element) from 0/1 values; std::vector<bool> has no data(), so
/// make<bool> cannot be used.
inline tensor make_bool(const shape& dims, const std::vector<int>& values) {
    result<tensor> t = tensor::create(dtype::boolean, dims);
    REQUIRE(t);
    REQUIRE(t->size() == values.size());
    for (std::size_t i = 0; i < values.size(); ++i) reinterpret_cast<std::uint8_t*>(t->bytes())[i] = values[i] ? 1 : 0;
    return std::move(*t);
}

/// The elements of a bool tensor as 0/1.
inline std::vector<int> bools_of(const tensor& t) {
    REQUIRE(t.type() == dtype::boolean);
    std::vector<int> v;
    for (std::size_t i = 0; i < t.size(); ++i) v.push_back(reinterpret_cast<const std::uint8_t*>(t.bytes())[i]);
    return v;
}

/// A float16 tensor from float values (rounded to nearest even).
inline tensor make_f16(const shape& dims, const std::vector<float>& values) {
    std::vector<float16> h;
    for (float f : values) h.push_back(float16(f));
    return make<float16>(dims, h);
}
inline std::vector<float> f16_values(const tensor& t) {
    REQUIRE(t.type() == dtype::float16);
    std::vector<float> v;
    for (std::size_t i = 0; i < t.size(); ++i) v.push_back(static_cast<float>(t.data<float16>()[i]));
    return v;
}

/// How inputs of a one-node test graph are fed.
enum class feed { inputs, constants };

struct node_run {
    result<plan> compiled = error_info{status::invalid_argument, -1, "not compiled"};
    std::vector<tensor> outputs;
    error_info error;                ///< graph-build or compile error, when compiled is empty
    status run_status = status::ok;  ///< what run() returned
};

/// How run_node_with builds its one-node graph.
struct node_setup {
    std::int64_t opset = 0;        ///< the graph's default-domain opset; 0: none (the newest semantics)
    std::vector<bool> constant;    ///< input i is a constant where constant[i] (missing entries: false)
    std::size_t output_count = 1;
    compile_options options = {};
    const executor* exec = nullptr;  ///< the session's executor (nullptr: serial)
};

/// The setup with every input a constant (the node folded at compile time).
inline node_setup all_constant(node_setup setup, std::size_t input_count) {
    setup.constant.assign(input_count, true);
    return setup;
}

/// Builds graph(inputs -> op -> outputs) as `setup` says, compiles it and runs it once. Inputs
/// that are empty tensors are absent optional inputs. A build or compile error is recorded in
/// `error`, the status of run() in `run_status` (outputs are bound either way).
inline node_run run_node_with(const std::string& op_type, const std::vector<tensor>& inputs, std::vector<attribute> attributes,
                              const node_setup& setup) {
    graph_builder b("single_" + op_type);
    std::vector<value_id> ids;
    std::vector<const tensor*> fed;
    for (std::size_t i = 0; i < inputs.size(); ++i) {
        const std::string name = "in" + std::to_string(i);
        if (inputs[i].empty()) {
            ids.push_back(no_value);
        } else if (i < setup.constant.size() && setup.constant[i]) {
            ids.push_back(b.constant(name, inputs[i]));
        } else {
            ids.push_back(b.input(name, inputs[i].type(), partial_shape(inputs[i].dims())));
            fed.push_back(&inputs[i]);
        }
    }
    std::vector<value_id> outs = b.nodes(op_type, ids, setup.output_count, std::move(attributes), "node");
    for (std::size_t k = 0; k < outs.size(); ++k) b.output(outs[k], "out" + std::to_string(k));
    node_run r;
    result<graph> g = std::move(b).build();
    if (!g) {
        r.error = g.error();
        return r;
    }
    if (setup.opset != 0) g->opsets.push_back(opset{"", setup.opset});
    r.compiled = compile(*g, setup.options);
    if (!r.compiled) {
        r.error = r.compiled.error();
        return r;
    }
    const plan& p = *r.compiled;
    session s(p, setup.exec);
    REQUIRE(s.state() == status::ok);
    for (std::size_t i = 0; i < fed.size(); ++i)
        REQUIRE(s.bind_input(i, fed[i]->bytes(), fed[i]->size_bytes()) == status::ok);
    for (std::size_t k = 0; k < p.output_count(); ++k) {
        result<tensor> t = tensor::create(p.output(k).type, p.output(k).dims);
        REQUIRE(t);
        REQUIRE(s.bind_output(k, t->bytes(), t->size_bytes()) == status::ok);
        r.outputs.push_back(std::move(*t));
    }
    r.run_status = s.run();
    return r;
}

/// Whether two tensors hold the same bytes (their sizes are checked first). Empty tensors may
/// hold null, which memcmp must not see.
inline bool same_bytes(const tensor& a, const tensor& b) {
    if (a.size_bytes() != b.size_bytes()) return false;
    return a.size_bytes() == 0 || std::memcmp(a.bytes(), b.bytes(), a.size_bytes()) == 0;
}

/// Checks that two runs of a node have the same outputs, bit for bit.
inline void check_same_outputs(const node_run& a, const node_run& b) {
    REQUIRE(a.outputs.size() == b.outputs.size());
    for (std::size_t k = 0; k < a.outputs.size(); ++k) {
        REQUIRE(a.outputs[k].type() == b.outputs[k].type());
        REQUIRE(a.outputs[k].dims() == b.outputs[k].dims());
        REQUIRE(a.outputs[k].size_bytes() == b.outputs[k].size_bytes());
        CHECK(same_bytes(a.outputs[k], b.outputs[k]));
    }
}

/// run_node_with as `setup` says, then with every input a constant (folded at compile time);
/// both must compile and run, and agree bit for bit. Returns the first.
inline node_run run_node_both_ways_with(const std::string& op_type, const std::vector<tensor>& inputs,
                                        const std::vector<attribute>& attributes, const node_setup& setup) {
    node_run a = run_node_with(op_type, inputs, attributes, setup);
    REQUIRE_MESSAGE(a.compiled, a.error.message);
    REQUIRE(a.run_status == status::ok);
    node_run b = run_node_with(op_type, inputs, attributes, all_constant(setup, inputs.size()));
    REQUIRE_MESSAGE(b.compiled, b.error.message);
    REQUIRE(b.run_status == status::ok);
    check_same_outputs(a, b);
    return a;
}

/// Builds graph(inputs -> op -> outputs), compiles it and runs it once (run() must succeed). With
/// feed::constants the inputs are constants (the node is folded at compile time), otherwise graph
/// inputs. Inputs that are empty tensors are absent optional inputs.
inline node_run run_node(const std::string& op_type, const std::vector<tensor>& inputs, std::vector<attribute> attributes = {},
                         std::size_t output_count = 1, feed how = feed::inputs, compile_options options = {}) {
    node_setup setup;
    setup.constant.assign(inputs.size(), how == feed::constants);
    setup.output_count = output_count;
    setup.options = std::move(options);
    node_run r = run_node_with(op_type, inputs, std::move(attributes), setup);
    if (r.compiled) REQUIRE(r.run_status == status::ok);
    return r;
}

/// Runs the node both ways (graph inputs, and constants folded at compile time) and checks that
/// the two agree bit for bit; returns the first. Returns the first unchecked if it does not compile.
inline node_run run_node_both_ways(const std::string& op_type, const std::vector<tensor>& inputs, std::vector<attribute> attributes = {},
                                   std::size_t output_count = 1) {
    node_run a = run_node(op_type, inputs, attributes, output_count, feed::inputs);
    if (!a.compiled) return a;
    node_run b = run_node(op_type, inputs, attributes, output_count, feed::constants);
    REQUIRE_MESSAGE(b.compiled, b.error.message);
    check_same_outputs(a, b);
    return a;
}

/// Whether the planner put two values in the same arena buffer (an in-place chain).
inline bool share_buffer(const plan& p, value_id a, value_id b) {
    std::uint32_t buffer_a = 0xffffffffu, buffer_b = 0xfffffffeu;
    for (const value_placement& v : p.placements()) {
        if (v.value == a) buffer_a = v.buffer;
        if (v.value == b) buffer_b = v.buffer;
    }
    return buffer_a == buffer_b;
}

/// x -> Relu -> op(relu, constants...) -> Relu -> y: the op between two intermediates, where the
/// planner may run it in place. Compiles with `options` (required to succeed), runs once on x.
struct chain_run {
    result<plan> compiled = error_info{status::invalid_argument, -1, "not compiled"};
    bool shared = false;  ///< the op's output shares the buffer of its input (the first Relu's output)
    std::vector<float> y;
};

inline chain_run run_in_chain(const std::string& op_type, const tensor& x, const std::vector<tensor>& constants = {},
                              std::vector<attribute> attributes = {}, const compile_options& options = {}) {
    graph_builder b("chain");
    const value_id in = b.input("x", x.type(), partial_shape(x.dims()));
    const value_id r = b.node("Relu", {in}, {}, "relu");
    std::vector<value_id> inputs{r};
    for (std::size_t i = 0; i < constants.size(); ++i) inputs.push_back(b.constant("c" + std::to_string(i), constants[i]));
    const value_id op = b.node(op_type, inputs, std::move(attributes), "op");
    b.output(b.node("Relu", {op}, {}, "relu2"), "y");
    result<graph> g = std::move(b).build();
    REQUIRE_MESSAGE(g, g.error().message);
    chain_run c;
    c.compiled = compile(*g, options);
    REQUIRE_MESSAGE(c.compiled, c.compiled.error().message);
    c.shared = share_buffer(*c.compiled, r, op);
    session sess(*c.compiled);
    REQUIRE(sess.bind_input(0, x.bytes(), x.size_bytes()) == status::ok);
    c.y.resize(static_cast<std::size_t>(c.compiled->output(0).dims.elements()));
    REQUIRE(sess.bind_output(0, c.y) == status::ok);
    REQUIRE(sess.run() == status::ok);
    return c;
}

/// Element-wise |a - b| <= atol + rtol * |b|, with a message at the first difference.
inline void check_close(const std::vector<float>& actual, const std::vector<float>& expected, float atol = 1e-5f, float rtol = 1e-5f) {
    REQUIRE(actual.size() == expected.size());
    for (std::size_t i = 0; i < actual.size(); ++i) {
        const bool both_nan = std::isnan(actual[i]) && std::isnan(expected[i]);
        if (!both_nan && !(std::fabs(actual[i] - expected[i]) <= atol + rtol * std::fabs(expected[i]))) {
            FAIL_CHECK("element " << i << ": " << actual[i] << " vs expected " << expected[i]);
            return;
        }
    }
}

inline void check_close(const tensor& actual, const std::vector<float>& expected, float atol = 1e-5f, float rtol = 1e-5f) {
    check_close(values_f32(actual), expected, atol, rtol);
}

} // namespace ember::test
