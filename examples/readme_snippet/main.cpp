// SPDX-License-Identifier: Apache-2.0
// The README's quick start, verbatim (the readme.snippets test keeps the two the same).
#include <cstddef>
#include <cstdio>
#include <utility>
#include <vector>

#include <ember/ember.hpp>

// Your logger; here, stderr.
static int report(const ember::error_info& e) {
    std::fprintf(stderr, "ember: %s\n", e.message.c_str());
    return 1;
}

int main() {
    // A graph: y = relu(x * w + b), built in C++. Every value has an id; nodes take ids.
    ember::graph_builder builder("quick_start");
    ember::value_id x = builder.input("x", ember::dtype::float32, {"batch", 3});
    ember::value_id w = builder.constant<float>("w", {3, 2}, {1, -1, 2, -2, 3, -3});
    ember::value_id b = builder.constant<float>("b", {2}, {0.5f, 0.25f});
    builder.output(builder.node("Relu", {builder.node("Gemm", {x, w, b})}), "y");
    ember::result<ember::graph> graph = std::move(builder).build();  // validates
    if (!graph) return report(graph.error());

    ember::compile_options options;
    options.input_shapes = {{"x", {2, 3}}};                            // batch = 2
    ember::result<ember::plan> plan = ember::compile(*graph, options);  // shapes, folding, arena
    if (!plan) return report(plan.error());

    std::vector<std::byte> arena(plan->arena_bytes());  // the caller owns every byte
    ember::session session(*plan, arena);               // from here on: no allocation, no throw
    const float in[2 * 3] = {1, 2, 3, -1, -2, -3};
    float out[2 * 2] = {};
    if (session.bind_input("x", in) != ember::status::ok ||  // sizes and types checked
        session.bind_output("y", out) != ember::status::ok)
        return 1;
    if (session.run() != ember::status::ok) return 1;      // per frame: only this
    std::printf("y = [[%g, %g], [%g, %g]]\n", out[0], out[1], out[2], out[3]);  // [[14.5, 0], [0, 14.25]]
    return 0;
}
