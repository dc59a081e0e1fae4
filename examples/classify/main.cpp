// SPDX-License-Identifier: Apache-2.0
// classify: image classification with any ONNX classifier, by default the Fashion-MNIST CNN that
// ships in models/fashion_mnist (trained by tools/train_fashion_mnist.py).
//
//   classify [--model MODEL.onnx --labels FILE] [--top K] [--threads N] [--resize S]
//            [--mean A,B,C --std A,B,C] [--bgr] IMAGE|FOLDER...
//
// For each image it prints one line: the path, then the top-K (default 5) `label:probability`
// pairs, best first. A folder is searched (recursively) for .jpg/.jpeg/.png/.bmp files, in name
// order; with a folder a progress bar and the throughput go to stderr. Decoding and
// pre-processing, inference and post-processing run as a three-stage pipeline over a few
// buffers, so the decoder works on the next picture while the model runs on this one.
//
// Pre-processing follows the model's input [N, C, H, W]: the picture is decoded, converted to
// gray (Pillow's weights) when C is 1, resized to W x H (Pillow's bilinear; with --resize S the
// shorter side goes to S first and the middle W x H is cropped, torchvision's
// Resize(S) + CenterCrop), then scaled to [0, 1] and normalised with --mean/--std. The scores
// go through a softmax. A picture that cannot be read is reported on stderr and skipped; the
// exit code is then 1. A bad command line exits with 2.
#include <algorithm>
#include <array>
#include <atomic>
#include <cctype>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <exception>
#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include <unistd.h>

#include <ember/ember.hpp>
#include <ember/image.hpp>
#include <ember/onnx.hpp>
#include <ember/post.hpp>

#include "../common/cli.hpp"
#include "../common/picture.hpp"

namespace {

using example::input_geometry;
using example::is_picture;
using example::parse_floats;

using example::exit_failure;
using example::exit_usage;
using example::fail;

constexpr std::string_view usage =
    "usage: classify [--model MODEL.onnx --labels FILE] [--top K] [--threads N] [--resize S]\n"
    "                [--mean A,B,C --std A,B,C] [--bgr] IMAGE|FOLDER...\n"
    "  --model FILE     an ONNX classifier with one input [N, C, H, W] (default: the bundled\n"
    "                   Fashion-MNIST CNN)\n"
    "  --labels FILE    class names, one per line (default: the bundled model's labels)\n"
    "  --top K          how many label:probability pairs per image (default 5)\n"
    "  --threads N      inference threads (ember::thread_pool; default 1)\n"
    "  --resize S       resize the shorter side to S, then crop the middle H x W\n"
    "  --mean, --std    per-channel normalisation after scaling to [0, 1] (default 0 and 1)\n"
    "  --bgr            feed channels as B, G, R (models trained on OpenCV pictures)\n";

struct options {
    std::string model = EMBER_BUNDLED_MODEL_DIR "/model.onnx";
    std::string labels;
    bool default_model = true;
    std::size_t top = 5;
    std::size_t threads = 1;
    int resize = 0;
    ember::image::normalize_options norm;
    std::vector<std::string> inputs;
};

std::size_t parse_count(const std::string& flag, const std::string& text) {
    char* end = nullptr;
    const long v = std::strtol(text.c_str(), &end, 10);
    if (text.empty() || *end != '\0' || v < 1 || v > 100000) fail(flag, "expected a positive count, got '" + text + "'", exit_usage);
    return static_cast<std::size_t>(v);
}

options parse_args(int argc, char** argv) {
    options o;
    bool std_given = false;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        auto value = [&]() -> std::string {
            if (i + 1 >= argc) fail(arg, "needs a value", exit_usage);
            return argv[++i];
        };
        if (arg == "--help" || arg == "-h") {
            std::fputs(usage.data(), stdout);
            std::exit(0);
        } else if (arg == "--model") {
            o.model = value();
            o.default_model = false;
        } else if (arg == "--labels") {
            o.labels = value();
        } else if (arg == "--top") {
            o.top = parse_count(arg, value());
        } else if (arg == "--threads") {
            o.threads = parse_count(arg, value());
        } else if (arg == "--resize") {
            o.resize = static_cast<int>(parse_count(arg, value()));
        } else if (arg == "--mean") {
            o.norm.mean = parse_floats(arg, value());
        } else if (arg == "--std") {
            o.norm.std = parse_floats(arg, value());
            std_given = true;
        } else if (arg == "--bgr") {
            o.norm.bgr = true;
        } else if (arg.size() > 1 && arg[0] == '-') {
            fail(arg, "unknown option (see --help)", exit_usage);
        } else {
            o.inputs.push_back(arg);
        }
    }
    if (o.inputs.empty()) fail("command line", "no image given (see --help)", exit_usage);
    if (std_given)
        for (float s : o.norm.std)
            if (!(s != 0.0f)) fail("--std", "a standard deviation of 0", exit_usage);
    if (o.labels.empty() && o.default_model) o.labels = EMBER_BUNDLED_MODEL_DIR "/labels.txt";
    return o;
}

