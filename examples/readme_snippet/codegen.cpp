// SPDX-License-Identifier: Apache-2.0
// The README's ember-codegen snippet, verbatim (the readme.snippets test keeps it the same), over
// fashion_mnist_model.hpp, which the build generates from the bundled model with
//     ember-codegen models/fashion_mnist/model.onnx -o fashion_mnist_model.hpp --namespace fashion_mnist
// and a main() that classifies two of the bundled pictures with it. Only main() reads files (the
// pictures); the model comes from the program itself.
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include <ember/image.hpp>

#include "fashion_mnist_model.hpp"  // made by ember-codegen: the weights and the graph, no parser

// At level load: the plan straight from the arrays compiled into the program.
ember::result<ember::plan> load_classifier() {
    ember::compile_options options;
    options.dim_values = {{"batch", 1}};
    return fashion_mnist::compile(options);  // build_graph() (no file, no parsing), then compile()
}

// Per frame: the class of one 28x28 gray picture (28 * 28 pixels in 0..1, row by row).
int classify(ember::session& session, const std::vector<float>& pixels) {
    float scores[10] = {};
    if (session.bind_input(0, pixels) != ember::status::ok || session.bind_output(0, scores) != ember::status::ok ||
        session.run() != ember::status::ok)
        return -1;
    return static_cast<int>(std::max_element(scores, scores + 10) - scores);
}

int main() {
    ember::result<ember::plan> plan = load_classifier();
    if (!plan) return std::fprintf(stderr, "%s\n", plan.error().message.c_str()), 1;
    ember::session session(*plan);
    const std::string dir = EMBER_BUNDLED_MODEL_DIR;
    for (const char* file : {"9_ankle_boot.png", "1_trouser.png"}) {
        ember::result<ember::image::image> picture = ember::image::decode_file(dir + "/images/" + file);
        if (!picture) return std::fprintf(stderr, "%s\n", picture.error().message.c_str()), 1;
        std::vector<float> pixels(28 * 28);
        if (auto r = ember::image::to_tensor(picture->view(), ember::tensor_view<float>(pixels.data(), {1, 1, 28, 28})); !r)
            return std::fprintf(stderr, "%s\n", r.error().message.c_str()), 1;
        std::printf("%s: class %d\n", file, classify(session, pixels));
    }
    return 0;
}
