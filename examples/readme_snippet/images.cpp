// SPDX-License-Identifier: Apache-2.0
// The README's image and post-processing snippets, verbatim (the readme.snippets test keeps
// them the same), and a main() that runs them: the classifier on the bundled Fashion-MNIST
// model and pictures, the detection step on a hand-made YOLOv8 head.
#include <array>
#include <cstddef>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include <ember/ember.hpp>
#include <ember/image.hpp>
#include <ember/onnx.hpp>
#include <ember/post.hpp>

// One picture -> the 3 best classes of the bundled 28x28 gray model. Decoder, resizer, pictures
// and buffers live across calls: after the first picture, nothing here allocates.
struct classifier {
    explicit classifier(ember::session& s) : session(s) {}
    ember::session& session;
    ember::image::decoder decoder;
    ember::image::resizer resizer;
    ember::image::image picture, input;
    std::vector<float> pixels = std::vector<float>(28 * 28), scores = std::vector<float>(10);
    std::array<ember::post::scored_class, 3> best;

    ember::result<void> classify(const std::string& path) {
        if (auto r = decoder.decode_file(path, picture); !r) return r;
        if (picture.channels() != 1) return {ember::status::invalid_argument, path + ": not a gray picture"};
        if (auto r = input.reshape(28, 28, 1); !r) return r;
        if (auto r = resizer.resize(picture.view(), input.view()); !r) return r;  // Pillow's bilinear
        ember::tensor_view<float> x(pixels.data(), {1, 1, 28, 28});
        if (auto r = ember::image::to_tensor(input.view(), x); !r) return r;     // pixel / 255, NCHW
        if (session.bind_input(0, pixels) != ember::status::ok || session.bind_output(0, scores) != ember::status::ok ||
            session.run() != ember::status::ok)
            return {ember::status::invalid_argument, path + ": the model did not run"};
        if (ember::post::softmax(scores, scores) != ember::status::ok || ember::post::top_k(scores, best) != ember::status::ok)
            return {ember::status::invalid_argument, path + ": no scores"};
        return {};
    }
};

// A YOLOv8 head [1, 4 + classes, anchors] on a letterboxed input -> boxes on the original
// picture, drawn. `found` is sized once (its size caps the detections kept before NMS).
ember::result<std::size_t> detect(ember::tensor_view<const float> head, const ember::image::letterbox_info& box,
                                  ember::image::image& picture, std::vector<ember::post::detection>& found,
                                  const ember::post::labels& names) {
    ember::result<std::size_t> n = ember::post::decode_yolov8(head, found);  // score >= 0.25
    if (!n) return n;
    ember::result<std::size_t> kept = ember::post::nms(ember::span(found.data(), *n));  // IoU 0.45, per class
    if (!kept) return kept;
    for (std::size_t i = 0; i < *kept; ++i)
        found[i].bounds = ember::post::unletterbox(found[i].bounds, box.scale, box.pad_x, box.pad_y,
                                                   static_cast<float>(picture.width()), static_cast<float>(picture.height()));
    ember::span<const ember::post::detection> shown(found.data(), *kept);
    if (auto r = ember::image::draw_detections(picture.view(), shown, names); !r) return r.error();
    return kept;
}

int main() {
    const std::string dir = EMBER_BUNDLED_MODEL_DIR;
    ember::result<ember::graph> g = ember::onnx::load_file(dir + "/model.onnx");
    if (!g) return std::fprintf(stderr, "%s\n", g.error().message.c_str()), 1;
    ember::compile_options options;
    options.input_shapes = {{"input", {1, 1, 28, 28}}};
    ember::result<ember::plan> plan = ember::compile(*g, options);
    if (!plan) return std::fprintf(stderr, "%s\n", plan.error().message.c_str()), 1;
    ember::session session(*plan);
    classifier c(session);
    ember::result<ember::post::labels> names = ember::post::labels::load_file(dir + "/labels.txt");
    if (!names) return std::fprintf(stderr, "%s\n", names.error().message.c_str()), 1;
    for (const char* file : {"9_ankle_boot.png", "1_trouser.png"}) {
        if (auto r = c.classify(dir + "/images/" + file); !r) return std::fprintf(stderr, "%s\n", r.error().message.c_str()), 1;
        std::printf("%s: %s %.4f\n", file, names->name(static_cast<std::size_t>(c.best[0].index)).c_str(),
                    static_cast<double>(c.best[0].score));
    }

    // Two overlapping boxes of class 0 and one of class 1 on a 64x64 input letterboxed from
    // 128x64 (scale 0.5, 16 pixels of padding above and below).
    const float head_values[6 * 3] = {
        20, 22, 44,  // cx
        30, 31, 30,  // cy
        10, 10, 8,   // w
        10, 10, 8,   // h
        0.9f, 0.8f, 0.1f,  // class 0
        0.0f, 0.0f, 0.7f,  // class 1
    };
    ember::tensor_view<const float> head(head_values, {1, 6, 3});
    ember::image::image picture;
    if (!picture.reshape(128, 64, 3)) return 1;
    ember::image::letterbox_info box{0.5f, 0.0f, 16.0f, 64, 32};
    std::vector<ember::post::detection> found(100);
    ember::result<std::size_t> kept = detect(head, box, picture, found, ember::post::labels::from_lines({"cat", "dog"}));
    if (!kept) return std::fprintf(stderr, "%s\n", kept.error().message.c_str()), 1;
    for (std::size_t i = 0; i < *kept; ++i)
        std::printf("box %d %.2f [%g, %g, %g, %g]\n", found[i].class_id, static_cast<double>(found[i].score),
                    static_cast<double>(found[i].bounds.x0), static_cast<double>(found[i].bounds.y0),
                    static_cast<double>(found[i].bounds.x1), static_cast<double>(found[i].bounds.y1));
    return 0;
}
