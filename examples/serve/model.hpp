// SPDX-License-Identifier: Apache-2.0
// One model that ember-serve serves: loaded from its model.onnx, compiled through an
// ember::batcher (a plan per batch size), described as KServe v2 metadata, and running KServe v2
// infer requests (JSON in, JSON out) as batcher requests. Its counters feed /metrics.
#pragma once

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include <ember/ember.hpp>
#include <ember/onnx.hpp>
#include <ember/runtime/batcher.hpp>

#include "metrics.hpp"
#include "repository.hpp"
#include "tensor_json.hpp"

namespace serve {

/// The batcher settings every model gets (ember-serve's command line).
struct serving_options {
    std::size_t max_batch = 8;
    std::chrono::microseconds max_delay{1000};
    std::chrono::microseconds shed_after{0};
    std::size_t max_queue = 1024;
    std::size_t instances = 1;
    const ember::executor* exec = nullptr;
};

/// Whether every input's first axis can be the batch: symbolic, or 1 (a model exported at batch
/// 1, whose first axis the batcher frees). A scalar input, or a first axis fixed above 1 (x[2, 3]
/// beside b[3], say), is not a batch axis: batching along it would change what the model computes.
inline bool has_batch_axis(const ember::graph& g) {
    for (ember::value_id v : g.inputs) {
        const ember::partial_shape& s = g.values[v].declared;
        if (s.rank_known && (s.rank() == 0 || (s.dims[0].known() && s.dims[0].value != 1))) return false;
    }
    return true;  // an unknown rank: the batcher says what it lacks
}

/// Gives a model without a batch axis one of size 1, so that the batcher (which needs every
/// input and output to have the batch first) can run it: each input x becomes an input of x's
/// shape with 1 in front, squeezed back to x, and each output y is unsqueezed to y's shape with
/// 1 in front. The names stay the model's; the inner values get "/item" appended.
inline ember::status add_unit_batch_axis(ember::graph& g) {
    const bool axes_as_input = g.opset_version() >= 13;  // an attribute before opset 13
    ember::value_id axes = ember::no_value;
    if (axes_as_input) {
        ember::result<ember::tensor> zero = ember::tensor::copy_of<std::int64_t>(ember::shape{1}, {0});
        if (!zero) return zero.error().code;
        ember::value c;
        c.name = "ember-serve/axis0";
        c.kind = ember::value_kind::constant;
        c.type = ember::dtype::int64;
        c.declared = ember::partial_shape(ember::shape{1});
        c.constant = static_cast<std::int32_t>(g.constants.size());
        g.constants.push_back(*std::move(zero));
        axes = static_cast<ember::value_id>(g.values.size());
        g.values.push_back(std::move(c));
    }
    const auto wrap = [&](const char* op, ember::value_id& kept, bool input) {
        const ember::value_id inner = kept;
        ember::value outer;
        outer.name = g.values[inner].name;
        outer.kind = input ? ember::value_kind::input : ember::value_kind::node_output;
        outer.type = g.values[inner].type;
        outer.declared = g.values[inner].declared;
        if (outer.declared.rank_known) outer.declared.dims.insert(outer.declared.dims.begin(), ember::dim(1));
        g.values[inner].name += "/item";
        const ember::value_id o = static_cast<ember::value_id>(g.values.size());
        g.values.push_back(std::move(outer));
        ember::node n;
        n.op_type = op;
        n.name = "ember-serve/" + std::string(op) + "/" + g.values[o].name;
        n.inputs = {input ? o : inner};
        if (axes_as_input) n.inputs.push_back(axes);
        else n.attributes.push_back(ember::attribute::of("axes", std::vector<std::int64_t>{0}));
        n.outputs = {input ? inner : o};
        ember::value& produced = g.values[n.outputs[0]];
        produced.kind = ember::value_kind::node_output;
        produced.producer = static_cast<std::int32_t>(g.nodes.size());
        g.nodes.push_back(std::move(n));
        kept = o;
    };
    for (ember::value_id& in : g.inputs) wrap("Squeeze", in, true);
    for (ember::value_id& out : g.outputs) wrap("Unsqueeze", out, false);
    return ember::status::ok;
}

/// An input or output as clients see it.
struct served_tensor {
    std::string name;
    ember::dtype type = ember::dtype::undefined;
    std::vector<std::int64_t> dims;  ///< -1 for the batch axis
    std::size_t item_bytes = 0;      ///< one item (the whole tensor for a model without a batch axis)
};

class served_model {
public:
    enum class state : int { loading, ready, failed };
    /// Infer requests by how they ended (ember_inference_requests_total's outcome label).
    enum outcome : std::size_t { success, invalid, failure, rejected, outcome_count };
    static constexpr std::array<const char*, outcome_count> outcome_names = {"success", "invalid", "failure", "rejected"};

