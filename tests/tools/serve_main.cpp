// SPDX-License-Identifier: Apache-2.0
// ember-serve end to end (ctest examples.serve): each test case starts the server on a free
// loopback port (--port 0, the port read from its first line) over a model repository made here,
// sends real HTTP requests with httplib's client and checks the answers; the server is killed
// when a case ends, however it ends (and with the test process, PR_SET_PDEATHSIG).
//
// The repository: fashion_mnist (the bundled CNN, versions 1 and 3: 3 is served; "02" and a
// version without model.onnx are not versions), no_batch (a model whose input x is [2, 3]: no
// batch axis), broken (not ONNX: reported, not served) and empty (no version: reported).
// The answers are checked against models/fashion_mnist/images/expected.txt (PyTorch's top-1
// probability, to 0.002) on the bundled pictures, and against the no_batch model's arithmetic.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <httplib.h>
#include <nlohmann/json.hpp>

#include <ember/image.hpp>

namespace {

using json = nlohmann::json;
namespace fs = std::filesystem;

const std::string source_dir = EMBER_SOURCE_DIR;
const std::string work_dir = EMBER_SERVE_WORK_DIR;
const std::string images_dir = source_dir + "/models/fashion_mnist/images";

// Add(x: float[2,3], b: float[3]) -> 'sum/0:x'; Relu('sum/0:x') -> 'y'; opset 13 (the model of
// tests/tools/ember_run_test.sh).
constexpr const char* no_batch_model_hex =
    "08081205656d6265723a90010a140a01780a0162120773756d2f303a7822034164640a120a0773756d2f303a78120179220452656c75120e656d6265725f72756e5f"
    "746573745a130a0178120e0a0c080112080a0208020a0208035a0f0a0162120a0a08080112040a02080362190a0773756d2f303a78120e0a0c080112080a0208020a"
    "02080362130a0179120e0a0c080112080a0208020a02080342040a00100d";

void write_file(const fs::path& path, const std::string& bytes) {
    fs::create_directories(path.parent_path());
    std::ofstream(path, std::ios::binary) << bytes;
}

std::string unhex(const std::string& hex) {
    std::string out;
    for (std::size_t i = 0; i + 1 < hex.size(); i += 2) out += static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16));
    return out;
}

/// The test repository, made once.
const std::string& repository() {
    static const std::string repo = [] {
        const fs::path r = fs::path(work_dir) / "repo";
        fs::remove_all(r);
        const fs::path model = fs::path(source_dir) / "models/fashion_mnist/model.onnx";
        for (const char* v : {"1", "3", "02"}) {
            fs::create_directories(r / "fashion_mnist" / v);
            fs::copy_file(model, r / "fashion_mnist" / v / "model.onnx");
        }
        fs::create_directories(r / "fashion_mnist/7");  // no model.onnx: not a version
        write_file(r / "no_batch/1/model.onnx", unhex(no_batch_model_hex));
        write_file(r / "broken/1/model.onnx", "not a model");
        fs::create_directories(r / "empty/model");
        return r.string();
    }();
    return repo;
}

