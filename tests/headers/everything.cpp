// SPDX-License-Identifier: Apache-2.0
// Every public header in a second TU of the test binary: a non-inline function defined in a
// header would be defined twice and fail to link.
#include <ember/ember.hpp>
#include <ember/onnx.hpp>
#include <ember/image.hpp>
#include <ember/post.hpp>
#include <ember/tiny.hpp>
#include <ember/quant/quant.hpp>