    explicit served_model(model_source source) : source_(std::move(source)) {}

    const std::string& name() const noexcept { return source_.name; }
    const std::string& version() const noexcept { return source_.version; }
    /// ready: batcher(), metadata() and infer() may be used; failed: why_failed() says why.
    state current() const noexcept { return state_.load(std::memory_order_acquire); }
    const std::string& why_failed() const noexcept { return failure_; }
    const ember::batcher& batcher() const noexcept { return *batcher_; }

    /// Loads and compiles the model (while the server already answers; until this returns,
    /// current() is loading). Returns a note for the log (how it batches, when not as asked), or
    /// "" when there is none.
    std::string load(const serving_options& options) {
        ember::result<ember::graph> g = ember::onnx::load_file(source_.file.string());
        if (!g) return fail(g.error().message);
        const bool batch_axis = has_batch_axis(*g);
        std::string note;
        if (!batch_axis) {
            // No batch axis: every request is one whole tensor of the model's own shapes.
            // ember-serve adds an axis of 1 in front of every input and output
            // (add_unit_batch_axis) and serves it with max_batch 1: requests still queue, shed
            // and count as for any model, but each runs alone, one tensor per run.
            if (ember::status s = add_unit_batch_axis(*g); s != ember::status::ok) return fail("cannot add a batch axis to it");
            note = "no batch axis (an input is a scalar or its first axis is fixed above 1): each request is one tensor, run alone";
        }
        ember::batcher_options bo;
        bo.max_batch = batch_axis ? options.max_batch : 1;
        bo.max_delay = options.max_delay;
        bo.shed_after = options.shed_after;
        bo.max_queue = options.max_queue;
        bo.instances = options.instances;
        bo.exec = options.exec;
        ember::result<std::unique_ptr<ember::batcher>> b = ember::batcher::create(*g, {}, bo);
        if (!b && bo.max_batch > 1) {
            // The model does not compile, or its outputs do not follow the batch, at a larger
            // batch (a model exported at batch 1 with a Reshape to [1, -1], say): one item a run.
            note = "cannot batch it (" + b.error().message + "): one item per request, run alone";
            bo.max_batch = 1;
            b = ember::batcher::create(*g, {}, bo);
        }
        if (!b) return fail(b.error().message);
        batcher_ = *std::move(b);
        batched_ = batch_axis;
        const ember::plan& p = batcher_->smallest_plan();  // batch 1
        const auto describe = [&](const ember::io_info& io, std::size_t item_bytes) {
            served_tensor t{io.name, io.type, {}, item_bytes};
            for (std::size_t d = batch_axis ? 0 : 1; d < io.dims.rank(); ++d) t.dims.push_back(io.dims[d]);
            if (batched_) t.dims[0] = -1;
            return t;
        };
        for (std::size_t i = 0; i < p.input_count(); ++i) inputs_.push_back(describe(p.input(i), batcher_->input_item_bytes(i)));
        for (std::size_t i = 0; i < p.output_count(); ++i) outputs_.push_back(describe(p.output(i), batcher_->output_item_bytes(i)));
        state_.store(state::ready, std::memory_order_release);
        return note;
    }

    /// Refuses new requests, finishes the queued ones (batcher::stop).
    void stop() noexcept {
        if (batcher_) batcher_->stop();
    }

    /// GET /v2/models/{name}: name, versions, platform, inputs and outputs.
    json metadata() const {
        const auto tensors = [](const std::vector<served_tensor>& list) {
            json a = json::array();
            for (const served_tensor& t : list) a.push_back({{"name", t.name}, {"datatype", datatype_name(t.type)}, {"shape", t.dims}});
            return a;
        };
        return {{"name", name()}, {"versions", json::array({version()})}, {"platform", "ember"}, {"inputs", tensors(inputs_)}, {"outputs", tensors(outputs_)}};
    }