/// ember-serve running in a child process, killed when this goes out of scope.
class server {
public:
    /// sigint_ignored: start it as a shell starts a background job, with SIGINT ignored.
    explicit server(const std::vector<std::string>& options, bool sigint_ignored = false) {
        static int count = 0;
        const std::string repo = repository();  // made here, not in the child
        stderr_path_ = work_dir + "/server" + std::to_string(++count) + ".stderr";
        int out[2];
        REQUIRE(pipe(out) == 0);
        pid_ = fork();
        REQUIRE(pid_ >= 0);
        if (pid_ == 0) {
            prctl(PR_SET_PDEATHSIG, SIGKILL);
            if (sigint_ignored) std::signal(SIGINT, SIG_IGN);  // kept across exec
            dup2(out[1], 1);
            close(out[0]);
            close(out[1]);
            const int err = open(stderr_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
            dup2(err, 2);
            std::vector<std::string> args = {EMBER_SERVE_PATH, "--models", repo, "--port", "0"};
            args.insert(args.end(), options.begin(), options.end());
            std::vector<char*> argv;
            for (std::string& a : args) argv.push_back(a.data());
            argv.push_back(nullptr);
            execv(argv[0], argv.data());
            _exit(127);
        }
        close(out[1]);
        stdout_ = out[0];
        line_ = read_line(std::chrono::seconds(120));
        const std::string prefix = "ember-serve: listening on http://127.0.0.1:";
        if (line_.rfind(prefix, 0) == 0) port_ = std::atoi(line_.c_str() + prefix.size());
        INFO("first line: ", line_, "\nstderr: ", stderr_text());
        REQUIRE(port_ > 0);
    }
    ~server() {
        if (pid_ > 0) {
            kill(pid_, SIGKILL);
            waitpid(pid_, nullptr, 0);
        }
        close(stdout_);
    }
    server(const server&) = delete;
    server& operator=(const server&) = delete;

    int port() const { return port_; }
    const std::string& first_line() const { return line_; }
    std::string stderr_text() const {
        std::ifstream f(stderr_path_);
        return std::string(std::istreambuf_iterator<char>(f), {});
    }
    bool alive() const { return pid_ > 0 && waitpid(pid_, nullptr, WNOHANG) == 0; }
    void signal(int sig) const { kill(pid_, sig); }
    /// Waits up to `limit` for the server to exit: its exit code, or -1 (still running: killed),
    /// or 128 + the signal that ended it.
    int wait_exit(std::chrono::seconds limit) {
        const auto end = std::chrono::steady_clock::now() + limit;
        int status = 0;
        while (std::chrono::steady_clock::now() < end) {
            if (waitpid(pid_, &status, WNOHANG) == pid_) {
                pid_ = -1;
                return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
        return -1;
    }

private:
    std::string read_line(std::chrono::seconds limit) {
        std::string line;
        const auto end = std::chrono::steady_clock::now() + limit;
        while (std::chrono::steady_clock::now() < end) {
            pollfd p{stdout_, POLLIN, 0};
            if (poll(&p, 1, 100) <= 0) continue;
            char c;
            if (read(stdout_, &c, 1) != 1 || c == '\n') break;
            line += c;
        }
        return line;
    }

    pid_t pid_ = -1;
    int stdout_ = -1;
    int port_ = 0;
    std::string line_, stderr_path_;
};

struct reply {
    int status = 0;  // 0: no answer (connection failed)
    std::string body, content_type, retry_after;
    json j;          // the body parsed; discarded when it is not JSON
};

reply http(int port, const std::string& method, const std::string& path, const std::string& body = {}) {
    httplib::Client client("127.0.0.1", port);
    client.set_read_timeout(60, 0);
    client.set_connection_timeout(5, 0);
    httplib::Result r = method == "GET" ? client.Get(path.c_str()) : client.Post(path.c_str(), body, "application/json");
    reply out;
    if (!r) return out;
    out.status = r->status;
    out.body = r->body;
    out.content_type = r->get_header_value("Content-Type");
    out.retry_after = r->get_header_value("Retry-After");
    out.j = json::parse(out.body, nullptr, false);
    return out;
}
reply get(int port, const std::string& path) { return http(port, "GET", path); }
reply post(int port, const std::string& path, const std::string& body) { return http(port, "POST", path, body); }

/// A bundled picture as the model's input: 784 gray values / 255.
std::vector<float> picture(const std::string& file) {
    ember::result<ember::image::image> img = ember::image::decode_file(images_dir + "/" + file);
    REQUIRE(img);
    REQUIRE(img->width() == 28);
    REQUIRE(img->height() == 28);
    REQUIRE(img->channels() == 1);
    std::vector<float> v(28 * 28);
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(img->data()[i]) / 255.0f;
    return v;
}

struct expected_class {
    std::string file;
    int label;
    double probability;
};

/// images/expected.txt, the PNGs only (28x28 gray).
std::vector<expected_class> expected_classes() {
    std::vector<expected_class> out;
    std::ifstream f(images_dir + "/expected.txt");
    expected_class e;
    while (f >> e.file >> e.label >> e.probability)
        if (e.file.size() > 4 && e.file.substr(e.file.size() - 4) == ".png") out.push_back(e);
    REQUIRE(out.size() == 10);
    return out;
}

/// An infer request for the fashion model: the pictures as one tensor of pictures.size() items.
json fashion_request(const std::vector<std::vector<float>>& pictures) {
    std::vector<float> data;
    for (const auto& p : pictures) data.insert(data.end(), p.begin(), p.end());
    return {{"inputs", {{{"name", "input"}, {"shape", {pictures.size(), 1, 28, 28}}, {"datatype", "FP32"}, {"data", data}}}}};
}

/// The logits of item i of an answer, checked for shape.
std::vector<double> logits_of(const json& answer, std::size_t items, std::size_t i) {
    const json& out = answer.at("outputs").at(0);
    CHECK(out.at("name") == "logits");
    CHECK(out.at("datatype") == "FP32");
    CHECK(out.at("shape") == json({items, 10}));
    REQUIRE(out.at("data").size() == items * 10);
    std::vector<double> v;
    for (std::size_t k = 0; k < 10; ++k) v.push_back(out.at("data").at(i * 10 + k).get<double>());
    return v;
}

/// Checks that logits pick `e.label` with PyTorch's probability (to 0.002).
void check_class(const std::vector<double>& logits, const expected_class& e) {
    const double top = *std::max_element(logits.begin(), logits.end());
    double sum = 0;
    for (double l : logits) sum += std::exp(l - top);
    INFO(e.file);
    CHECK(std::max_element(logits.begin(), logits.end()) - logits.begin() == e.label);
    CHECK(std::abs(1.0 / sum - e.probability) < 0.002);
}

/// The value of one sample of /metrics (its name and labels exactly as written), or -1.
double metric(const std::string& text, const std::string& sample) {
    std::istringstream lines(text);
    for (std::string line; std::getline(lines, line);)
        if (line.rfind(sample + " ", 0) == 0) return std::stod(line.substr(sample.size() + 1));
    return -1;
}
std::string fashion_labels() { return "model=\"fashion_mnist\",version=\"3\""; }

/// Waits (up to 30 s) until the fashion model's batcher holds `depth` waiting requests.
void wait_for_queue(int port, double depth) {
    const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (metric(get(port, "/metrics").body, "ember_inference_queue_depth{" + fashion_labels() + "}") != depth) {
        REQUIRE(std::chrono::steady_clock::now() < end);
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
}

const std::string infer_path = "/v2/models/fashion_mnist/infer";

} // namespace

TEST_CASE("startup: the repository is scanned, bad models reported, the command line checked") {
    server s({});
    CHECK(s.first_line() == "ember-serve: listening on http://127.0.0.1:" + std::to_string(s.port()) + ", models: fashion_mnist (v3), no_batch (v1)");
    const std::string err = s.stderr_text();
    INFO(err);
    CHECK(err.find("model folder 'empty' has no version to serve") != std::string::npos);
    CHECK(err.find("model 'broken' version 1: ") != std::string::npos);
    CHECK(err.find("model 'no_batch': no batch axis") != std::string::npos);

    // Bad command lines and repositories: one stderr line, exit 2 (usage) or 1.
    const auto run = [](const std::string& args, std::size_t lines = 1) {
        const std::string err_file = work_dir + "/bad_cli.stderr";
        const int rc = std::system(("timeout 60 " + std::string(EMBER_SERVE_PATH) + " " + args + " > /dev/null 2> " + err_file).c_str());
        std::ifstream f(err_file);
        std::string text((std::istreambuf_iterator<char>(f)), {});
        INFO(args, ": ", text);
        CHECK(static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n')) == lines);
        CHECK(text.rfind("ember-serve: ", 0) == 0);
        return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
    };
    CHECK(run("--port 0") == 2);                                             // no --models
    CHECK(run("--models " + repository() + " --frobnicate 1") == 2);
    CHECK(run("--models " + repository() + " --port 70000") == 2);
    CHECK(run("--models " + repository() + " --max-batch zero") == 2);
    CHECK(run("--models " + work_dir + "/no_such_folder --port 0") == 1);
    fs::create_directories(work_dir + "/empty_repo/a/0");
    CHECK(run("--models " + work_dir + "/empty_repo --port 0", 2) == 1);  // folder 'a' skipped, then nothing to serve
    CHECK(run("--models " + repository() + " --port " + std::to_string(s.port()), 2) == 1);  // 'empty' skipped; the port is taken
}

TEST_CASE("health and metadata") {
    server s({});
    const int port = s.port();
    CHECK(get(port, "/v2/health/live").status == 200);
    CHECK(get(port, "/v2/health/ready").status == 200);

    const reply meta = get(port, "/v2");
    CHECK(meta.status == 200);
    CHECK(meta.content_type == "application/json");
    CHECK(meta.j.at("name") == "ember-serve");
    CHECK(meta.j.at("version").is_string());
    CHECK(meta.j.at("extensions").is_array());

    const json fashion = {{"name", "fashion_mnist"},
                          {"versions", {"3"}},
                          {"platform", "ember"},
                          {"inputs", {{{"name", "input"}, {"datatype", "FP32"}, {"shape", {-1, 1, 28, 28}}}}},
                          {"outputs", {{{"name", "logits"}, {"datatype", "FP32"}, {"shape", {-1, 10}}}}}};
    CHECK(get(port, "/v2/models/fashion_mnist").j == fashion);
    CHECK(get(port, "/v2/models/fashion_mnist/versions/3").j == fashion);
    CHECK(get(port, "/v2/models/fashion_mnist/ready").status == 200);
    CHECK(get(port, "/v2/models/fashion_mnist/versions/3/ready").status == 200);
    // Without a batch axis, the shapes are the model's own (no -1).
    const json no_batch = get(port, "/v2/models/no_batch").j;
    CHECK(no_batch.at("inputs") == json({{{"name", "x"}, {"datatype", "FP32"}, {"shape", {2, 3}}}, {{"name", "b"}, {"datatype", "FP32"}, {"shape", {3}}}}));
    CHECK(no_batch.at("outputs") ==
          json({{{"name", "sum/0:x"}, {"datatype", "FP32"}, {"shape", {2, 3}}}, {{"name", "y"}, {"datatype", "FP32"}, {"shape", {2, 3}}}}));

    // Unknown models, versions and endpoints: 404 with a JSON error that names them.
    const auto not_found = [&](const std::string& path, const std::string& says) {
        const reply r = get(port, path);
        INFO(path, " -> ", r.body);
        CHECK(r.status == 404);
        CHECK(r.content_type == "application/json");
        REQUIRE(r.j.contains("error"));
        CHECK(r.j.at("error").get<std::string>().find(says) != std::string::npos);
    };
    not_found("/v2/models/nope", "no model 'nope' (models: fashion_mnist, no_batch)");
    not_found("/v2/models/nope/ready", "no model 'nope'");
    not_found("/v2/models/fashion_mnist/versions/1", "it serves version 3");
    not_found("/v2/models/fashion_mnist/versions/1/ready", "no version '1'");
    not_found("/v2/models/broken", "failed to load");
    not_found("/v3/anything", "no endpoint GET /v3/anything");
}

TEST_CASE("inference: every bundled picture, flat and nested data, a batch, outputs, id, versions") {
    server s({});
    const int port = s.port();
    const std::vector<expected_class> expected = expected_classes();

    // One picture per request, flat data.
    std::vector<std::vector<double>> single;
    for (const expected_class& e : expected) {
        const reply r = post(port, infer_path, fashion_request({picture(e.file)}).dump());
        INFO(e.file, ": ", r.body.substr(0, 300));
        REQUIRE(r.status == 200);
        CHECK(r.content_type == "application/json");
        CHECK(r.j.at("model_name") == "fashion_mnist");
        CHECK(r.j.at("model_version") == "3");
        CHECK_FALSE(r.j.contains("id"));
        single.push_back(logits_of(r.j, 1, 0));
        check_class(single.back(), expected[single.size() - 1]);
    }

    // Nested data: the same answer as flat.
    json nested = fashion_request({picture(expected[4].file)});
    const std::vector<float> flat = nested["inputs"][0]["data"];
    json rows = json::array();
    for (int y = 0; y < 28; ++y) rows.push_back(std::vector<float>(flat.begin() + y * 28, flat.begin() + (y + 1) * 28));
    nested["inputs"][0]["data"] = json::array({json::array({rows})});
    const reply from_nested = post(port, infer_path, nested.dump());
    REQUIRE(from_nested.status == 200);
    CHECK(logits_of(from_nested.j, 1, 0) == single[4]);

    // A batch of two items in one request: each row is that picture's answer.
    json two = fashion_request({picture(expected[9].file), picture(expected[1].file)});
    two["id"] = "request-42";
    two["outputs"] = {{{"name", "logits"}}};
    const reply batch = post(port, infer_path, two.dump());
    REQUIRE(batch.status == 200);
    CHECK(batch.j.at("id") == "request-42");
    REQUIRE(batch.j.at("outputs").size() == 1);
    for (std::size_t item = 0; item < 2; ++item) {
        const std::vector<double> got = logits_of(batch.j, 2, item);
        const std::vector<double>& want = single[item == 0 ? 9 : 1];
        for (std::size_t k = 0; k < 10; ++k) CHECK(got[k] == doctest::Approx(want[k]).epsilon(1e-4));
    }

    // The versioned path.
    const reply versioned = post(port, "/v2/models/fashion_mnist/versions/3/infer", fashion_request({picture(expected[0].file)}).dump());
    REQUIRE(versioned.status == 200);
    CHECK(logits_of(versioned.j, 1, 0) == single[0]);

    // The model without a batch axis: x [2, 3] + b [3], and Relu of that; outputs chosen.
    const json add = {{"inputs",
                       {{{"name", "x"}, {"shape", {2, 3}}, {"datatype", "FP32"}, {"data", {{1, -2, 3}, {-4, 5, -6}}}},
                        {{"name", "b"}, {"shape", {3}}, {"datatype", "FP32"}, {"data", {0.5, 0.5, -10}}}}},
                      {"outputs", {{{"name", "y"}}, {{"name", "sum/0:x"}}}}};
    const reply r = post(port, "/v2/models/no_batch/infer", add.dump());
    INFO(r.body);
    REQUIRE(r.status == 200);
    CHECK(r.j.at("outputs") == json({{{"name", "y"}, {"datatype", "FP32"}, {"shape", {2, 3}}, {"data", {1.5, 0, 0, 0, 5.5, 0}}},
                                     {{"name", "sum/0:x"}, {"datatype", "FP32"}, {"shape", {2, 3}}, {"data", {1.5, -1.5, -7, -3.5, 5.5, -16}}}}));
}

TEST_CASE("latency: answers on a kept-alive connection come at once (no Nagle delay)") {
    // With Nagle's algorithm on, the body of an answer written after its headers waited for the
    // client's delayed ACK: 40 ms an answer on Linux.
    server s({"--max-delay-us", "0"});
    httplib::Client client("127.0.0.1", s.port());
    client.set_keep_alive(true);
    client.set_tcp_nodelay(true);  // the client's own request is written in two parts too
    const std::string body = fashion_request({picture("3_dress.png")}).dump();
    std::vector<double> ms;
    for (int i = 0; i < 11; ++i) {
        const auto start = std::chrono::steady_clock::now();
        const httplib::Result r = client.Post(infer_path.c_str(), body, "application/json");
        ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
        REQUIRE(r);
        REQUIRE(r->status == 200);
    }
    std::sort(ms.begin(), ms.end());
    MESSAGE("median ", ms[5], " ms over 11 requests on one connection");
    CHECK(ms[5] < 20.0);
}

TEST_CASE("concurrent requests: 16 clients at once on 2 instances, each gets its own answer, batched") {
    server s({"--max-delay-us", "50000", "--instances", "2"});
    const std::vector<expected_class> expected = expected_classes();
    std::vector<std::string> bodies;
    for (const expected_class& e : expected) bodies.push_back(fashion_request({picture(e.file)}).dump());
    constexpr int clients = 16, rounds = 3;
    std::vector<std::vector<reply>> replies(clients);
    std::vector<std::thread> threads;
    for (int c = 0; c < clients; ++c)
        threads.emplace_back([&, c] {
            for (int r = 0; r < rounds; ++r) replies[c].push_back(post(s.port(), infer_path, bodies[static_cast<std::size_t>((c + r) % 10)]));
        });
    for (std::thread& t : threads) t.join();
    for (int c = 0; c < clients; ++c)
        for (int r = 0; r < rounds; ++r) {
            const reply& got = replies[c][static_cast<std::size_t>(r)];
            INFO("client ", c, " round ", r, ": ", got.body.substr(0, 200));
            REQUIRE(got.status == 200);
            check_class(logits_of(got.j, 1, 0), expected[static_cast<std::size_t>((c + r) % 10)]);
        }
    const std::string m = get(s.port(), "/metrics").body;
    CHECK(metric(m, "ember_inference_requests_total{" + fashion_labels() + ",outcome=\"success\"}") == clients * rounds);
    CHECK(metric(m, "ember_batch_size_sum{" + fashion_labels() + "}") == clients * rounds);
    CHECK(metric(m, "ember_batch_size_count{" + fashion_labels() + "}") < clients * rounds);  // some batch held more than one request
}

TEST_CASE("bad requests: 400/404/413 with a JSON error naming the problem, and the server carries on") {
    server s({"--max-body-mb", "1"});
    const int port = s.port();
    const json good = fashion_request({picture("1_trouser.png")});
    const auto with = [&](const std::string& pointer, const json& value) {
        json j = good;
        j[json::json_pointer(pointer)] = value;
        return j.dump();
    };
    json no_data = good;
    no_data["inputs"][0].erase("data");
    json twice = good;
    twice["inputs"].push_back(good["inputs"][0]);
    json nine = fashion_request(std::vector<std::vector<float>>(9, picture("1_trouser.png")));
    std::string deep(100000, '[');

    struct bad {
        std::string path, body;
        int status;
        std::string says;
    };
    const std::vector<bad> cases = {
        {infer_path, "{\"inputs\": [", 400, "the body is not JSON: parse error at line 1, column 13"},
        {infer_path, "", 400, "the body is not JSON"},
        {infer_path, "\"\xff\xfe\"", 400, "the body is not JSON"},
        {infer_path, deep, 400, "the body is not JSON"},
        {infer_path, "[1, 2]", 400, "must be a JSON object"},
        {infer_path, "{}", 400, "needs an 'inputs' array with a tensor for each of model 'fashion_mnist''s inputs (input)"},
        {infer_path, with("/inputs", json::array()), 400, "needs an 'inputs' array"},
        {infer_path, with("/inputs/0", 7), 400, "must be an object"},
        {infer_path, with("/inputs/0/name", "image"), 400, "model 'fashion_mnist' has no input 'image' (its inputs: input)"},
        {infer_path, with("/inputs/0/name", 3), 400, "'name' must be a string"},
        {infer_path, with("/inputs/0/datatype", "INT64"), 400, "input 'input' has datatype INT64, the model takes FP32"},
        {infer_path, with("/inputs/0/shape", {1, 1, 28, 27}), 400, "input 'input' has shape [1, 1, 28, 27], the model takes [-1, 1, 28, 28]"},
        {infer_path, with("/inputs/0/shape", {1, 784}), 400, "has shape [1, 784]"},
        {infer_path, with("/inputs/0/shape", {-1, 1, 28, 28}), 400, "'shape' must hold sizes"},
        {infer_path, with("/inputs/0/shape", "1x784"), 400, "'shape' must be an array"},
        {infer_path, with("/inputs/0/shape", {0, 1, 28, 28}), 400, "a batch of 0 items"},
        {infer_path, nine.dump(), 400, "a batch of 9 items; model 'fashion_mnist' takes at most 8 per request"},
        {infer_path, with("/inputs/0/data", std::vector<float>(783, 0.5f)), 400, "input 'input': 'data' holds 783 values, its shape [1, 1, 28, 28] needs 784"},
        {infer_path, with("/inputs/0/data", std::vector<float>(785, 0.5f)), 400, "holds 785 values"},
        {infer_path, with("/inputs/0/data/3", "x"), 400, "value 3 of 'data' is \"x\", not FP32"},
        {infer_path, with("/inputs/0/data/5", nullptr), 400, "value 5 of 'data' is null, not FP32"},
        {infer_path, with("/inputs/0/data", json::array({json::array({std::vector<float>(28, 0.0f)})})), 400, "nested, but not as its shape"},
        {infer_path, with("/inputs/0/data/3", {1, 2}), 400, "mixes numbers and arrays"},
        {infer_path, with("/inputs/0/data/0", {1, 2}), 400, "nested, but not as its shape [1, 1, 28, 28]: axis 0 should hold 1 elements, it holds 784"},
        {infer_path, with("/inputs/0/data", "abc"), 400, "'data' must be an array"},
        {infer_path, no_data.dump(), 400, "input 'input' has no 'data'"},
        {infer_path, twice.dump(), 400, "input 'input' is given twice"},
        {infer_path, with("/outputs", {{{"name", "probabilities"}}}), 400, "model 'fashion_mnist' has no output 'probabilities' (its outputs: logits)"},
        {infer_path, with("/outputs", "logits"), 400, "'outputs' must be an array"},
        {infer_path, with("/id", 42), 400, "'id' must be a string"},
        {"/v2/models/no_batch/infer", json{{"inputs", {{{"name", "x"}, {"shape", {2, 3}}, {"datatype", "FP32"}, {"data", {1, 2, 3, 4, 5, 6}}}}}}.dump(),
         400, "input 'b' is missing (model 'no_batch' takes x, b)"},
        {"/v2/models/nope/infer", good.dump(), 404, "no model 'nope'"},
        {"/v2/models/fashion_mnist/versions/2/infer", good.dump(), 404, "no version '2'"},
        {"/v2/models/broken/infer", good.dump(), 404, "failed to load"},
        {infer_path, std::string(1100000, ' '), 413, "larger than --max-body-mb (1 MiB)"},
    };
    int fashion_invalid = 0;
    for (const bad& c : cases) {
        const reply r = post(port, c.path, c.body);
        INFO(c.path, " ", c.body.substr(0, 80), " -> ", r.status, " ", r.body.substr(0, 300));
        CHECK(r.status == c.status);
        CHECK(r.content_type == "application/json");
        REQUIRE(r.j.is_object());
        REQUIRE(r.j.contains("error"));
        CHECK(r.j.at("error").get<std::string>().find(c.says) != std::string::npos);
        if (c.path == infer_path && c.status == 400) ++fashion_invalid;
    }
    REQUIRE(s.alive());
    CHECK(get(port, "/v2/health/live").status == 200);
    const reply ok = post(port, infer_path, good.dump());
    REQUIRE(ok.status == 200);
    check_class(logits_of(ok.j, 1, 0), {"1_trouser.png", 1, 1.0});

    const std::string m = get(port, "/metrics").body;
    CHECK(metric(m, "ember_inference_requests_total{" + fashion_labels() + ",outcome=\"invalid\"}") == fashion_invalid);
    CHECK(metric(m, "ember_inference_requests_total{" + fashion_labels() + ",outcome=\"success\"}") == 1);
    CHECK(metric(m, "ember_inference_requests_total{model=\"no_batch\",version=\"1\",outcome=\"invalid\"}") == 1);
    CHECK(metric(m, "ember_http_responses_total{code=\"413\"}") == 1);
}

TEST_CASE("metrics: Prometheus text with requests by outcome, latency, queue depth, batch sizes, items") {
    server s({});
    const int port = s.port();
    const std::vector<float> p = picture("8_bag.png");
    REQUIRE(post(port, infer_path, fashion_request({p}).dump()).status == 200);
    REQUIRE(post(port, infer_path, fashion_request({p}).dump()).status == 200);
    REQUIRE(post(port, infer_path, fashion_request({p, p, p}).dump()).status == 200);
    REQUIRE(post(port, infer_path, "{").status == 400);

    const reply r = get(port, "/metrics");
    REQUIRE(r.status == 200);
    CHECK(r.content_type == "text/plain; version=0.0.4; charset=utf-8");
    const std::string& m = r.body;
    INFO(m);
    const std::string l = fashion_labels();
    CHECK(m.find("# TYPE ember_inference_requests_total counter\n") != std::string::npos);
    CHECK(m.find("# TYPE ember_inference_request_duration_seconds histogram\n") != std::string::npos);
    CHECK(m.find("# TYPE ember_inference_queue_depth gauge\n") != std::string::npos);
    CHECK(m.find("# TYPE ember_batch_size histogram\n") != std::string::npos);
    CHECK(metric(m, "ember_inference_request_duration_seconds_sum{" + l + "}") > 0);
    // Requests one after another: batches of 1, 1 and 3 items.
    const std::pair<std::string, double> samples[] = {
        {"ember_model_ready{" + l + "}", 1},
        {"ember_inference_requests_total{" + l + ",outcome=\"success\"}", 3},
        {"ember_inference_requests_total{" + l + ",outcome=\"invalid\"}", 1},
        {"ember_inference_requests_total{" + l + ",outcome=\"failure\"}", 0},
        {"ember_inference_requests_total{" + l + ",outcome=\"rejected\"}", 0},
        {"ember_inference_request_duration_seconds_count{" + l + "}", 3},
        {"ember_inference_request_duration_seconds_bucket{" + l + ",le=\"+Inf\"}", 3},
        {"ember_inference_queue_depth{" + l + "}", 0},
        {"ember_inference_items_total{" + l + "}", 5},
        {"ember_batch_size_bucket{" + l + ",le=\"1\"}", 2},
        {"ember_batch_size_bucket{" + l + ",le=\"2\"}", 2},
        {"ember_batch_size_bucket{" + l + ",le=\"4\"}", 3},
        {"ember_batch_size_bucket{" + l + ",le=\"8\"}", 3},
        {"ember_batch_size_sum{" + l + "}", 5},
        {"ember_batch_size_count{" + l + "}", 3},
        {"ember_http_responses_total{code=\"200\"}", 3},
        {"ember_http_responses_total{code=\"400\"}", 1},
    };
    for (const auto& sample : samples) {  // no structured binding: INFO captures it, which C++17 forbids
        INFO(sample.first);
        CHECK(metric(m, sample.first) == sample.second);
    }
}

TEST_CASE("shedding: while the oldest queued request has waited past --shed-after-ms, requests get 503 at once") {
    // The first request waits up to 2 s for others to join its batch; the ones sent while it
    // waits find the queue older than 1 ms and are refused at once.
    server s({"--max-delay-us", "2000000", "--shed-after-ms", "1"});
    const int port = s.port();
    const std::string body = fashion_request({picture("9_ankle_boot.png")}).dump();
    reply first;
    std::atomic<bool> first_done{false};
    std::thread first_thread([&] {
        first = post(port, infer_path, body);
        first_done = true;
    });
    wait_for_queue(port, 1);
    constexpr int burst = 8;
    std::vector<reply> refused(burst);
    std::vector<std::thread> threads;
    const auto sent = std::chrono::steady_clock::now();
    for (int i = 0; i < burst; ++i) threads.emplace_back([&, i] { refused[static_cast<std::size_t>(i)] = post(port, infer_path, body); });
    for (std::thread& t : threads) t.join();
    MESSAGE("burst answered in ", std::chrono::duration<double>(std::chrono::steady_clock::now() - sent).count(), " s");
    CHECK_FALSE(first_done.load());  // refused at once, not after the waiting batch ran
    first_thread.join();

    REQUIRE(first.status == 200);
    check_class(logits_of(first.j, 1, 0), {"9_ankle_boot.png", 9, 0.9998});
    for (const reply& r : refused) {
        INFO(r.body);
        CHECK(r.status == 503);
        CHECK(r.retry_after == "1");
        REQUIRE(r.j.contains("error"));
        CHECK(r.j.at("error").get<std::string>().find("model 'fashion_mnist' is busy") != std::string::npos);
    }

    // Once the queue is empty again, requests are served.
    const reply later = post(port, infer_path, body);
    CHECK(later.status == 200);
    const std::string m = get(port, "/metrics").body;
    const std::string l = fashion_labels();
    CHECK(metric(m, "ember_inference_requests_total{" + l + ",outcome=\"rejected\"}") == burst);
    CHECK(metric(m, "ember_inference_requests_total{" + l + ",outcome=\"success\"}") == 2);
    CHECK(metric(m, "ember_inference_requests_total{" + l + ",outcome=\"failure\"}") == 0);
    CHECK(metric(m, "ember_batcher_refused_total{" + l + ",reason=\"shed\"}") == burst);
    CHECK(metric(m, "ember_http_responses_total{code=\"503\"}") == burst);
}

TEST_CASE("graceful shutdown: SIGTERM during a request answers it, then exits 0") {
    // The request waits 1 s in the batcher's queue (--max-delay-us): SIGTERM comes meanwhile.
    server s({"--max-delay-us", "1000000"});
    const int port = s.port();
    reply in_flight;
    std::thread client([&] { in_flight = post(port, infer_path, fashion_request({picture("7_sneaker.png")}).dump()); });
    wait_for_queue(port, 1);
    s.signal(SIGTERM);
    client.join();
    REQUIRE(in_flight.status == 200);
    check_class(logits_of(in_flight.j, 1, 0), {"7_sneaker.png", 7, 1.0});
    CHECK(s.wait_exit(std::chrono::seconds(20)) == 0);
    CHECK(s.stderr_text().find("ember-serve: SIGTERM: stopped") != std::string::npos);
    CHECK(get(port, "/v2/health/live").status == 0);  // no longer listening

    // SIGINT (Ctrl-C) with nothing in flight, to a server started with SIGINT ignored (as a
    // shell starts a background job): it stops all the same.
    server idle({}, true);
    idle.signal(SIGINT);
    CHECK(idle.wait_exit(std::chrono::seconds(20)) == 0);
    CHECK(idle.stderr_text().find("ember-serve: SIGINT: stopped") != std::string::npos);
}
