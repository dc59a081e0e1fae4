// SPDX-License-Identifier: Apache-2.0
#include <cstdio>
#include <vector>

#include <ember/ember.hpp>

int main() {
    ember::graph_builder b("consumer");
    const ember::value_id x = b.input("x", ember::dtype::float32, {4});
    const ember::value_id k = b.constant<float>("k", {4}, {1, 2, 3, 4});
    b.output(b.node("Mul", {x, k}), "y");
    ember::result<ember::graph> g = std::move(b).build();
    if (!g) return 1;
    ember::result<ember::plan> p = ember::compile(*g);
    if (!p) return 2;
    ember::session s(*p);
    const float in[4] = {1, 1, 2, 2};
    float out[4] = {};
    if (s.bind_input(0, in) != ember::status::ok || s.bind_output(0, out) != ember::status::ok || s.run() != ember::status::ok) return 3;
    if (out[0] != 1 || out[1] != 2 || out[2] != 6 || out[3] != 8) return 4;
    std::printf("consumer: ok (ember %s)\n", EMBER_VERSION_STRING);
    return 0;
}
