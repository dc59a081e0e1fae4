// SPDX-License-Identifier: Apache-2.0
// ember-quantize: INT8 post-training quantization of an ONNX model into a QDQ model
// (QuantizeLinear/DequantizeLinear around the inputs of Conv, MatMul and Gemm; uint8 asymmetric
// activations, int8 symmetric weights, int32 biases), as ONNX Runtime's QDQ quantizer writes it.
//
//   ember-quantize MODEL.onnx --calibration DATA --output OUT.onnx [--method minmax|percentile|entropy]
//                  [--percentile P] [--per-channel] [--keep-fp32 auto|NODE,...] [--max-error PCT] [--threads N]
//                  [--resize S] [--mean A,B,C] [--std A,B,C] [--bgr] [--progress] [--verbose]
//                  [--evaluate DATA --labels LABELS.npy]
//
// DATA is one .npy file whose first axis is the sample axis, or a folder of such files (read in
// name order). A sample is one row: DATA[i] when DATA has one axis more than the model's input,
// else DATA[i] with a batch axis of 1 in front. DATA may also be a picture or a folder of pictures,
// one sample each, pre-processed as classify does (examples/common/picture.hpp: --resize, --mean,
// --std, --bgr). The model must have one input. --keep-fp32 auto
// leaves in float, most sensitive first, the nodes it takes for the outputs to stay within
// --max-error % of FP32's (ember::quant::choose_keep_fp32). Calibration runs
// every sample through the FP32 model (ember::quant::calibrate), with a progress bar on stderr
// when stderr is a terminal or with --progress; then the QDQ rewrite (ember::quant::quantize_qdq)
// and the writer (ember::onnx::save_file). --evaluate then runs labelled samples (DATA as for
// --calibration) through the FP32 model and through OUT.onnx as ember loads it (its QDQ nodes
// folded into the integer kernels) and prints both top-1 accuracies (ember::quant::top1_accuracy).
// On any failure it prints one line,
// "ember-quantize: <what>: <why>", on stderr and exits with 2 (bad command line) or 1.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <unistd.h>

#include <ember/ember.hpp>
#include <ember/image.hpp>
#include <ember/io/npy.hpp>
#include <ember/onnx.hpp>
#include <ember/quant/quant.hpp>

#include "../common/cli.hpp"
#include "../common/picture.hpp"

