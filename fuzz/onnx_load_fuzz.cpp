// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: ONNX load + compile + run, the path a model from a mod or the network takes.
// What loads is compiled with tight limits (the fuzzer's memory, not a model's: values up to
// 16 MiB, arenas up to 64 MiB), every input of unknown size given dimension 1; what compiles
// is run once on zeroed inputs. Any bytes must end in a status, never a crash or a report.
#include <cstddef>
#include <cstdint>

#include <ember/ember.hpp>
#include <ember/onnx.hpp>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    ember::onnx::load_options lo;
    lo.max_nodes = 4096;
    lo.max_model_bytes = std::size_t{1} << 20;
    ember::result<ember::graph> g = ember::onnx::load_memory(data, size, lo);
    if (!g) return 0;
    ember::compile_options co;
    co.max_value_bytes = std::size_t{16} << 20;
    co.max_arena_bytes = std::size_t{64} << 20;
    co.max_threads = 1;
    for (ember::value_id v : g->inputs) {
        const ember::partial_shape& declared = g->values[v].declared;
        if (!declared.rank_known || !ember::shape::valid_rank(declared.rank())) continue;
        ember::shape dims;
        for (const ember::dim& d : declared.dims) dims.push_back(d.known() ? d.value : 1);
        co.input_shapes.push_back({g->values[v].name, dims});
    }
    ember::result<ember::plan> p = ember::compile(*g, co);
    if (!p) return 0;
    ember::session s(*p);
    if (s.state() == ember::status::ok) (void)s.run();
    return 0;
}
