// SPDX-License-Identifier: Apache-2.0
// Built with -fno-exceptions -fno-rtti: builds a small MLP, compiles and runs it end to end and
// checks the numbers. Exit code 0 on success, 1 with a line on stderr otherwise.
#include <cmath>
#include <cstdio>
#include <vector>

#include <ember/ember.hpp>

#if defined(__cpp_exceptions) || defined(__GXX_RTTI)
#error "this test must be built with -fno-exceptions -fno-rtti"
#endif

static int fail(const char* what) {
    std::fprintf(stderr, "noexcept test: %s\n", what);
    return 1;
}

int main() {
    ember::graph_builder b("mlp");
    const ember::value_id x = b.input("x", ember::dtype::float32, {"batch", 3});
    const ember::value_id w = b.constant<float>("w", {3, 2}, {1, -1, 2, -2, 3, -3});
    const ember::value_id bias = b.constant<float>("b", {2}, {0.5f, 0.25f});
    const ember::value_id h = b.node("Gemm", {x, w, bias});
    b.output(b.node("Relu", {h}), "y");
    ember::result<ember::graph> g = std::move(b).build();
    if (!g) return fail(g.error().message.c_str());

    ember::compile_options options;
    options.dim_values = {{"batch", 2}};
    ember::result<ember::plan> p = ember::compile(*g, options);
    if (!p) return fail(p.error().message.c_str());

    std::vector<std::byte> arena(p->arena_bytes());
    ember::session s(*p, arena);
    const float in[6] = {1, 2, 3, -1, -2, -3};
    float out[4] = {};
    if (s.bind_input("x", in) != ember::status::ok || s.bind_output("y", out) != ember::status::ok) return fail("bind");
    if (s.run() != ember::status::ok) return fail("run");
    const float expected[4] = {14.5f, 0.0f, 0.0f, 14.25f};
    for (int i = 0; i < 4; ++i)
        if (std::fabs(out[i] - expected[i]) > 1e-6f) return fail("wrong result");

    // An error still comes back as a value, not an exception.
    ember::graph_builder bad("bad");
    bad.output(bad.node("NoSuchOp", {bad.input("x", ember::dtype::float32, {1})}));
    ember::result<ember::graph> bg = std::move(bad).build();
    if (!bg) return fail("bad graph should build");
    ember::result<ember::plan> bp = ember::compile(*bg);
    if (bp || bp.error().code != ember::status::unsupported_op) return fail("unsupported op not reported");
    std::printf("noexcept test: ok\n");
    return 0;
}
