// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include <cstring>
#include <thread>
#include <vector>

#include <ember/ember.hpp>

#include "support/check.hpp"

using ember::dtype;
using ember::status;

namespace {
// y = relu(x * w + b) over [batch, 4] x [4, 3]
ember::plan small_mlp(std::int64_t batch) {
    ember::graph_builder b("mlp");
    const auto x = b.input("x", dtype::float32, {"batch", 4});
    const auto w = b.constant("w", ember::test::random_f32({4, 3}, 11));
    const auto bias = b.constant("b", ember::test::random_f32({3}, 12));
    b.output(b.node("Relu", {b.node("Gemm", {x, w, bias})}), "y");
    ember::compile_options o;
    o.dim_values = {{"batch", batch}};
    auto p = ember::compile(*std::move(b).build(), o);
    REQUIRE_MESSAGE(p, p.error().message);
    return std::move(*p);
}
} // namespace

TEST_CASE("session: bind by name and by index; sizes, dtypes and names are checked") {
    const ember::plan p = small_mlp(2);
    std::vector<std::byte> arena(p.arena_bytes());
    ember::session s(p, arena);
    REQUIRE(s.state() == status::ok);
    float x[8] = {};
    float y[6] = {};
    double wrong_type[8] = {};
    float too_short[7] = {};
    CHECK(s.bind_input("x", x) == status::ok);
    CHECK(s.bind_input(0, x) == status::ok);
    CHECK(s.bind_input("nope", x) == status::invalid_argument);
    CHECK(s.bind_input(1, x) == status::invalid_argument);
    CHECK(s.bind_input("x", wrong_type) == status::invalid_argument);
    CHECK(s.bind_input("x", too_short) == status::invalid_argument);
    CHECK(s.bind_input(0, reinterpret_cast<const std::byte*>(x) + 1, sizeof x) == status::invalid_argument);  // misaligned
    CHECK(s.bind_output("y", y) == status::ok);
    CHECK(s.bind_output("x", y) == status::invalid_argument);
    CHECK(p.input_index("x") == 0);
    CHECK(p.output_index("y") == 0);
    CHECK(p.input_index("y") == ember::plan::npos);
}

TEST_CASE("session: unbound inputs and outputs live in the arena and can be used directly") {
    const ember::plan p = small_mlp(3);
    ember::session s(p);
    ember::tensor_view<float> in = s.input<float>(0);
    REQUIRE(in);
    CHECK(in.dims() == ember::shape{3, 4});
    CHECK_FALSE(s.input<int>(0));  // wrong type: an empty view
    const ember::tensor x = ember::test::random_f32({3, 4}, 5);
    std::memcpy(in.data(), x.bytes(), x.size_bytes());
    REQUIRE(s.run() == status::ok);
    std::vector<float> arena_out(s.output<float>(0).begin(), s.output<float>(0).end());

    // the same through bound buffers
    std::vector<float> bound_out(9);
    ember::session t(p);
    REQUIRE(t.bind_input(0, x.bytes(), x.size_bytes()) == status::ok);
    REQUIRE(t.bind_output(0, bound_out) == status::ok);
    REQUIRE(t.run() == status::ok);
    CHECK(arena_out == bound_out);
    CHECK(t.output<float>(0).data() == bound_out.data());
    t.unbind_output(0);
    CHECK(t.output<float>(0).data() != bound_out.data());
}

TEST_CASE("session: runs are repeatable and sessions on many threads share one plan") {
    const ember::plan p = small_mlp(4);
    const ember::tensor x = ember::test::random_f32({4, 4}, 9);
    std::vector<float> expected(12);
    {
        ember::session s(p);
        REQUIRE(s.bind_input(0, x.bytes(), x.size_bytes()) == status::ok);
        REQUIRE(s.bind_output(0, expected) == status::ok);
        REQUIRE(s.run() == status::ok);
        std::vector<float> again(12);
        REQUIRE(s.bind_output(0, again) == status::ok);
        REQUIRE(s.run() == status::ok);
        CHECK(again == expected);
    }
    std::vector<std::vector<float>> results(4, std::vector<float>(12));
    std::vector<int> ok(4, 0);
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t)
        threads.emplace_back([&, t] {
            ember::session s(p);
            bool good = s.bind_input(0, x.bytes(), x.size_bytes()) == status::ok && s.bind_output(0, results[t]) == status::ok;
            for (int i = 0; i < 200 && good; ++i) good = s.run() == status::ok;
            ok[t] = good;
        });
    for (auto& th : threads) th.join();
    for (int t = 0; t < 4; ++t) {
        CHECK(ok[t]);
        CHECK(results[t] == expected);
    }
}