    /// POST /v2/models/{name}/infer: the answer's JSON, or an http_error (400 for a bad request,
    /// 503 when the batcher refuses it, 500 when the model fails to run).
    std::string infer(const std::string& body) const {
        json request;
        try {
            request = json::parse(body);
        } catch (const json::parse_error& e) {
            std::string why = e.what();  // "[json.exception.parse_error.101] parse error at line 1, ..."
            if (const std::size_t end = why.find("] "); why.rfind("[json.exception.", 0) == 0 && end != std::string::npos) why.erase(0, end + 2);
            bad_request("the body is not JSON: " + why);
        }
        if (!request.is_object()) bad_request("the body must be a JSON object with an 'inputs' array, not " + json_excerpt(request));
        const json* id = nullptr;
        if (auto it = request.find("id"); it != request.end()) {
            if (!it->is_string()) bad_request("'id' must be a string, not " + json_excerpt(*it));
            id = &*it;
        }

        // Inputs: every model input once, each with the same number of items.
        const auto inputs = request.find("inputs");
        if (inputs == request.end() || !inputs->is_array() || inputs->empty())
            bad_request("the request needs an 'inputs' array with a tensor for each of model '" + name() + "''s inputs (" + names(inputs_) + ")");
        std::vector<std::vector<std::byte>> in(inputs_.size());
        std::vector<bool> given(inputs_.size(), false);
        std::size_t items = 0;
        std::string items_from;
        for (const json& t : *inputs) {
            if (!t.is_object()) bad_request("each element of 'inputs' must be an object {name, shape, datatype, data}, not " + json_excerpt(t));
            const std::string& input_name = text_field(t, "name", "an element of 'inputs'");
            const std::string what = "input '" + input_name + "'";
            const std::size_t i = index_of(inputs_, input_name);
            if (i == inputs_.size()) bad_request("model '" + name() + "' has no input '" + input_name + "' (its inputs: " + names(inputs_) + ")");
            if (given[i]) bad_request(what + " is given twice");
            given[i] = true;
            const served_tensor& spec = inputs_[i];
            if (const std::string& datatype = text_field(t, "datatype", what); datatype != datatype_name(spec.type))
                bad_request(what + " has datatype " + datatype + ", the model takes " + std::string(datatype_name(spec.type)));
            const std::vector<std::int64_t> shape = shape_field(t, what);
            const std::size_t k = items_in(spec, shape, what);
            if (items == 0) {
                items = k;
                items_from = input_name;
            } else if (k != items) {
                bad_request(what + " has " + std::to_string(k) + " items, input '" + items_from + "' has " + std::to_string(items));
            }
            const auto data = t.find("data");
            if (data == t.end()) bad_request(what + " has no 'data' (binary tensor data is not supported: give 'data' as a JSON array)");
            in[i].resize(k * spec.item_bytes);
            read_data(*data, shape, spec.type, in[i].data(), k * spec.item_bytes / ember::size_of(spec.type), what);
        }
        for (std::size_t i = 0; i < inputs_.size(); ++i)
            if (!given[i]) bad_request("input '" + inputs_[i].name + "' is missing (model '" + name() + "' takes " + names(inputs_) + ")");

        // Outputs: the ones asked for, in the order asked; all of them when none are.
        std::vector<std::size_t> selected;
        if (auto it = request.find("outputs"); it != request.end()) {
            if (!it->is_array()) bad_request("'outputs' must be an array of {\"name\": ...}, not " + json_excerpt(*it));
            for (const json& o : *it) {
                if (!o.is_object()) bad_request("each element of 'outputs' must be an object {\"name\": ...}, not " + json_excerpt(o));
                const std::string& output_name = text_field(o, "name", "an element of 'outputs'");
                const std::size_t i = index_of(outputs_, output_name);
                if (i == outputs_.size())
                    bad_request("model '" + name() + "' has no output '" + output_name + "' (its outputs: " + names(outputs_) + ")");
                if (std::find(selected.begin(), selected.end(), i) == selected.end()) selected.push_back(i);
            }
        }
        if (selected.empty())
            for (std::size_t i = 0; i < outputs_.size(); ++i) selected.push_back(i);

        std::vector<std::vector<std::byte>> out(outputs_.size());
        std::vector<const void*> in_ptr;
        std::vector<void*> out_ptr;
        for (std::vector<std::byte>& b : in) in_ptr.push_back(b.data());
        for (std::size_t i = 0; i < outputs_.size(); ++i) {
            out[i].resize(items * outputs_[i].item_bytes);
            out_ptr.push_back(out[i].data());
        }
        const ember::status s = batcher_->run(ember::span<const void* const>(in_ptr.data(), in_ptr.size()),
                                              ember::span<void* const>(out_ptr.data(), out_ptr.size()), items);
        if (s == ember::status::busy)
            throw http_error{503, "model '" + name() + "' is busy (its queue waited past the shedding budget, is full, or the server is stopping); retry later"};
        if (s != ember::status::ok) throw http_error{500, "model '" + name() + "' failed to run: " + std::string(ember::to_string(s))};

        std::string answer = "{\"model_name\":" + quoted(name()) + ",\"model_version\":" + quoted(version());
        if (id) answer += ",\"id\":" + id->dump();
        answer += ",\"outputs\":[";
        for (std::size_t n = 0; n < selected.size(); ++n) {
            const served_tensor& spec = outputs_[selected[n]];
            std::vector<std::int64_t> dims = spec.dims;
            if (batched_) dims[0] = static_cast<std::int64_t>(items);
            answer += std::string(n ? "," : "") + "{\"name\":" + quoted(spec.name) + ",\"datatype\":\"" + std::string(datatype_name(spec.type)) +
                      "\",\"shape\":" + json(dims).dump() + ",\"data\":";
            append_data(answer, spec.type, out[selected[n]].data(), out[selected[n]].size() / ember::size_of(spec.type));
            answer += "}";
        }
        return answer + "]}";
    }