namespace {

using example::exit_usage;
using example::fail;

constexpr std::string_view usage =
    "usage: ember-quantize MODEL.onnx --calibration DATA --output OUT.onnx [--method minmax|percentile|entropy]\n"
    "                      [--percentile P] [--per-channel] [--keep-fp32 auto|NODE,...] [--max-error PCT]\n"
    "                      [--resize S] [--mean A,B,C] [--std A,B,C] [--bgr] [--threads N] [--progress] [--verbose]\n"
    "                      [--evaluate DATA --labels LABELS.npy]\n"
    "  --calibration DATA  a .npy file whose first axis is the sample axis ([N, ...the input's shape\n"
    "                      without or with its batch axis]), a folder of such .npy files, or a\n"
    "                      picture or folder of pictures (.jpg .jpeg .png .bmp) for a model whose\n"
    "                      input is [N, 1 or 3, H, W], pre-processed as classify does:\n"
    "  --resize S          pictures: shorter side to S, then the middle H x W (default: resize to H x W)\n"
    "  --mean, --std       pictures: per-channel normalisation after scaling to [0, 1] (default 0, 1)\n"
    "  --bgr               pictures: feed channels as B, G, R\n"
    "  --output OUT.onnx   where the QDQ model goes\n"
    "  --method M          how an activation's range is chosen from the values seen: minmax\n"
    "                      (default), percentile (keeps --percentile % of them, default 99.999) or\n"
    "                      entropy (TensorRT's KL-divergence threshold, 2048 bins, 128 levels)\n"
    "  --per-channel       one weight scale per output channel (needs opset 13); default per tensor\n"
    "  --keep-fp32 NODES   comma-separated node names to leave in float; 'auto' among them also\n"
    "                      keeps, most sensitive first, as many nodes as it takes for the outputs to\n"
    "                      stay within --max-error of FP32's on the samples (the first 32)\n"
    "  --max-error PCT     with --keep-fp32 auto: the largest output difference allowed, in % of\n"
    "                      each output's range over the samples (default 1)\n"
    "  --threads N         calibrate on N threads (default 1)\n"
    "  --progress          show the calibration progress bar even when stderr is not a terminal\n"
    "  --verbose           print each activation's calibrated range\n"
    "  --evaluate DATA     labelled samples (forms as --calibration): after writing OUT.onnx, print the\n"
    "                      top-1 accuracy of the FP32 model and of OUT.onnx on them\n"
    "  --labels LABELS.npy with --evaluate: one integer class index per sample row, in order\n"
    "Activations are uint8 (asymmetric), weights int8 (symmetric, scale max|w|/127), biases int32\n"
    "(scale x_scale * w_scale): QuantizeLinear/DequantizeLinear around the inputs of every Conv,\n"
    "MatMul and Gemm, which ember and ONNX Runtime both run.\n";

struct options {
    std::string model, calibration, output, evaluate, labels;
    ember::quant::range_method method = ember::quant::range_method::minmax;
    double percentile = 99.999;
    bool percentile_given = false;
    bool per_channel = false;
    bool progress = false;
    bool verbose = false;
    std::vector<std::string> keep_fp32;
    bool keep_auto = false;
    double max_error = 1.0;  // percent
    bool max_error_given = false;
    std::size_t threads = 1;
    int resize = 0;                         // pictures: shorter side to this, then the middle crop
    ember::image::normalize_options norm;   // pictures: mean, std, bgr
    bool picture_flags = false;
};

std::size_t parse_count(std::string_view flag, std::string_view text) {
    std::size_t v = 0;
    if (text.empty() || text.size() > 6) fail(std::string(flag), "expected a whole number, got '" + std::string(text) + "'", exit_usage);
    for (char c : text) {
        if (c < '0' || c > '9') fail(std::string(flag), "expected a whole number, got '" + std::string(text) + "'", exit_usage);
        v = v * 10 + static_cast<std::size_t>(c - '0');
    }
    if (v < 1) fail(std::string(flag), "must be at least 1", exit_usage);
    return v;
}

std::vector<std::string> split_names(std::string_view text) {
    std::vector<std::string> out;
    std::size_t start = 0;
    while (start <= text.size()) {
        const std::size_t comma = std::min(text.find(',', start), text.size());
        const std::string_view name = text.substr(start, comma - start);
        if (name.empty()) fail("--keep-fp32", "expected NODE,NODE,... without empty names, got '" + std::string(text) + "'", exit_usage);
        out.emplace_back(name);
        start = comma + 1;
    }
    return out;
}

options parse_args(int argc, char** argv) {
    options o;
    for (int i = 1; i < argc; ++i) {
        const std::string_view arg = argv[i];
        if (arg == "--help" || arg == "-h") {
            std::fputs(usage.data(), stdout);
            std::exit(0);
        }
        if (arg.size() > 1 && arg[0] == '-' && arg.substr(0, 2) != "--") fail(std::string(arg), "unknown flag (see ember-quantize --help)", exit_usage);
        if (arg.size() < 2 || arg.substr(0, 2) != "--") {
            if (!o.model.empty()) fail("command line", "more than one model given ('" + o.model + "' and '" + std::string(arg) + "')", exit_usage);
            o.model = std::string(arg);
            continue;
        }
        std::string_view flag = arg, value;
        bool has_value = false;
        if (const std::size_t eq = arg.find('='); eq != std::string_view::npos) {
            flag = arg.substr(0, eq);
            value = arg.substr(eq + 1);
            has_value = true;
        }
        if (flag == "--per-channel" || flag == "--progress" || flag == "--verbose" || flag == "--bgr") {
            if (has_value) fail(std::string(flag), "takes no value", exit_usage);
            (flag == "--per-channel" ? o.per_channel : flag == "--progress" ? o.progress : flag == "--verbose" ? o.verbose : o.norm.bgr) = true;
            o.picture_flags = o.picture_flags || flag == "--bgr";
            continue;
        }
        const bool known = flag == "--calibration" || flag == "--output" || flag == "--evaluate" || flag == "--labels" || flag == "--method" || flag == "--percentile" ||
                           flag == "--keep-fp32" || flag == "--max-error" || flag == "--threads" || flag == "--resize" || flag == "--mean" ||
                           flag == "--std";
        if (!known) fail(std::string(flag), "unknown flag (see ember-quantize --help)", exit_usage);
        if (!has_value) {
            if (i + 1 >= argc) fail(std::string(flag), "needs a value", exit_usage);
            value = argv[++i];
        }
        if (flag == "--calibration" || flag == "--output" || flag == "--evaluate" || flag == "--labels") {
            if (value.empty()) fail(std::string(flag), "needs a path", exit_usage);
            (flag == "--calibration" ? o.calibration : flag == "--output" ? o.output : flag == "--evaluate" ? o.evaluate : o.labels) = std::string(value);
        } else if (flag == "--method") {
            if (!ember::quant::parse_range_method(value, o.method))
                fail("--method", "unknown method '" + std::string(value) + "' (expected minmax, percentile or entropy)", exit_usage);
        } else if (flag == "--percentile") {
            char* end = nullptr;
            const std::string text(value);
            o.percentile = std::strtod(text.c_str(), &end);
            if (text.empty() || *end != '\0' || !(o.percentile > 0.0 && o.percentile <= 100.0))
                fail("--percentile", "expected a number in (0, 100], got '" + text + "'", exit_usage);
            o.percentile_given = true;
        } else if (flag == "--resize") {
            o.resize = static_cast<int>(parse_count(flag, value));
            o.picture_flags = true;
        } else if (flag == "--mean" || flag == "--std") {
            (flag == "--mean" ? o.norm.mean : o.norm.std) = example::parse_floats(std::string(flag), std::string(value));
            if (flag == "--std")
                for (float v : o.norm.std)
                    if (!(v != 0.0f)) fail("--std", "a standard deviation of 0", exit_usage);
            o.picture_flags = true;
        } else if (flag == "--max-error") {
            char* end = nullptr;
            const std::string text(value);
            o.max_error = std::strtod(text.c_str(), &end);
            if (text.empty() || *end != '\0' || !(o.max_error >= 0.0 && o.max_error <= 100.0))
                fail("--max-error", "expected a percentage in [0, 100], got '" + text + "'", exit_usage);
            o.max_error_given = true;
        } else if (flag == "--keep-fp32") {
            for (std::string& name : split_names(value)) {
                if (name == "auto")
                    o.keep_auto = true;
                else
                    o.keep_fp32.push_back(std::move(name));
            }
        } else {
            o.threads = parse_count(flag, value);
        }
    }
    if (o.model.empty()) fail("command line", "no model given (see ember-quantize --help)", exit_usage);
    if (o.calibration.empty()) fail("command line", "no calibration data given (--calibration DATA)", exit_usage);
    if (o.output.empty()) fail("command line", "no output file given (--output OUT.onnx)", exit_usage);
    if (!o.evaluate.empty() && o.labels.empty()) fail("--evaluate", "needs --labels LABELS.npy (the class of each sample)", exit_usage);
    if (o.evaluate.empty() && !o.labels.empty()) fail("--labels", "only applies with --evaluate DATA", exit_usage);
    if (o.max_error_given && !o.keep_auto) fail("--max-error", "only applies with --keep-fp32 auto", exit_usage);
    if (o.percentile_given && o.method != ember::quant::range_method::percentile)
        fail("--percentile", "only applies with --method percentile", exit_usage);
    return o;
}

/// The files of DATA: the file itself, or the folder's .npy files or pictures, in name order.
struct sample_files {
    std::vector<std::string> npy, pictures;
};

/// flag: the option that named DATA (--calibration or --evaluate), for the messages.
sample_files list_sample_files(const std::string& flag, const std::string& data) {
    namespace fs = std::filesystem;
    std::error_code ec;
    const fs::file_status st = fs::status(data, ec);
    if (!fs::exists(st)) fail(flag + " '" + data + "'", "no such file or folder");
    sample_files out;
    if (!fs::is_directory(st)) {
        (example::is_picture(data) ? out.pictures : out.npy).push_back(data);
        return out;
    }
    for (fs::directory_iterator it(data, ec), end; !ec && it != end; it.increment(ec)) {
        if (!it->is_regular_file(ec)) continue;
        if (it->path().extension() == ".npy")
            out.npy.push_back(it->path().string());
        else if (example::is_picture(it->path()))
            out.pictures.push_back(it->path().string());
    }
    if (ec) fail(flag + " '" + data + "'", "cannot list the folder (" + ec.message() + ")");
    if (out.npy.empty() && out.pictures.empty()) fail(flag + " '" + data + "'", "the folder has no .npy files or pictures");
    if (!out.npy.empty() && !out.pictures.empty())
        fail(flag + " '" + data + "'", "the folder holds both .npy files and pictures; keep one kind");
    std::sort(out.npy.begin(), out.npy.end());
    std::sort(out.pictures.begin(), out.pictures.end());
    return out;
}

/// Each picture, pre-processed as classify does, as one sample [1, C, H, W].
void add_pictures(const std::string& flag, const std::vector<std::string>& paths, const options& o, const ember::graph& g,
                  std::vector<ember::tensor>& samples) {
    const example::input_geometry geo = example::geometry_of(g, o.model, "ember-quantize with pictures");
    ember::image::decoder dec;
    ember::image::resizer rs;
    example::picture_buffers buffers;
    for (const std::string& path : paths) {
        ember::result<ember::tensor> t = ember::tensor::create(ember::dtype::float32, ember::shape{1, geo.channels, geo.height, geo.width});
        if (!t) fail(flag + " '" + path + "'", t.error().message);
        const std::string why = example::picture_to_input(path, geo, o.resize, o.norm, dec, rs, buffers, t->data<float>());
        if (!why.empty()) fail(flag + " '" + path + "'", why);
        samples.push_back(std::move(*t));
    }
}

/// The samples in one .npy file, each shaped as the model's input.
void add_samples(const std::string& flag, const std::string& path, const ember::value& input, std::vector<ember::tensor>& samples) {
    ember::result<ember::tensor> data = ember::npy::load_file(path);
    if (!data) fail(flag + " '" + path + "'", data.error().message);
    if (data->type() != input.type)
        fail(flag + " '" + path + "'", ember::detail::format("holds {}, the model's input '{}' is {}", data->type(), input.name, input.type));
    const std::size_t rank = input.declared.rank_known ? input.declared.rank() : data->rank() - 1;
    if (data->rank() < 1 || (data->rank() != rank + 1 && data->rank() != rank))
        fail(flag + " '" + path + "'",
             ember::detail::format("has shape {}; expected [N, ...] with N samples of the model's input '{}' {}, with or without its batch axis",
                                   data->dims(), input.name, input.declared));
    std::vector<std::int64_t> dims;
    if (data->rank() == rank) dims.push_back(1);  // a batch of one
    for (std::size_t d = 1; d < data->rank(); ++d) dims.push_back(data->dims()[d]);
    const ember::shape sample_dims(ember::span<const std::int64_t>(dims.data(), dims.size()));
    if (input.declared.rank_known)
        for (std::size_t d = 0; d < rank; ++d)
            if (input.declared.dims[d].known() && input.declared.dims[d].value != sample_dims[d])
                fail(flag + " '" + path + "'", ember::detail::format("a sample is {} (the file is {}), but the model's input '{}' is {}",
                                                                           sample_dims, data->dims(), input.name, input.declared));
    if (!samples.empty() && samples.front().dims() != sample_dims)
        fail(flag + " '" + path + "'",
             ember::detail::format("a sample is {}, but the samples before it are {}", sample_dims, samples.front().dims()));
    const std::size_t n = static_cast<std::size_t>(data->dims()[0]);
    const std::size_t bytes = n ? data->size_bytes() / n : 0;
    for (std::size_t i = 0; i < n; ++i) {
        ember::result<ember::tensor> t = ember::tensor::create(data->type(), sample_dims);
        if (!t) fail(flag + " '" + path + "'", t.error().message);
        std::memcpy(t->bytes(), data->bytes() + i * bytes, bytes);
        samples.push_back(std::move(*t));
    }
}

/// Every sample in DATA (a .npy file, pictures, or a folder of either), each shaped as the model's input.
std::vector<ember::tensor> load_samples(const std::string& flag, const std::string& data, const options& o, const ember::graph& g) {
    std::vector<ember::tensor> samples;
    const sample_files files = list_sample_files(flag, data);
    if (files.pictures.empty() && o.picture_flags)
        fail("--resize, --mean, --std, --bgr", "only apply to pictures; " + flag + " '" + data + "' is .npy");
    for (const std::string& file : files.npy) add_samples(flag, file, g.values[g.inputs[0]], samples);
    add_pictures(flag, files.pictures, o, g, samples);
    if (samples.empty()) fail(flag + " '" + data + "'", "holds no samples (its first axis is 0)");
    return samples;
}

/// LABELS.npy: one integer class index per row (any integer dtype, rank 1 or [N, 1]).
std::vector<std::int64_t> load_labels(const std::string& path) {
    ember::result<ember::tensor> t = ember::npy::load_file(path);
    if (!t) fail("--labels '" + path + "'", t.error().message);
    if (t->rank() != 1 && !(t->rank() == 2 && t->dims()[1] == 1))
        fail("--labels '" + path + "'", ember::detail::format("has shape {}; expected [N] (one class index per sample row)", t->dims()));
    const std::size_t n = static_cast<std::size_t>(t->dims()[0]);
    std::vector<std::int64_t> labels(n);
    for (std::size_t i = 0; i < n; ++i) {
        switch (t->type()) {
        case ember::dtype::int64: labels[i] = t->data<std::int64_t>()[i]; break;
        case ember::dtype::int32: labels[i] = t->data<std::int32_t>()[i]; break;
        case ember::dtype::uint8: labels[i] = t->data<std::uint8_t>()[i]; break;
        case ember::dtype::int8: labels[i] = t->data<std::int8_t>()[i]; break;
        default: fail("--labels '" + path + "'", ember::detail::format("holds {}; expected int64, int32, uint8 or int8 class indices", t->type()));
        }
    }
    return labels;
}

/// The FP32 model's and OUT.onnx's top-1 accuracy on --evaluate's samples, on one line.
void evaluate(const options& o, const ember::graph& g, const std::vector<ember::tensor>& samples, const std::vector<std::int64_t>& labels,
              const example::session_threads& threads) {
    ember::result<ember::graph> q = ember::onnx::load_file(o.output);
    if (!q) fail("--output '" + o.output + "' read back", q.error().message);
    ember::quant::accuracy_options aopts;
    aopts.compile.max_threads = o.threads;
    aopts.exec = threads.executor();
    const ember::span<const ember::tensor> xs(samples.data(), samples.size());
    const ember::span<const std::int64_t> ys(labels.data(), labels.size());
    ember::result<ember::quant::accuracy_result> a32 = ember::quant::top1_accuracy(g, xs, ys, aopts);
    if (!a32) fail("--evaluate with '" + o.model + "'", a32.error().message);
    ember::result<ember::quant::accuracy_result> a8 = ember::quant::top1_accuracy(*q, xs, ys, aopts);
    if (!a8) fail("--evaluate with '" + o.output + "'", a8.error().message);
    std::printf("top-1 accuracy on %zu samples: FP32 %.2f %%, INT8 %.2f %% (%+.2f points)\n", a32->total, 100.0 * a32->top1(),
                100.0 * a8->top1(), 100.0 * (a8->top1() - a32->top1()));
}

int run(const options& o) {
    if (std::error_code ec; std::filesystem::is_directory(o.model, ec)) fail("model '" + o.model + "'", "is a folder, not an .onnx file");
    ember::result<ember::graph> g = ember::onnx::load_file(o.model);
    if (!g) fail("model '" + o.model + "'", g.error().message);
    if (g->inputs.size() != 1)
        fail("model '" + o.model + "'", ember::detail::format("has {} inputs; ember-quantize handles models with one input", g->inputs.size()));
    for (const std::string& name : o.keep_fp32)
        if (std::none_of(g->nodes.begin(), g->nodes.end(), [&](const ember::node& n) { return n.name == name; }))
            fail("--keep-fp32 " + name, "the model has no node of that name");

    const std::vector<ember::tensor> samples = load_samples("--calibration", o.calibration, o, *g);
    // --evaluate's data is read now so that a bad file fails before the calibration, not after.
    const std::vector<ember::tensor> eval_samples = o.evaluate.empty() ? std::vector<ember::tensor>{} : load_samples("--evaluate", o.evaluate, o, *g);
    const std::vector<std::int64_t> eval_labels = o.labels.empty() ? std::vector<std::int64_t>{} : load_labels(o.labels);

    const example::session_threads threads(o.threads);
    ember::quant::calibration_options copts;
    copts.method = o.method;
    copts.percentile = o.percentile;
    copts.keep_fp32 = o.keep_fp32;
    copts.compile.max_threads = o.threads;
    copts.exec = threads.executor();
    const std::size_t runs = samples.size() * (o.method == ember::quant::range_method::minmax ? 1 : 2);
    example::progress_bar bar(runs, o.progress || isatty(fileno(stderr)) != 0);
    copts.progress = [](void* user, std::size_t done, std::size_t) { static_cast<example::progress_bar*>(user)->show(done); };
    copts.progress_user = &bar;
    ember::result<std::vector<ember::quant::value_range>> ranges =
        ember::quant::calibrate(*g, ember::span<const ember::tensor>(samples.data(), samples.size()), copts);
    if (!ranges) fail("calibrate '" + o.model + "'", ranges.error().message);
    if (o.verbose)
        for (const ember::quant::value_range& r : *ranges) std::printf("range %s [%.6g, %.6g]\n", r.name.c_str(), r.min, r.max);

    ember::quant::qdq_options qopts;
    qopts.per_channel = o.per_channel;
    qopts.keep_fp32 = o.keep_fp32;
    const ember::span<const ember::quant::value_range> range_span(ranges->data(), ranges->size());
    if (o.keep_auto) {
        ember::quant::keep_fp32_options kopts;
        kopts.max_error = o.max_error / 100.0;
        kopts.compile.max_threads = o.threads;
        kopts.exec = threads.executor();
        ember::result<ember::quant::keep_fp32_result> chosen =
            ember::quant::choose_keep_fp32(*g, ember::span<const ember::tensor>(samples.data(), samples.size()), range_span, qopts, kopts);
        if (!chosen) fail("--keep-fp32 auto", chosen.error().message);
        std::string names;
        for (std::size_t k = o.keep_fp32.size(); k < chosen->keep.size(); ++k) names += (names.empty() ? "" : ", ") + chosen->keep[k];
        std::printf("--keep-fp32 auto: %s (output error %.2f %% of the range; %.2f %% with %s quantized)\n",
                    names.empty() ? "none needed" : ("kept " + names).c_str(), 100.0 * chosen->error, 100.0 * chosen->error_all,
                    o.keep_fp32.empty() ? "every node" : "only the named nodes kept");
        if (chosen->error > kopts.max_error)
            std::printf("--keep-fp32 auto: even with every node kept the error is above --max-error %.4g %%\n", o.max_error);
        qopts.keep_fp32 = chosen->keep;
    }
    ember::result<ember::graph> qg =
        ember::quant::quantize_qdq(*g, range_span, qopts);
    if (!qg) fail("quantize '" + o.model + "'", qg.error().message);
    if (ember::result<void> saved = ember::onnx::save_file(o.output, *qg); !saved) fail("--output '" + o.output + "'", saved.error().message);

    std::size_t candidates = 0, quantized = 0;
    for (const ember::node& n : g->nodes) candidates += ember::quant::quantizable_op(n) ? 1 : 0;
    for (const ember::node& n : qg->nodes)
        if (ember::quant::quantizable_op(n))
            for (ember::value_id v : n.inputs)
                if (v != ember::no_value && qg->values[v].producer >= 0 &&
                    qg->nodes[static_cast<std::size_t>(qg->values[v].producer)].op_type == "DequantizeLinear") {
                    ++quantized;
                    break;
                }
    std::printf("quantized %zu of %zu Conv/MatMul/Gemm nodes (%zu activation ranges, %s, %s weights) from %zu samples -> %s\n", quantized,
                candidates, ranges->size(), std::string(ember::quant::to_string(o.method)).c_str(), o.per_channel ? "per-channel" : "per-tensor",
                samples.size(), o.output.c_str());
    if (!o.evaluate.empty()) evaluate(o, *g, eval_samples, eval_labels, threads);
    return 0;
}

} // namespace

int main(int argc, char** argv) {
    return example::run_main("ember-quantize", [&] { return run(parse_args(argc, argv)); });
}