/// The pictures to classify: files as given, folders searched recursively in name order.
std::vector<std::string> list_pictures(const std::vector<std::string>& inputs, bool& any_folder) {
    std::vector<std::string> out;
    for (const std::string& in : inputs) {
        std::error_code ec;
        if (!std::filesystem::is_directory(in, ec)) {
            out.push_back(in);
            continue;
        }
        any_folder = true;
        std::vector<std::string> found;
        for (auto it = std::filesystem::recursive_directory_iterator(in, ec); !ec && it != std::filesystem::recursive_directory_iterator();
             it.increment(ec))
            if (it->is_regular_file(ec) && is_picture(it->path())) found.push_back(it->path().string());
        if (ec) fail("folder '" + in + "'", ec.message());
        if (found.empty()) fail("folder '" + in + "'", "holds no .jpg, .jpeg, .png or .bmp file");
        std::sort(found.begin(), found.end());
        out.insert(out.end(), found.begin(), found.end());
    }
    return out;
}

/// A bounded queue of slot numbers between two pipeline stages; -1 means "no more".
class channel {
public:
    void push(int slot) {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            items_.push_back(slot);
        }
        ready_.notify_one();
    }
    int pop() {
        std::unique_lock<std::mutex> lock(mutex_);
        ready_.wait(lock, [&] { return !items_.empty(); });
        const int slot = items_.front();
        items_.pop_front();
        return slot;
    }

private:
    std::mutex mutex_;
    std::condition_variable ready_;
    std::deque<int> items_;
};

/// One picture in flight: its buffers are reused for every picture that passes through it.
struct slot {
    std::size_t index = 0;
    std::string error;  ///< non-empty: decoding failed, skip it
    example::picture_buffers picture;
    std::vector<float> input, scores, probs;
    double decode_ms = 0, infer_ms = 0;
};

/// Decode and pre-process one picture into s.input. Returns false (with s.error) on bad files.
bool prepare(const std::string& path, const input_geometry& geo, const options& o, ember::image::decoder& dec, ember::image::resizer& rs,
             slot& s) {
    s.error = example::picture_to_input(path, geo, o.resize, o.norm, dec, rs, s.picture, s.input.data());
    return s.error.empty();
}

