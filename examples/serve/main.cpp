// SPDX-License-Identifier: Apache-2.0
// ember-serve: a model server speaking the KServe v2 REST protocol (the Open Inference Protocol
// that Triton and KServe speak), over a model repository laid out as Triton's.
//
//   ember-serve --models REPO [--port N] [--host ADDR] [--threads N] [--max-batch N]
//               [--max-delay-us N] [--shed-after-ms N] [--max-queue N] [--instances N]
//               [--http-threads N] [--max-body-mb N]
//
// Each model (REPO/<model>/<version>/model.onnx, the newest version) runs through its own
// ember::batcher, all of them on one ember::thread_pool. The port opens first (live), the models
// compile next (ready once all have), then one line goes to stdout:
//   ember-serve: listening on http://127.0.0.1:8000, models: fashion_mnist (v1)
// (with --port 0 the port is a free one, as that line says). SIGINT or SIGTERM stops it
// gracefully: no new connections, requests in flight are answered, exit 0. Bad requests get
// 400/404 with {"error": "..."}, a refused (shed) request 503 with Retry-After; /metrics is
// Prometheus' text format. A bad command line is one stderr line and exit 2; a repository with
// nothing to serve, or a port it cannot listen on, exit 1.
#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include <pthread.h>
#include <sys/socket.h>
#include <signal.h>

#include <httplib.h>

#include "../common/cli.hpp"
#include "metrics.hpp"
#include "model.hpp"
#include "repository.hpp"
#include "tensor_json.hpp"