    /// Counters for /metrics, added to by the HTTP threads.
    void count(outcome o) noexcept { outcomes_[o].fetch_add(1, std::memory_order_relaxed); }
    std::uint64_t count_of(outcome o) const noexcept { return outcomes_[o].load(std::memory_order_relaxed); }
    latency_histogram latency;  ///< successful infer requests

private:
    std::string fail(std::string why) {
        failure_ = std::move(why);
        state_.store(state::failed, std::memory_order_release);
        return {};
    }

    static std::string names(const std::vector<served_tensor>& list) {
        std::string s;
        for (const served_tensor& t : list) s += (s.empty() ? "" : ", ") + t.name;
        return s;
    }
    static std::size_t index_of(const std::vector<served_tensor>& list, const std::string& wanted) {
        std::size_t i = 0;
        while (i < list.size() && list[i].name != wanted) ++i;
        return i;
    }
    static const std::string& text_field(const json& object, const char* key, const std::string& what) {
        const auto it = object.find(key);
        if (it == object.end() || !it->is_string()) bad_request(what + ": '" + key + "' must be a string");
        return it->get_ref<const std::string&>();
    }
    static std::vector<std::int64_t> shape_field(const json& tensor, const std::string& what) {
        const auto it = tensor.find("shape");
        if (it == tensor.end() || !it->is_array()) bad_request(what + ": 'shape' must be an array of sizes");
        std::vector<std::int64_t> dims;
        for (const json& d : *it) {
            if (!d.is_number_unsigned()) bad_request(what + ": 'shape' must hold sizes (whole numbers >= 0), not " + json_excerpt(d));
            dims.push_back(static_cast<std::int64_t>(std::min<std::uint64_t>(d.get<std::uint64_t>(), INT64_MAX)));
        }
        return dims;
    }
    /// The items a tensor of this shape holds: its first size for a batched model, else 1.
    std::size_t items_in(const served_tensor& spec, const std::vector<std::int64_t>& shape, const std::string& what) const {
        bool fits = shape.size() == spec.dims.size();
        for (std::size_t d = 0; fits && d < shape.size(); ++d) fits = spec.dims[d] == -1 || spec.dims[d] == shape[d];
        if (!fits) bad_request(what + " has shape " + shape_text(shape) + ", the model takes " + shape_text(spec.dims));
        if (!batched_) return 1;
        const std::size_t k = static_cast<std::size_t>(shape[0]);
        if (k == 0) bad_request(what + " holds a batch of 0 items");
        if (k > batcher_->max_batch())
            bad_request(what + " holds a batch of " + std::to_string(k) + " items; model '" + name() + "' takes at most " +
                        std::to_string(batcher_->max_batch()) + " per request");
        return k;
    }

    model_source source_;
    std::atomic<state> state_{state::loading};
    std::string failure_;
    std::unique_ptr<ember::batcher> batcher_;
    bool batched_ = false;  // clients' shapes lead with the batch axis (-1 in the metadata)
    std::vector<served_tensor> inputs_, outputs_;
    std::array<std::atomic<std::uint64_t>, outcome_count> outcomes_{};
};

} // namespace serve
