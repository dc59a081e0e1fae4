// SPDX-License-Identifier: Apache-2.0
// tiny::network<Layers...>: a chain of fixed-size layers, each layer's output the next one's
// input, with every weight stored inline (no heap, no arena, no dispatch, no virtual call).
#pragma once

#include <array>
#include <cstddef>
#include <string>
#include <tuple>
#include <utility>

#include "ember/config.hpp"
#include "ember/detail/format.hpp"
#include "ember/graph/graph.hpp"
#include "ember/status.hpp"
#include "ember/tiny/graph_walk.hpp"

EMBER_NAMESPACE_BEGIN
namespace tiny {

template <class... Layers>
class network {
    static_assert(sizeof...(Layers) > 0, "tiny::network needs at least one layer");
    using layer_tuple = std::tuple<Layers...>;

public:
    template <std::size_t I>
    using layer_type = std::tuple_element_t<I, layer_tuple>;

    static constexpr std::size_t layer_count = sizeof...(Layers);
    static constexpr std::size_t in_size = layer_type<0>::in_size;
    static constexpr std::size_t out_size = layer_type<layer_count - 1>::out_size;
    /// Floats of recurrent state (each gru's h, in layer order); 0 for a stateless network.
    static constexpr std::size_t state_size = (Layers::state_size + ... + 0);

    using input = std::array<float, in_size>;
    using output = std::array<float, out_size>;
    /// The caller-held state of a recurrent network; value-initialise it (zeros) to start.
    using state = std::array<float, state_size>;

private:
    template <std::size_t... I>
    static constexpr bool chained(std::index_sequence<I...>) noexcept {
        return ((layer_type<I>::out_size == layer_type<I + 1>::in_size) && ... && true);
    }
    static_assert(chained(std::make_index_sequence<layer_count - 1>{}),
                  "tiny::network: each layer's out_size must be the next layer's in_size");

public:
    /// out[0..out_size) = the network of in[0..in_size). noexcept, allocates nothing (the
    /// activations between layers live on the stack), const: one network serves any number of
    /// threads. For a stateless network only.
    void run(const float* in, float* out) const noexcept {
        static_assert(state_size == 0, "tiny::network: this network has state (a gru): call run(in, out, state)");
        run_from<0>(in, out, nullptr);
    }
    /// One step of a recurrent network: state (state_size floats) is read and replaced.
    void run(const float* in, float* out, float* state_values) const noexcept { run_from<0>(in, out, state_values); }

    void run(const input& in, output& out) const noexcept { run(in.data(), out.data()); }
    void run(const input& in, output& out, state& s) const noexcept { run(in.data(), out.data(), s.data()); }
    output operator()(const input& in) const noexcept {
        output out;
        run(in.data(), out.data());
        return out;
    }

    /// Layer I, to set its weights or read them.
    template <std::size_t I>
    layer_type<I>& layer() noexcept { return std::get<I>(layers_); }
    template <std::size_t I>
    const layer_type<I>& layer() const noexcept { return std::get<I>(layers_); }

    /// "network<dense<32, 64, relu>, dense<64, 8, identity>>", for messages.
    static std::string describe() {
        std::string s = "network<";
        std::size_t k = 0;
        ((s += (k++ ? ", " : "") + Layers::describe()), ...);
        return s + ">";
    }

    /// Reads every layer's weights from g, layer by layer along the chain from g's first input
    /// to its first output: each layer's nodes (Gemm, or MatMul + Add, then the activation; Conv;
    /// GRU) in order, ops that only relabel the shape skipped. Every weight's shape and every
    /// attribute is checked first; on a mismatch nothing changes and the error names the layer
    /// and the node: "tiny network layer 2 of 3 (dense<64, 64, relu>): node 2 'fc2' (Gemm): B
    /// has shape [64, 32] with transB = 1; expected [64, 64]" (shape_mismatch; unsupported_op for
    /// an op or attribute the layer does not do, invalid_model for a chain that ends early or
    /// goes on). Allocates while it reads; never called on the per-call path.
    [[nodiscard]] result<void> load(const graph& g) {
        for (const bool commit : {false, true}) {
            detail::graph_walk walk(g);
            if (walk.current() == no_value) return error_info{status::invalid_model, -1, "tiny network: the graph has no input"};
            std::string expected;
            const partial_shape& declared = g.values[walk.current()].declared;
            if (!layer_type<0>::accepts_input(declared, expected))
                return error_info{status::shape_mismatch, -1,
                                  ember::detail::format("tiny network: graph input '{}' has shape {}; layer 1 ({}) reads {}",
                                                        g.values[walk.current()].name, declared, layer_type<0>::describe(), expected)};
            if (result<void> r = load_layers(walk, commit, std::make_index_sequence<layer_count>{}); !r) return r;
            if (result<void> r = walk.finish(layer_count); !r) return r;
        }
        return {};
    }

private:
    template <std::size_t I>
    void run_from(const float* x, float* out, float* state_values) const noexcept {
        if constexpr (I + 1 == layer_count) {
            std::get<I>(layers_).run(x, out, state_values);
        } else {
            alignas(64) float y[layer_type<I>::out_size];
            std::get<I>(layers_).run(x, y, state_values);
            run_from<I + 1>(y, out, state_values == nullptr ? nullptr : state_values + layer_type<I>::state_size);
        }
    }

    template <std::size_t... I>
    result<void> load_layers(detail::graph_walk& walk, bool commit, std::index_sequence<I...>) {
        result<void> r;
        (void)((walk.enter_layer(I, layer_count, layer_type<I>::describe()), r = std::get<I>(layers_).load(walk, commit), bool(r)) && ...);
        return r;
    }

    layer_tuple layers_;
};

} // namespace tiny
EMBER_NAMESPACE_END
