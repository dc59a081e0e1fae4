// SPDX-License-Identifier: Apache-2.0
// Clip: y = min(max(x, lo), hi), same shape. Opset 6: lo/hi are the float attributes min/max
// (default: the lowest/highest float). Opset 11+: lo/hi are optional one-element inputs of x's
// dtype (absent: the type's lowest/highest), constants or run-time values. Dtypes: floats;
// every integer type from opset 12; bfloat16 from 13. When lo > hi every element becomes hi
// (numpy.clip's rule); NaN stays NaN.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <type_traits>

#include "ember/ops/element_types.hpp"
#include "ember/ops/op_support.hpp"

EMBER_NAMESPACE_BEGIN
namespace ops {

struct clip {
    static constexpr std::string_view onnx_name = "Clip";
    static constexpr op_flags flags = op_flags::elementwise | op_flags::in_place | op_flags::epilogue;

    struct attributes {
        std::optional<float> min;  ///< opset < 11 only
        std::optional<float> max;
    };
    static constexpr auto onnx_attributes = std::make_tuple(attr("min", &attributes::min), attr("max", &attributes::max));

    struct args {
        operand x, y, lo, hi;
        bool has_lo = false, has_hi = false;  ///< read lo/hi from their operands (opset 11+)
        float attr_lo = 0.0f, attr_hi = 0.0f;
        bool use_attrs = false;  ///< opset < 11: the attribute values
        std::size_t n = 0;
    };

    static dtype_set types(std::int64_t opset) noexcept {
        return types::with_bf16(opset >= 12 ? types::numeric : types::floats, opset);
    }

    static status infer(const attributes& a, infer_context& ctx) {
        if (ctx.opset() < 11) {
            if (status s = ctx.expect_inputs(1, 1); s != status::ok) return s;
        } else {
            if (a.min || a.max)
                return ctx.fail(status::invalid_model, "attributes 'min' and 'max' exist only before opset 11 (inputs since); the model has opset {}",
                                ctx.opset());
            if (status s = ctx.expect_inputs(1, 3); s != status::ok) return s;
        }
        if (status s = expect_dtype(ctx, 0, types(ctx.opset())); s != status::ok) return s;
        for (std::size_t i = 1; i < 3; ++i) {
            if (!ctx.has_input(i)) continue;
            const char* what = i == 1 ? "min" : "max";
            if (ctx.input_type(i) != ctx.input_type(0))
                return ctx.fail(status::invalid_model, "input {} ({}) has dtype {}, the input has {}", i, what, ctx.input_type(i), ctx.input_type(0));
            if (ctx.input_shape(i).elements() != 1)
                return ctx.fail(status::invalid_model, "input {} ({}) must be a scalar, got shape {}", i, what, ctx.input_shape(i));
        }
        ctx.set_output(0, ctx.input_type(0), ctx.input_shape(0));
        return status::ok;
    }

    template <class T>
    static void kernel(const void* p, const run_context& ctx) noexcept {
        const auto& a = *static_cast<const args*>(p);
        using C = compute_t<T>;
        C lo = std::numeric_limits<C>::lowest(), hi = std::numeric_limits<C>::max();
        if constexpr (std::is_floating_point_v<C>) {
            if (a.use_attrs) {
                lo = static_cast<C>(a.attr_lo);
                hi = static_cast<C>(a.attr_hi);
            }
        }
        if (a.has_lo) lo = element<T>::load(*ctx.at<const storage_t<T>>(a.lo));
        if (a.has_hi) hi = element<T>::load(*ctx.at<const storage_t<T>>(a.hi));
        const storage_t<T>* x = ctx.at<const storage_t<T>>(a.x);
        storage_t<T>* y = ctx.at<storage_t<T>>(a.y);
        for (std::size_t i = 0; i < a.n; ++i) {
            C v = element<T>::load(x[i]);
            v = v < lo ? lo : v;
            v = v > hi ? hi : v;
            y[i] = element<T>::store(v);
        }
    }

    static status bind(const attributes& attrs, bind_context& ctx) {
        args a;
        a.x = ctx.input(0);
        a.y = ctx.output(0);
        a.n = static_cast<std::size_t>(ctx.input_shape(0).elements());
        if (ctx.opset() < 11) {
            a.use_attrs = true;
            a.attr_lo = attrs.min.value_or(std::numeric_limits<float>::lowest());
            a.attr_hi = attrs.max.value_or(std::numeric_limits<float>::max());
        } else {
            a.has_lo = ctx.has_input(1);
            a.has_hi = ctx.has_input(2);
            if (a.has_lo) a.lo = ctx.input(1);
            if (a.has_hi) a.hi = ctx.input(2);
        }
        kernel_fn k = nullptr;
        visit_dtype(ctx.input_type(0), [&](auto tag) {
            using T = decltype(tag);
            if constexpr (!std::is_same_v<T, bool>) k = &kernel<T>;
        });
        if (!k) return ctx.fail(status::unsupported_op, "dtype {} is not supported", ctx.input_type(0));
        ctx.emit(k, a);
        return status::ok;
    }
};

} // namespace ops
EMBER_NAMESPACE_END
