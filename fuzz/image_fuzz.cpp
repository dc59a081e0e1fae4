// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: picture decoding (image/decode.hpp: stb_image's PNG, JPEG and BMP readers
// behind ember's checks), the first thing a classify or detect pipeline does with a user's
// file; what decodes is resized to 32x32 and turned into a float tensor, as the examples do.
#include <cstddef>
#include <cstdint>
#include <vector>

#include <ember/image.hpp>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static ember::image::decoder decoder;  // reused, as a pipeline does
    static ember::image::resizer resizer;
    ember::image::decode_options o;
    // The fuzzer's budget: 256x256 and below decode through the same code paths as large
    // pictures; a 4-megapixel cap let one input inflate 16 MB and cost milliseconds.
    o.max_pixels = std::int64_t{1} << 16;
    ember::image::image picture, small;
    if (!decoder.decode_memory(data, size, picture, o)) return 0;
    if (!small.reshape(32, 32, picture.channels())) return 0;
    if (!resizer.resize(picture.view(), small.view())) return 0;
    std::vector<float> pixels(static_cast<std::size_t>(32 * 32 * picture.channels()));
    ember::tensor_view<float> x(pixels.data(), {1, picture.channels(), 32, 32});
    (void)ember::image::to_tensor(small.view(), x);
    return 0;
}