namespace {

using example::exit_usage;
using example::fail;
using serve::http_error;
using serve::json;
using serve::served_model;

constexpr std::string_view usage =
    "usage: ember-serve --models REPO [--port N] [--host ADDR] [--threads N] [--max-batch N]\n"
    "                   [--max-delay-us N] [--shed-after-ms N] [--max-queue N] [--instances N]\n"
    "                   [--http-threads N] [--max-body-mb N]\n"
    "  --models REPO       model repository: REPO/<model>/<version>/model.onnx (newest version served)\n"
    "  --port N            TCP port (default 8000; 0: a free one, printed when listening)\n"
    "  --host ADDR         address to listen on (default 127.0.0.1; 0.0.0.0 for every interface)\n"
    "  --threads N         threads running the models' kernels, one pool for all models (default 1)\n"
    "  --max-batch N       most items one batch holds (default 8)\n"
    "  --max-delay-us N    how long a batch's first request waits for others (default 1000)\n"
    "  --shed-after-ms N   answer 503 at once while a model's oldest queued request has waited\n"
    "                      longer than this (default 1000; 0: never)\n"
    "  --max-queue N       requests that may wait per model; more get 503 (default 1024)\n"
    "  --instances N       batches of one model run side by side, each on its own arena (default 1)\n"
    "  --http-threads N    connections served at once (default 64)\n"
    "  --max-body-mb N     largest request body in MiB; larger ones get 413 (default 64)\n";

struct options {
    std::string models;
    std::string host = "127.0.0.1";
    std::size_t port = 8000;
    std::size_t threads = 1;
    std::size_t max_batch = 8;
    std::size_t max_delay_us = 1000;
    std::size_t shed_after_ms = 1000;
    std::size_t max_queue = 1024;
    std::size_t instances = 1;
    std::size_t http_threads = 64;
    std::size_t max_body_mb = 64;
};

options parse_args(int argc, char** argv) {
    options o;
    struct number_flag {
        std::string_view name;
        std::size_t* value;
        std::size_t min, max;
    };
    const number_flag numbers[] = {
        {"--port", &o.port, 0, 65535},           {"--threads", &o.threads, 1, 1024},       {"--max-batch", &o.max_batch, 1, 4096},
        {"--max-delay-us", &o.max_delay_us, 0, 60000000}, {"--shed-after-ms", &o.shed_after_ms, 0, 3600000}, {"--max-queue", &o.max_queue, 1, 1000000},
        {"--instances", &o.instances, 1, 256}, {"--http-threads", &o.http_threads, 1, 4096}, {"--max-body-mb", &o.max_body_mb, 1, 4096},
    };
    for (int i = 1; i < argc; ++i) {
        std::string_view flag = argv[i], value;
        if (flag == "--help" || flag == "-h") {
            std::fputs(usage.data(), stdout);
            std::exit(0);
        }
        if (const std::size_t eq = flag.find('='); flag.substr(0, 2) == "--" && eq != std::string_view::npos) {  // --flag=value
            value = flag.substr(eq + 1);
            flag = flag.substr(0, eq);
        } else if (i + 1 < argc) {
            value = argv[++i];
        } else {
            fail(std::string(flag), flag.substr(0, 2) == "--" ? "needs a value" : "unexpected argument (see ember-serve --help)", exit_usage);
        }
        if (flag == "--models") {
            o.models = std::string(value);
            continue;
        }
        if (flag == "--host") {
            if (value.empty()) fail("--host", "needs an address", exit_usage);
            o.host = std::string(value);
            continue;
        }
        const auto known = std::find_if(std::begin(numbers), std::end(numbers), [&](const number_flag& f) { return f.name == flag; });
        if (known == std::end(numbers)) fail(std::string(flag), "unknown option (see ember-serve --help)", exit_usage);
        std::size_t v = 0;
        const bool digits = !value.empty() && value.size() <= 9 && std::all_of(value.begin(), value.end(), [](char c) { return c >= '0' && c <= '9'; });
        for (char c : value) v = v * 10 + static_cast<std::size_t>(c - '0');
        if (!digits || v < known->min || v > known->max)
            fail(std::string(flag), "expected a whole number from " + std::to_string(known->min) + " to " + std::to_string(known->max) + ", got '" +
                                        std::string(value) + "'",
                 exit_usage);
        *known->value = v;
    }
    if (o.models.empty()) fail("command line", "no model repository given: --models REPO (see ember-serve --help)", exit_usage);
    return o;
}

/// What the HTTP handlers share.
struct server_state {
    std::vector<std::unique_ptr<served_model>> models;
    std::atomic<bool> stopping{false};
    std::array<std::atomic<std::uint64_t>, 600> responses{};  // by HTTP status
};

void answer(httplib::Response& res, int status, const json& body) {
    res.status = status;
    res.set_content(serve::json_text(body), "application/json");
}

void answer_error(httplib::Response& res, const http_error& e) {
    answer(res, e.status, {{"error", e.message}});
    if (e.status == 503) res.set_header("Retry-After", "1");
}

/// The model a request's path names (and its version, when the path has one). Unknown model or
/// version, or one that failed to load: 404; still compiling: 503.
served_model& resolve(server_state& s, const httplib::Request& req) {
    const std::string name = req.matches[1];
    const auto it = std::find_if(s.models.begin(), s.models.end(), [&](const auto& m) { return m->name() == name; });
    if (it == s.models.end()) {
        std::string known;
        for (const auto& m : s.models)
            if (m->current() != served_model::state::failed) known += (known.empty() ? "" : ", ") + m->name();
        throw http_error{404, "no model '" + name + "' (models: " + (known.empty() ? "none" : known) + ")"};
    }
    served_model& m = **it;
    if (m.current() == served_model::state::failed) throw http_error{404, "model '" + name + "' is not served: it failed to load: " + m.why_failed()};
    if (req.matches.size() > 2 && req.matches[2] != m.version())
        throw http_error{404, "model '" + name + "' has no version '" + std::string(req.matches[2]) + "' (it serves version " + m.version() + ")"};
    if (m.current() == served_model::state::loading) throw http_error{503, "model '" + name + "' is still compiling; retry later"};
    return m;
}

/// A handler that turns a thrown http_error into its JSON answer.
template <class Fn>
httplib::Server::Handler route(server_state& s, Fn fn) {
    return [&s, fn](const httplib::Request& req, httplib::Response& res) {
        try {
            fn(s, req, res);
        } catch (const http_error& e) {
            answer_error(res, e);
        }
    };
}

void infer(server_state& s, const httplib::Request& req, httplib::Response& res) {
    const auto start = std::chrono::steady_clock::now();
    served_model& m = resolve(s, req);
    try {
        res.set_content(m.infer(req.body), "application/json");
        m.count(served_model::success);
        m.latency.observe(std::chrono::steady_clock::now() - start);
    } catch (const http_error& e) {
        m.count(e.status == 400 ? served_model::invalid : e.status == 503 ? served_model::rejected : served_model::failure);
        throw;
    }
}

std::string metrics_text(const server_state& s) {
    serve::prometheus_text t;
    using serve::prometheus_text;
    const auto labels = [](const served_model& m) { return prometheus_text::label("model", m.name()) + "," + prometheus_text::label("version", m.version()); };
    t.family("ember_model_ready", "gauge", "1 when the model is compiled and serving, 0 while it compiles or when it failed to load.");
    for (const auto& m : s.models) t.sample("ember_model_ready", labels(*m), m->current() == served_model::state::ready ? 1 : 0);
    t.family("ember_inference_requests_total", "counter",
             "Infer requests by outcome: success (200), invalid (400: the request was wrong), failure (500: the model failed to run), "
             "rejected (503: shed, queue full or stopping).");
    for (const auto& m : s.models)
        for (std::size_t o = 0; o < served_model::outcome_count; ++o)
            t.sample("ember_inference_requests_total", labels(*m) + "," + prometheus_text::label("outcome", served_model::outcome_names[o]),
                     static_cast<double>(m->count_of(static_cast<served_model::outcome>(o))));
    t.family("ember_inference_request_duration_seconds", "histogram",
             "Time to answer a successful infer request, from its body read to its answer made: parse, queue, batch run, reply.");
    for (const auto& m : s.models)
        t.histogram("ember_inference_request_duration_seconds", labels(*m), serve::latency_histogram::bounds, m->latency.counts(), m->latency.sum_seconds());

    // The batchers' own counters, for the models that have one.
    std::vector<std::pair<const served_model*, ember::batcher_stats>> stats;
    for (const auto& m : s.models)
        if (m->current() == served_model::state::ready) stats.emplace_back(m.get(), m->batcher().stats());
    t.family("ember_inference_queue_depth", "gauge", "Requests waiting in the model's batcher queue now (not counting the batch running).");
    for (const auto& [m, st] : stats) t.sample("ember_inference_queue_depth", labels(*m), static_cast<double>(st.queue_depth));
    t.family("ember_inference_items_total", "counter", "Items of the requests accepted (a request of shape [k, ...] is k items).");
    for (const auto& [m, st] : stats) t.sample("ember_inference_items_total", labels(*m), static_cast<double>(st.items));
    t.family("ember_batch_size", "histogram", "Items per batch run.");
    for (const auto& [m, st] : stats) {
        std::vector<double> bounds;
        for (std::size_t b = 1; b < m->batcher().max_batch(); b *= 2) bounds.push_back(static_cast<double>(b));
        bounds.push_back(static_cast<double>(m->batcher().max_batch()));
        std::vector<std::uint64_t> counts(bounds.size() + 1, 0);
        double sum = 0;
        for (std::size_t n = 1; n < st.batch_items.size(); ++n) {
            const auto bucket = std::lower_bound(bounds.begin(), bounds.end(), static_cast<double>(n)) - bounds.begin();
            counts[static_cast<std::size_t>(bucket)] += st.batch_items[n];
            sum += static_cast<double>(n * st.batch_items[n]);
        }
        t.histogram("ember_batch_size", labels(*m), bounds, counts, sum);
    }
    t.family("ember_batcher_refused_total", "counter",
             "Requests the batcher refused (answered 503): shed (the queue's oldest request waited past --shed-after-ms), or full_or_stopping.");
    for (const auto& [m, st] : stats) {
        t.sample("ember_batcher_refused_total", labels(*m) + ",reason=\"shed\"", static_cast<double>(st.shed));
        t.sample("ember_batcher_refused_total", labels(*m) + ",reason=\"full_or_stopping\"", static_cast<double>(st.refused - st.shed));
    }
    t.family("ember_http_responses_total", "counter", "HTTP responses by status code, every endpoint.");
    for (std::size_t code = 100; code < s.responses.size(); ++code)
        if (const std::uint64_t n = s.responses[code].load(std::memory_order_relaxed))
            t.sample("ember_http_responses_total", prometheus_text::label("code", std::to_string(code)), static_cast<double>(n));
    return t.take();
}

void add_routes(httplib::Server& svr, server_state& s, const options& o) {
    using req_t = const httplib::Request&;
    using res_t = httplib::Response&;
    svr.Get("/v2/health/live", route(s, [](server_state&, req_t, res_t res) { res.status = 200; }));
    svr.Get("/v2/health/ready", route(s, [](server_state& st, req_t, res_t res) {
        if (st.stopping.load()) throw http_error{400, "not ready: stopping"};
        for (const auto& m : st.models)
            if (m->current() == served_model::state::loading) throw http_error{400, "not ready: model '" + m->name() + "' is still compiling"};
        res.status = 200;
    }));
    svr.Get("/v2", route(s, [](server_state&, req_t, res_t res) {
        answer(res, 200, {{"name", "ember-serve"}, {"version", EMBER_VERSION_STRING}, {"extensions", json::array()}});
    }));
    const auto metadata = [](server_state& st, req_t req, res_t res) { answer(res, 200, resolve(st, req).metadata()); };
    const auto ready = [](server_state& st, req_t req, res_t res) {
        try {
            resolve(st, req);
        } catch (const http_error& e) {
            if (e.status != 503) throw;
            throw http_error{400, e.message};  // not ready: a 4xx, as the protocol says
        }
        res.status = 200;
    };
    svr.Get(R"(/v2/models/([^/]+))", route(s, metadata));
    svr.Get(R"(/v2/models/([^/]+)/versions/([^/]+))", route(s, metadata));
    svr.Get(R"(/v2/models/([^/]+)/ready)", route(s, ready));
    svr.Get(R"(/v2/models/([^/]+)/versions/([^/]+)/ready)", route(s, ready));
    svr.Post(R"(/v2/models/([^/]+)/infer)", route(s, infer));
    svr.Post(R"(/v2/models/([^/]+)/versions/([^/]+)/infer)", route(s, infer));
    svr.Get("/metrics", [&s](req_t, res_t res) { res.set_content(metrics_text(s), "text/plain; version=0.0.4; charset=utf-8"); });

    // httplib's own errors (no route, body too large, a malformed request) get a JSON body too.
    const std::size_t max_body_mb = o.max_body_mb;
    svr.set_error_handler([max_body_mb](req_t req, res_t res) {
        if (!res.body.empty()) return;
        std::string why = "HTTP error " + std::to_string(res.status);
        if (res.status == 400) why = "a malformed HTTP request";
        if (res.status == 404) why = "no endpoint " + req.method + " " + req.path;
        if (res.status == 413) why = "the body is larger than --max-body-mb (" + std::to_string(max_body_mb) + " MiB)";
        answer(res, res.status, {{"error", why}});
    });
    svr.set_exception_handler([](req_t, res_t res, std::exception_ptr ep) {
        std::string why = "unknown exception";
        try {
            std::rethrow_exception(ep);
        } catch (const std::exception& e) {
            why = e.what();
        } catch (...) {
        }
        answer(res, 500, {{"error", "internal error: " + why}});
    });
    // Counted just before each response is written (a logger would run after: a client could
    // read /metrics before its previous answer was counted).
    svr.set_post_routing_handler([&s](req_t, const httplib::Response& res) {
        if (res.status >= 100 && static_cast<std::size_t>(res.status) < s.responses.size())
            s.responses[static_cast<std::size_t>(res.status)].fetch_add(1, std::memory_order_relaxed);
    });
}

int run(const options& o) {
    std::string why;
    const serve::repository_scan scan = serve::scan_repository(o.models, why);
    if (!why.empty()) fail("--models '" + o.models + "'", why);
    for (const std::string& line : scan.skipped) std::fprintf(stderr, "ember-serve: %s\n", line.c_str());
    if (scan.models.empty()) fail("--models '" + o.models + "'", "no model to serve (REPO/<model>/<version>/model.onnx)");

    // SIGINT and SIGTERM are taken by one thread with sigwait(): block them before any thread
    // starts (threads inherit the mask). Their disposition is reset first: a shell starts
    // background jobs with SIGINT ignored, and an ignored signal never reaches sigwait(). A
    // client that hangs up must not kill the server (SIGPIPE).
    std::signal(SIGINT, SIG_DFL);
    std::signal(SIGTERM, SIG_DFL);
    sigset_t stop_signals;
    sigemptyset(&stop_signals);
    sigaddset(&stop_signals, SIGINT);
    sigaddset(&stop_signals, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
    std::signal(SIGPIPE, SIG_IGN);

    // One pool runs every model's batches; its idle threads park at once, since the HTTP
    // threads share the cores.
    const example::session_threads pool(o.threads, std::chrono::microseconds(0));
    serve::serving_options serving;
    serving.max_batch = o.max_batch;
    serving.max_delay = std::chrono::microseconds(static_cast<std::int64_t>(o.max_delay_us));
    serving.shed_after = std::chrono::milliseconds(static_cast<std::int64_t>(o.shed_after_ms));
    serving.max_queue = o.max_queue;
    serving.instances = o.instances;
    serving.exec = pool.executor();

    server_state state;
    for (const serve::model_source& source : scan.models) state.models.push_back(std::make_unique<served_model>(source));

    httplib::Server svr;
    const std::size_t http_threads = o.http_threads;
    svr.new_task_queue = [http_threads] { return new httplib::ThreadPool(http_threads); };
    svr.set_payload_max_length(o.max_body_mb << 20);
    svr.set_keep_alive_max_count(1000);
    // httplib writes an answer's headers and body apart: with Nagle's algorithm the body waited
    // for the client's delayed ACK, 40 ms an answer on Linux.
    svr.set_tcp_nodelay(true);
    // SO_REUSEADDR (a restart may bind at once) but not httplib's default SO_REUSEPORT, with
    // which a second ember-serve on the same port would share it instead of failing to start.
    int listening = -1;
    svr.set_socket_options([&listening](socket_t sock) {
        int yes = 1;
        setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
        listening = sock;
    });
    add_routes(svr, state, o);
    int port = static_cast<int>(o.port);
    if (port == 0) port = svr.bind_to_any_port(o.host);
    else if (!svr.bind_to_port(o.host, port)) port = -1;
    if (port < 0) fail("--host " + o.host + " --port " + std::to_string(o.port), "cannot listen there (the port is taken, or the address is not this machine's)");
    // httplib listens with a backlog of 5: connections beyond that, opened at once (a burst of
    // clients, wrk's 32), lose their SYN and wait a second for its retransmission. Linux takes a
    // second listen() on the socket as a new backlog.
    ::listen(listening, SOMAXCONN);

    std::atomic<bool> listener_done{false};
    std::thread listener([&] {
        svr.listen_after_bind();
        listener_done = true;
    });
    while (!svr.is_running() && !listener_done) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    std::atomic<int> signal_taken{0};
    std::thread signals([&] {
        int sig = 0;
        sigwait(&stop_signals, &sig);
        signal_taken = sig;
        state.stopping = true;
        svr.stop();  // closes the listening socket; listen returns once the requests in flight are answered
    });

    // Live from here on; ready once every model has compiled.
    std::string served;
    for (const auto& m : state.models) {
        if (state.stopping) break;
        const std::string note = m->load(serving);
        if (m->current() == served_model::state::failed) {
            std::fprintf(stderr, "ember-serve: model '%s' version %s: %s; skipped\n", m->name().c_str(), m->version().c_str(), example::one_line(m->why_failed()).c_str());
            continue;
        }
        if (!note.empty()) std::fprintf(stderr, "ember-serve: model '%s': %s\n", m->name().c_str(), example::one_line(note).c_str());
        served += (served.empty() ? "" : ", ") + m->name() + " (v" + m->version() + ")";
    }
    int code = 0;
    if (served.empty() && !state.stopping) {
        std::fprintf(stderr, "ember-serve: no model could be served\n");
        code = example::exit_failure;
        pthread_kill(signals.native_handle(), SIGTERM);  // the signal thread stops the server
    } else if (!state.stopping && !listener_done) {
        const std::string host = o.host.find(':') != std::string::npos ? "[" + o.host + "]" : o.host;
        std::printf("ember-serve: listening on http://%s:%d, models: %s\n", host.c_str(), port, served.c_str());
        std::fflush(stdout);
    }
    listener.join();
    if (signal_taken == 0 && code == 0) {  // the listener stopped by itself
        std::fprintf(stderr, "ember-serve: the server stopped listening\n");
        code = example::exit_failure;
        pthread_kill(signals.native_handle(), SIGTERM);
    }
    signals.join();
    for (const auto& m : state.models) m->stop();  // nothing is queued any more: every handler has returned
    if (code == 0) std::fprintf(stderr, "ember-serve: %s: stopped\n", signal_taken == SIGINT ? "SIGINT" : "SIGTERM");
    return code;
}

} // namespace

int main(int argc, char** argv) {
    return example::run_main("ember-serve", [&] { return run(parse_args(argc, argv)); });
}
