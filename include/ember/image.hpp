// SPDX-License-Identifier: Apache-2.0
// The image pipeline, opt-in (ember.hpp never includes it): decode JPEG/PNG/BMP, resize,
// letterbox, crop, grayscale, to and from normalised tensors, write PNG/JPEG, draw boxes and
// labels. Everything writes into the caller's images and tensors; decoder and resizer keep their
// scratch, so a loop over pictures allocates nothing after the first.
//
//   ember::image::decoder dec;
//   ember::image::resizer rs;
//   ember::image::image picture, input;
//   dec.decode_file("cat.jpg", picture, {3});               // RGB
//   input.reshape(224, 224, 3);
//   rs.resize(picture.view(), input.view());                 // Pillow's bilinear
//   ember::image::to_tensor(input.view(), tensor, norm);     // [1, 3, 224, 224] floats
//
// Parts: image/image.hpp (the image type), image/decode.hpp (stb_image), image/resize.hpp,
// image/transform.hpp, image/encode.hpp (stb_image_write), image/draw.hpp (stb_easy_font).
// stb comes from Debian's libstb-dev (<stb/stb_image.h>) or any <stb_image.h> on the path.
#pragma once

#include "ember/image/decode.hpp"
#include "ember/image/draw.hpp"
#include "ember/image/encode.hpp"
#include "ember/image/image.hpp"
#include "ember/image/resize.hpp"
#include "ember/image/transform.hpp"
