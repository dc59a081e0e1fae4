// SPDX-License-Identifier: Apache-2.0
// Test helpers: build and run a one-node graph, make tensors, compare with tolerances.
#pragma once

#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
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

/// How inputs of a one-node test graph are fed.
enum class feed { inputs, constants };

struct node_run {
    result<plan> compiled = error_info{status::invalid_argument, -1, "not compiled"};
    std::vector<tensor> outputs;
    error_info error;  ///< compile error, when compiled is empty
};

/// Builds graph(inputs -> op -> outputs), compiles it and runs it once. With feed::constants the
/// inputs are constants (the node is folded at compile time), otherwise graph inputs. Inputs
/// that are empty tensors are absent optional inputs.
inline node_run run_node(const std::string& op_type, const std::vector<tensor>& inputs, std::vector<attribute> attributes = {},
                         std::size_t output_count = 1, feed how = feed::inputs, compile_options options = {}) {
    graph_builder b("single_" + op_type);
    std::vector<value_id> ids;
    std::vector<const tensor*> fed;
    for (std::size_t i = 0; i < inputs.size(); ++i) {
        const std::string name = "in" + std::to_string(i);
        if (inputs[i].empty()) {
            ids.push_back(no_value);
        } else if (how == feed::constants) {
            ids.push_back(b.constant(name, inputs[i]));
        } else {
            ids.push_back(b.input(name, inputs[i].type(), partial_shape(inputs[i].dims())));
            fed.push_back(&inputs[i]);
        }
    }
    std::vector<value_id> outs = b.nodes(op_type, ids, output_count, std::move(attributes), "node");
    for (std::size_t k = 0; k < outs.size(); ++k) b.output(outs[k], "out" + std::to_string(k));
    node_run r;
    result<graph> g = std::move(b).build();
    if (!g) {
        r.error = g.error();
        return r;
    }
    r.compiled = compile(*g, options);
    if (!r.compiled) {
        r.error = r.compiled.error();
        return r;
    }
    const plan& p = *r.compiled;
    session s(p);
    REQUIRE(s.state() == status::ok);
    for (std::size_t i = 0; i < fed.size(); ++i)
        REQUIRE(s.bind_input(i, fed[i]->bytes(), fed[i]->size_bytes()) == status::ok);
    for (std::size_t k = 0; k < p.output_count(); ++k) {
        result<tensor> t = tensor::create(p.output(k).type, p.output(k).dims);
        REQUIRE(t);
        REQUIRE(s.bind_output(k, t->bytes(), t->size_bytes()) == status::ok);
        r.outputs.push_back(std::move(*t));
    }
    REQUIRE(s.run() == status::ok);
    return r;
}

/// Runs the node both ways (graph inputs, and constants folded at compile time) and checks that
/// the two agree bit for bit; returns the first.
inline node_run run_node_both_ways(const std::string& op_type, const std::vector<tensor>& inputs, std::vector<attribute> attributes = {},
                                   std::size_t output_count = 1) {
    node_run a = run_node(op_type, inputs, attributes, output_count, feed::inputs);
    if (!a.compiled) return a;
    node_run b = run_node(op_type, inputs, attributes, output_count, feed::constants);
    REQUIRE_MESSAGE(b.compiled, b.error.message);
    REQUIRE(a.outputs.size() == b.outputs.size());
    for (std::size_t k = 0; k < a.outputs.size(); ++k) {
        REQUIRE(a.outputs[k].dims() == b.outputs[k].dims());
        REQUIRE(a.outputs[k].size_bytes() == b.outputs[k].size_bytes());
        if (a.outputs[k].size_bytes() != 0)  // empty tensors may hold null, which memcmp must not see
            CHECK(std::memcmp(a.outputs[k].bytes(), b.outputs[k].bytes(), a.outputs[k].size_bytes()) == 0);
    }
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
/// planner may run it in place. Compiles (required to succeed), runs once on x.
struct chain_run {
    result<plan> compiled = error_info{status::invalid_argument, -1, "not compiled"};
    bool shared = false;  ///< the op's output shares the buffer of its input (the first Relu's output)
    std::vector<float> y;
};

inline chain_run run_in_chain(const std::string& op_type, const tensor& x, const std::vector<tensor>& constants = {},
                              std::vector<attribute> attributes = {}) {
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
    c.compiled = compile(*g);
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
