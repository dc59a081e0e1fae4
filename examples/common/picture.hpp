// SPDX-License-Identifier: Apache-2.0
// What the tools that feed pictures to a model (classify, ember-quantize) share: the model input
// [N, C, H, W] the pictures are fitted to, and one picture file -> that input: decoded, converted
// to gray (Pillow's weights) when C is 1, resized to W x H (Pillow's bilinear; with a resize S
// the shorter side goes to S first and the middle W x H is cropped, torchvision's Resize(S) +
// CenterCrop), then scaled to [0, 1] and normalised (mean, std, optionally as B, G, R).
#pragma once

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <string>

#include <ember/ember.hpp>
#include <ember/image.hpp>

#include "cli.hpp"

namespace example {

/// The model input [N, C, H, W] that the pictures are fitted to.
struct input_geometry {
    int channels = 0, height = 0, width = 0;
};

/// The geometry of g's one input, or fail() naming the model and what `tool` needs.
inline input_geometry geometry_of(const ember::graph& g, const std::string& model, const std::string& tool) {
    if (g.inputs.size() != 1)
        fail("model '" + model + "'", ember::detail::format("has {} inputs; {} feeds models with one image input", g.inputs.size(), tool));
    const ember::value& in = g.values[g.inputs[0]];
    const ember::partial_shape& d = in.declared;
    if (in.type != ember::dtype::float32 || !d.rank_known || d.rank() != 4 || !d.dims[1].known() || !d.dims[2].known() || !d.dims[3].known() ||
        (d.dims[1].value != 1 && d.dims[1].value != 3))
        fail("model '" + model + "'",
             ember::detail::format("its input '{}' is {} {}; {} needs float32 [N, 1 or 3, H, W] with C, H and W fixed", in.name, in.type, d,
                                   tool));
    return {static_cast<int>(d.dims[1].value), static_cast<int>(d.dims[2].value), static_cast<int>(d.dims[3].value)};
}

/// "0.485,0.456,0.406" -> up to 4 values; one value serves every channel.
inline std::array<float, 4> parse_floats(const std::string& flag, const std::string& text) {
    std::array<float, 4> out{0, 0, 0, 0};
    std::size_t n = 0, at = 0;
    while (at <= text.size()) {
        const std::size_t comma = std::min(text.find(',', at), text.size());
        const std::string part = text.substr(at, comma - at);
        char* end = nullptr;
        const float v = std::strtof(part.c_str(), &end);
        if (part.empty() || *end != '\0' || n == 4) fail(flag, "expected up to 4 numbers separated by commas, got '" + text + "'", exit_usage);
        out[n++] = v;
        at = comma + 1;
    }
    for (std::size_t i = n; i < 4; ++i) out[i] = out[n - 1];
    return out;
}

/// Whether p is a picture the decoder reads (.jpg, .jpeg, .png, .bmp, any case).
inline bool is_picture(const std::filesystem::path& p) {
    std::string ext = p.extension().string();
    for (char& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return ext == ".jpg" || ext == ".jpeg" || ext == ".png" || ext == ".bmp";
}

/// The buffers one picture passes through, reused from picture to picture.
struct picture_buffers {
    ember::image::image decoded, gray, resized, cropped;
};

/// Decodes and pre-processes the picture at path into out (C x H x W floats of geo). Returns ""
/// or why the picture cannot be used.
inline std::string picture_to_input(const std::string& path, const input_geometry& geo, int resize, const ember::image::normalize_options& norm,
                                    ember::image::decoder& dec, ember::image::resizer& rs, picture_buffers& b, float* out) {
    namespace img = ember::image;
    // Decode as the file is, then convert: Pillow's gray weights, not stb_image's.
    img::decode_options d;
    d.channels = geo.channels == 3 ? 3 : 0;
    if (ember::result<void> r = dec.decode_file(path, b.decoded, d); !r) return r.error().message;
    const img::image* at = &b.decoded;
    if (geo.channels == 1 && b.decoded.channels() != 1) {
        if (ember::result<void> r = b.gray.reshape(at->width(), at->height(), 1); !r) return r.error().message;
        if (ember::result<void> r = img::to_grayscale(at->view(), b.gray.view()); !r) return r.error().message;
        at = &b.gray;
    }
    const int c = at->channels();
    if (resize > 0) {
        const img::extent e = img::fit_shorter_side(at->width(), at->height(), resize);
        if (e.width < geo.width || e.height < geo.height)
            return ember::detail::format("--resize {} gives {}x{}, smaller than the model's {}x{}", resize, e.width, e.height, geo.width, geo.height);
        if (ember::result<void> r = b.resized.reshape(e.width, e.height, c); !r) return r.error().message;
        if (ember::result<void> r = rs.resize(at->view(), b.resized.view()); !r) return r.error().message;
        if (ember::result<void> r = b.cropped.reshape(geo.width, geo.height, c); !r) return r.error().message;
        if (ember::result<void> r = img::center_crop(b.resized.view(), b.cropped.view()); !r) return r.error().message;
    } else {
        if (ember::result<void> r = b.cropped.reshape(geo.width, geo.height, c); !r) return r.error().message;
        if (ember::result<void> r = rs.resize(at->view(), b.cropped.view()); !r) return r.error().message;
    }
    const ember::tensor_view<float> input(out, ember::shape{1, geo.channels, geo.height, geo.width});
    if (ember::result<void> r = img::to_tensor(b.cropped.view(), input, norm); !r) return r.error().message;
    return {};
}

} // namespace example