int run(const options& o) {
    bool any_folder = false;
    const std::vector<std::string> pictures = list_pictures(o.inputs, any_folder);

    ember::result<ember::graph> g = ember::onnx::load_file(o.model);
    if (!g) fail("model '" + o.model + "'", g.error().message);
    const input_geometry geo = example::geometry_of(*g, o.model, "classify");
    ember::compile_options copts;
    copts.input_shapes.push_back({g->values[g->inputs[0]].name, ember::shape{1, geo.channels, geo.height, geo.width}});
    ember::result<ember::plan> p = ember::compile(*g, copts);
    if (!p) fail("compile '" + o.model + "'", p.error().message);
    if (p->output_count() < 1 || p->output(0).type != ember::dtype::float32 || p->output(0).dims.elements() < 1)
        fail("model '" + o.model + "'", "its first output is not a float32 score vector");
    const std::size_t classes = static_cast<std::size_t>(p->output(0).dims.elements());

    ember::post::labels names;
    if (!o.labels.empty()) {
        ember::result<ember::post::labels> l = ember::post::labels::load_file(o.labels);
        if (!l) fail("labels", l.error().message);
        names = std::move(*l);
        if (names.size() != classes)
            std::fprintf(stderr, "classify: warning: '%s' has %zu labels for %zu classes\n", o.labels.c_str(), names.size(), classes);
    }

    const example::session_threads threads(o.threads);
    ember::session session(*p, threads.executor());
    if (session.state() != ember::status::ok) fail("session", std::string(ember::to_string(session.state())));

    // The pipeline: the decoder thread fills free slots, this thread runs the model, the printer
    // thread turns scores into lines and hands the slot back.
    constexpr int slot_count = 4;
    std::vector<slot> slots(slot_count);
    for (slot& s : slots) {
        s.input.resize(static_cast<std::size_t>(geo.channels) * geo.height * geo.width);
        s.scores.resize(classes);
        s.probs.resize(classes);
    }
    channel free_slots, decoded, scored;
    for (int i = 0; i < slot_count; ++i) free_slots.push(i);

    std::thread decoder_thread([&] {
        ember::image::decoder dec;
        ember::image::resizer rs;
        for (std::size_t i = 0; i < pictures.size(); ++i) {
            const int k = free_slots.pop();
            slot& s = slots[static_cast<std::size_t>(k)];
            const auto t0 = std::chrono::steady_clock::now();
            s.index = i;
            s.error.clear();
            prepare(pictures[i], geo, o, dec, rs, s);
            s.decode_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
            decoded.push(k);
        }
        decoded.push(-1);
    });

    std::atomic<int> failed{0};
    double decode_ms = 0, infer_ms = 0, post_ms = 0;
    std::thread printer_thread([&] {
        example::progress_bar bar(pictures.size(), any_folder);
        std::vector<ember::post::scored_class> best(std::min(o.top, classes));
        std::size_t done = 0;
        std::string line;
        for (int k; (k = scored.pop()) >= 0;) {
            slot& s = slots[static_cast<std::size_t>(k)];
            const auto t0 = std::chrono::steady_clock::now();
            bar.clear();
            if (!s.error.empty()) {
                std::fprintf(stderr, "classify: %s\n", s.error.c_str());
                ++failed;
            } else if (ember::post::softmax(s.scores, s.probs) != ember::status::ok ||
                       ember::post::top_k(s.probs, best) != ember::status::ok) {
                std::fprintf(stderr, "classify: '%s': cannot rank the scores\n", pictures[s.index].c_str());
                ++failed;
            } else {
                line = pictures[s.index];
                for (const ember::post::scored_class& c : best) {
                    char probability[32];
                    std::snprintf(probability, sizeof probability, "%.4f", static_cast<double>(c.score));
                    line += ' ';
                    line += names.name(static_cast<std::size_t>(c.index));
                    line += ':';
                    line += probability;
                }
                std::printf("%s\n", line.c_str());
                std::fflush(stdout);
            }
            decode_ms += s.decode_ms;
            infer_ms += s.infer_ms;
            post_ms += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
            free_slots.push(k);
            bar.show(++done);
        }
    });

    const auto start = std::chrono::steady_clock::now();
    for (int k; (k = decoded.pop()) >= 0;) {
        slot& s = slots[static_cast<std::size_t>(k)];
        if (s.error.empty()) {
            const auto t0 = std::chrono::steady_clock::now();
            ember::status st = session.bind_input(0, s.input.data(), s.input.size() * sizeof(float));
            if (st == ember::status::ok) st = session.bind_output(0, s.scores.data(), s.scores.size() * sizeof(float));
            if (st == ember::status::ok) st = session.run();
            if (st != ember::status::ok) {
                s.error = ember::detail::format("'{}': the model failed to run ({})", pictures[s.index], ember::to_string(st));
            }
            s.infer_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
        }
        scored.push(k);
    }
    scored.push(-1);
    decoder_thread.join();
    printer_thread.join();
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

    if (any_folder) {
        const double n = static_cast<double>(pictures.size());
        std::fprintf(stderr,
                     "classify: %zu images in %.3f s: %.1f images/s (%zu inference thread%s; per image: decode+preprocess %.3f ms, "
                     "inference %.3f ms, post %.3f ms)\n",
                     pictures.size(), seconds, n / seconds, o.threads, o.threads == 1 ? "" : "s", decode_ms / n, infer_ms / n, post_ms / n);
    }
    return failed.load() == 0 ? 0 : exit_failure;
}

} // namespace

int main(int argc, char** argv) {
    return example::run_main("classify", [&] { return run(parse_args(argc, argv)); });
}
