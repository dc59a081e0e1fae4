// SPDX-License-Identifier: Apache-2.0
// Profiling: session::set_profile_hook() sees every step run() and run_for() run, once, in order,
// with begin <= end; no hook, no call. trace_recorder's Chrome trace parses back (a strict JSON
// reader below, written apart from the writer) with one "X" event per step run, names escaped;
// events past its capacity are dropped and counted; its summary counts each op type.
#include <doctest/doctest.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include <ember/ember.hpp>

#include "support/check.hpp"

using ember::dtype;
using ember::run_budget;
using ember::status;
using ember::step_event;

namespace {

// A strict JSON reader (RFC 8259): enough to read a trace back and to fail on anything a parser
// would refuse (a raw control character, an unknown escape, a lone surrogate, trailing bytes).
struct json {
    enum class kind { null, boolean, number, string, array, object } k = kind::null;
    double number = 0.0;
    std::string text;  // strings, UTF-8
    std::vector<json> items;
    std::vector<std::pair<std::string, json>> members;

    const json* get(std::string_view key) const {
        for (const auto& [name, value] : members)
            if (name == key) return &value;
        return nullptr;
    }
};

class json_reader {
public:
    explicit json_reader(std::string_view s) : s_(s) {}

    bool read(json& out) {
        space();
        if (!value(out, 0)) return false;
        space();
        return at_ == s_.size();
    }

private:
    void space() {
        while (at_ < s_.size() && (s_[at_] == ' ' || s_[at_] == '\n' || s_[at_] == '\r' || s_[at_] == '\t')) ++at_;
    }
    bool eat(char c) {
        space();
        if (at_ < s_.size() && s_[at_] == c) return ++at_, true;
        return false;
    }
    bool literal(std::string_view word) {
        if (s_.substr(at_, word.size()) != word) return false;
        at_ += word.size();
        return true;
    }
    bool value(json& v, int depth) {
        if (depth > 64 || at_ >= s_.size()) return false;
        const char c = s_[at_];
        if (c == '{') {
            v.k = json::kind::object;
            ++at_;
            if (eat('}')) return true;
            do {
                std::pair<std::string, json> m;
                space();
                if (!string(m.first) || !eat(':')) return false;
                space();
                if (!value(m.second, depth + 1)) return false;
                v.members.push_back(std::move(m));
            } while (eat(','));
            return eat('}');
        }
        if (c == '[') {
            v.k = json::kind::array;
            ++at_;
            if (eat(']')) return true;
            do {
                json item;
                space();
                if (!value(item, depth + 1)) return false;
                v.items.push_back(std::move(item));
            } while (eat(','));
            return eat(']');
        }
        if (c == '"') return v.k = json::kind::string, string(v.text);
        if (c == 't' || c == 'f') return v.k = json::kind::boolean, v.number = c == 't', literal(c == 't' ? "true" : "false");
        if (c == 'n') return literal("null");
        v.k = json::kind::number;
        return number(v.number);
    }
    bool digits() {
        const std::size_t from = at_;
        while (at_ < s_.size() && s_[at_] >= '0' && s_[at_] <= '9') ++at_;
        return at_ > from;
    }
    bool number(double& out) {
        const std::size_t from = at_;
        if (at_ < s_.size() && s_[at_] == '-') ++at_;
        if (at_ < s_.size() && s_[at_] == '0') ++at_;
        else if (!digits()) return false;
        if (at_ < s_.size() && s_[at_] == '.' && (++at_, !digits())) return false;
        if (at_ < s_.size() && (s_[at_] == 'e' || s_[at_] == 'E')) {
            ++at_;
            if (at_ < s_.size() && (s_[at_] == '+' || s_[at_] == '-')) ++at_;
            if (!digits()) return false;
        }
        out = std::stod(std::string(s_.substr(from, at_ - from)));
        return true;
    }
    bool hex4(std::uint32_t& u) {
        if (at_ + 4 > s_.size()) return false;
        u = 0;
        for (int i = 0; i < 4; ++i) {
            const char c = s_[at_++];
            const int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
            if (d < 0) return false;
            u = u * 16 + static_cast<std::uint32_t>(d);
        }
        return true;
    }
    static void utf8(std::string& out, std::uint32_t u) {
        if (u < 0x80) {
            out += static_cast<char>(u);
        } else if (u < 0x800) {
            out += static_cast<char>(0xc0 | (u >> 6));
            out += static_cast<char>(0x80 | (u & 0x3f));
        } else if (u < 0x10000) {
            out += static_cast<char>(0xe0 | (u >> 12));
            out += static_cast<char>(0x80 | ((u >> 6) & 0x3f));
            out += static_cast<char>(0x80 | (u & 0x3f));
        } else {
            out += static_cast<char>(0xf0 | (u >> 18));
            out += static_cast<char>(0x80 | ((u >> 12) & 0x3f));
            out += static_cast<char>(0x80 | ((u >> 6) & 0x3f));
            out += static_cast<char>(0x80 | (u & 0x3f));
        }
    }
    bool string(std::string& out) {
        if (at_ >= s_.size() || s_[at_] != '"') return false;
        ++at_;
        while (at_ < s_.size()) {
            const unsigned char c = static_cast<unsigned char>(s_[at_++]);
            if (c == '"') return true;
            if (c < 0x20) return false;  // raw control characters are not allowed
            if (c != '\\') {
                out += static_cast<char>(c);
                continue;
            }
            if (at_ >= s_.size()) return false;
            const char e = s_[at_++];
            std::uint32_t u = 0;
            switch (e) {
                case '"': out += '"'; break;
                case '\\': out += '\\'; break;
                case '/': out += '/'; break;
                case 'b': out += '\b'; break;
                case 'f': out += '\f'; break;
                case 'n': out += '\n'; break;
                case 'r': out += '\r'; break;
                case 't': out += '\t'; break;
                case 'u':
                    if (!hex4(u)) return false;
                    if (u >= 0xdc00 && u <= 0xdfff) return false;
                    if (u >= 0xd800 && u <= 0xdbff) {
                        std::uint32_t lo = 0;
                        if (!literal("\\u") || !hex4(lo) || lo < 0xdc00 || lo > 0xdfff) return false;
                        u = 0x10000 + ((u - 0xd800) << 10) + (lo - 0xdc00);
                    }
                    utf8(out, u);
                    break;
                default: return false;
            }
        }
        return false;
    }

    std::string_view s_;
    std::size_t at_ = 0;
};

json parse(const std::string& text) {
    json j;
    REQUIRE_MESSAGE(json_reader(text).read(j), "not JSON:\n" << text);
    return j;
}

// Gemm, Relu, Gemm, Add, Mul, Tanh, Sigmoid (whatever the passes leave of them), y = [2, 8].
ember::plan chain() {
    ember::graph_builder b("chain");
    const auto x = b.input("x", dtype::float32, {2, 16});
    auto h = b.node("Gemm", {x, b.constant("w1", ember::test::random_f32({16, 32}, 1))}, {}, "gemm \"one\"");
    h = b.node("Relu", {h});
    h = b.node("Gemm", {h, b.constant("w2", ember::test::random_f32({32, 8}, 3))}, {}, "gemm\\two");
    h = b.node("Add", {h, b.constant("k", ember::test::random_f32({1, 8}, 4))});
    h = b.node("Tanh", {b.node("Mul", {h, h})});
    b.output(b.node("Sigmoid", {h}), "y");
    auto p = ember::compile(*std::move(b).build());
    REQUIRE_MESSAGE(p, p.error().message);
    return std::move(*p);
}

// A hook that keeps what it sees.
struct seen_steps {
    std::vector<step_event> events;
    static void hook(void* self, const step_event& e) noexcept { static_cast<seen_steps*>(self)->events.push_back(e); }
};

// events holds `runs` runs of the plan's steps, each step once and in order, begin <= end,
// one run after the other, named as the plan names them, on this thread.
void check_runs(const ember::plan& p, const std::vector<step_event>& events, std::size_t runs) {
    const std::size_t n = p.steps().size();
    REQUIRE(events.size() == n * runs);
    for (std::size_t i = 0; i < events.size(); ++i) {
        const step_event& e = events[i];
        CAPTURE(i);
        CHECK(e.step == i % n);
        CHECK(e.name == p.step_name(e.step));
        CHECK(e.op == p.step_op(e.step));
        CHECK(e.begin_ns <= e.end_ns);
        CHECK(e.thread == ember::this_thread_number());
        if (i > 0) CHECK(events[i - 1].end_ns <= e.begin_ns);
    }
}

step_event event(std::size_t step, std::string_view name, std::string_view op, std::int64_t begin, std::int64_t end) {
    step_event e;
    e.step = step;
    e.name = name;
    e.op = op;
    e.thread = 7;
    e.begin_ns = begin;
    e.end_ns = end;
    return e;
}

} // namespace

TEST_CASE("profile: the hook sees every step of each run() once, in order; none without a hook") {
    const ember::plan p = chain();
    REQUIRE(p.steps().size() >= 3);
    ember::session s(p);
    const ember::tensor x = ember::test::random_f32({2, 16}, 5);
    REQUIRE(s.bind_input(0, x.bytes(), x.size_bytes()) == status::ok);

    seen_steps seen;
    REQUIRE(s.run() == status::ok);  // no hook yet
    const bool hook_unset = s.get_profile_hook().fn == nullptr;
    CHECK(hook_unset);
    s.set_profile_hook(&seen_steps::hook, &seen);
    CHECK(s.get_profile_hook().user == &seen);
    REQUIRE(s.run() == status::ok);
    REQUIRE(s.run() == status::ok);
    check_runs(p, seen.events, 2);
    // The last run's step times are the hook's end - begin.
    REQUIRE(s.step_times().size() == p.steps().size());
    for (std::size_t i = 0; i < p.steps().size(); ++i) {
        const step_event& e = seen.events[p.steps().size() + i];
        CHECK(s.step_times()[i].count() == e.end_ns - e.begin_ns);
    }

    s.set_profile_hook({});
    const std::size_t before = seen.events.size();
    REQUIRE(s.run() == status::ok);
    CHECK(seen.events.size() == before);
    CHECK(ember::profiling_enabled);
}

TEST_CASE("profile: run_for() reports each step it runs, across calls, and a failing step") {
    const ember::plan p = chain();
    ember::session s(p);
    const ember::tensor x = ember::test::random_f32({2, 16}, 5);
    REQUIRE(s.bind_input(0, x.bytes(), x.size_bytes()) == status::ok);
    seen_steps seen;
    s.set_profile_hook({&seen_steps::hook, &seen});
    std::size_t calls = 0;
    ember::run_progress progress;
    do {
        progress = s.run_for(run_budget::steps(2));
        ++calls;
        CHECK(seen.events.size() == progress.steps_done);
    } while (progress.in_progress());
    CHECK(progress.done());
    CHECK(calls == (p.steps().size() + 1) / 2);
    check_runs(p, seen.events, 1);
    // A whole run_for() then run(): two runs.
    REQUIRE(s.run_for({}).done());
    REQUIRE(s.run() == status::ok);
    check_runs(p, seen.events, 3);

    // Gather with an index out of range: the failing step is reported, then the run stops.
    ember::graph_builder b("gather");
    const auto data = b.constant("data", ember::test::random_f32({4, 3}, 8));
    const auto idx = b.input("idx", dtype::int64, {2});
    b.output(b.node("Relu", {b.node("Gather", {data, idx}, {}, "the gather")}), "y");
    auto g = ember::compile(*std::move(b).build());
    REQUIRE_MESSAGE(g, g.error().message);
    std::size_t gather_step = g->steps().size();
    for (std::size_t i = 0; i < g->steps().size(); ++i)
        if (g->step_name(i) == "the gather") gather_step = i;
    REQUIRE(gather_step < g->steps().size());
    ember::session bad(*g);
    std::int64_t indices[2] = {1, 9};
    REQUIRE(bad.bind_input(0, indices) == status::ok);
    seen_steps failing;
    bad.set_profile_hook({&seen_steps::hook, &failing});
    CHECK(bad.run() == status::invalid_argument);
    REQUIRE(failing.events.size() == gather_step + 1);
    CHECK(failing.events.back().name == "the gather");
    failing.events.clear();
    progress = bad.run_for({});
    CHECK(progress.code == status::invalid_argument);
    CHECK(failing.events.size() == gather_step + 1);
}

TEST_CASE("profile: trace_recorder writes one Chrome trace event per step run, and parses back") {
    const ember::plan p = chain();
    const std::size_t steps = p.steps().size();
    constexpr std::size_t runs = 3;
    ember::trace_recorder recorder(steps * runs);
    CHECK(recorder.capacity() == steps * runs);
    ember::session s(p);
    const ember::tensor x = ember::test::random_f32({2, 16}, 5);
    REQUIRE(s.bind_input(0, x.bytes(), x.size_bytes()) == status::ok);
    REQUIRE(s.run() == status::ok);  // not recorded
    s.set_profile_hook(recorder.hook());
    for (std::size_t r = 0; r < runs; ++r) REQUIRE(s.run() == status::ok);
    s.set_profile_hook({});
    REQUIRE(s.run() == status::ok);  // not recorded
    CHECK(recorder.size() == steps * runs);
    CHECK(recorder.dropped() == 0);

    const json trace = parse(recorder.chrome_trace());
    const json* events = trace.get("traceEvents");
    REQUIRE(events);
    REQUIRE(events->k == json::kind::array);
    REQUIRE(events->items.size() == steps * runs);
    double last_ts = -1.0;
    for (std::size_t i = 0; i < events->items.size(); ++i) {
        const json& e = events->items[i];
        const step_event& want = recorder.events()[i];
        CAPTURE(i);
        REQUIRE(e.get("name"));
        REQUIRE(e.get("ph"));
        CHECK(e.get("ph")->text == "X");
        CHECK(e.get("name")->text == std::string(p.step_name(i % steps)));
        CHECK(e.get("cat")->text == std::string(p.step_op(i % steps)));
        REQUIRE(e.get("args"));
        CHECK(e.get("args")->get("op")->text == std::string(p.step_op(i % steps)));
        CHECK(e.get("args")->get("step")->number == static_cast<double>(i % steps));
        CHECK(e.get("pid")->number == 1.0);
        CHECK(e.get("tid")->number == static_cast<double>(ember::this_thread_number()));
        const double ts = e.get("ts")->number, dur = e.get("dur")->number;
        CHECK(ts >= last_ts);
        CHECK(dur >= 0.0);
        CHECK(dur == doctest::Approx(static_cast<double>(want.end_ns - want.begin_ns) / 1e3).epsilon(1e-9));
        last_ts = ts;
    }
    CHECK(events->items[0].get("ts")->number == 0.0);  // from the first event
    CHECK(trace.get("otherData")->get("dropped_events")->number == 0.0);
    // The quotes and the backslash in the node names came back as they were.
    bool quoted = false, backslashed = false;
    for (const json& e : events->items) {
        quoted = quoted || e.get("name")->text == "gemm \"one\"";
        backslashed = backslashed || e.get("name")->text == "gemm\\two";
    }
    CHECK(quoted);
    CHECK(backslashed);

    // The same JSON in a file.
    const std::string path = "ember_profile_test_trace.json";
    REQUIRE(recorder.save_chrome_trace(path));
    std::FILE* f = std::fopen(path.c_str(), "rb");
    REQUIRE(f);
    std::string bytes;
    for (int c; (c = std::fgetc(f)) != EOF;) bytes += static_cast<char>(c);
    std::fclose(f);
    std::remove(path.c_str());
    CHECK(bytes == recorder.chrome_trace());
    const ember::result<void> bad = recorder.save_chrome_trace("no/such/folder/trace.json");
    CHECK(bad.code() == status::io_error);
    CHECK(bad.error().message.find("no/such/folder/trace.json") != std::string::npos);

    recorder.clear();
    CHECK(recorder.size() == 0);
    CHECK(parse(recorder.chrome_trace()).get("traceEvents")->items.empty());
}

TEST_CASE("profile: events past the capacity are dropped and counted, never stored") {
    const ember::plan p = chain();
    const std::size_t steps = p.steps().size();
    ember::trace_recorder recorder(steps + 1);
    ember::session s(p);
    s.set_profile_hook(recorder.hook());
    for (int r = 0; r < 3; ++r) REQUIRE(s.run() == status::ok);
    CHECK(recorder.size() == steps + 1);
    CHECK(recorder.dropped() == 2 * steps - 1);
    const json trace = parse(recorder.chrome_trace());
    CHECK(trace.get("traceEvents")->items.size() == steps + 1);
    CHECK(trace.get("otherData")->get("dropped_events")->number == static_cast<double>(2 * steps - 1));
    // The first events are kept, the later ones dropped.
    CHECK(recorder.events()[steps].step == 0);

    ember::trace_recorder none(0);
    s.set_profile_hook(none.hook());
    REQUIRE(s.run() == status::ok);
    CHECK(none.capacity() == 0);
    CHECK(none.size() == 0);
    CHECK(none.dropped() == steps);
}

TEST_CASE("profile: names with quotes, backslashes, control characters and bad UTF-8 are escaped") {
    using namespace std::string_literals;
    const std::string names[] = {
        "plain",
        "quote \" backslash \\ slash /",
        "nul \0 bell \a tab \t newline \n cr \r ff \f bs \b esc \x1b unit \x1f"s,
        "utf-8: caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x94\xa5",
        "bad: \xff \xc3 \xed\xa0\x80 \xc0\xaf \xf4\x90\x80\x80 end",
    };
    const std::string want[] = {
        names[0],
        names[1],
        names[2],
        names[3],
        "bad: \xef\xbf\xbd \xef\xbf\xbd \xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd \xef\xbf\xbd\xef\xbf\xbd \xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd end",
    };
    ember::trace_recorder recorder(8);
    const ember::profile_hook hook = recorder.hook();
    for (std::size_t i = 0; i < 5; ++i) hook.fn(hook.user, event(i, names[i], names[i], 1000 + 10 * static_cast<std::int64_t>(i), 1005 + 10 * static_cast<std::int64_t>(i)));
    const std::string text = recorder.chrome_trace();
    for (char c : text) CHECK((static_cast<unsigned char>(c) >= 0x20 || c == '\n'));
    const json trace = parse(text);
    const std::vector<json>& events = trace.get("traceEvents")->items;
    REQUIRE(events.size() == 5);
    for (std::size_t i = 0; i < 5; ++i) {
        CAPTURE(i);
        CHECK(events[i].get("name")->text == want[i]);
        CHECK(events[i].get("cat")->text == want[i]);
        CHECK(events[i].get("ts")->number == doctest::Approx(0.01 * static_cast<double>(i)));
        CHECK(events[i].get("dur")->number == doctest::Approx(0.005));
        CHECK(events[i].get("tid")->number == 7.0);
    }
    CHECK(text.find("\"ts\":0.010,\"dur\":0.005") != std::string::npos);  // ns kept: 3 decimals of us
}

TEST_CASE("profile: the summary counts and times each op type, most time first") {
    ember::trace_recorder recorder(16);
    const ember::profile_hook hook = recorder.hook();
    const std::string conv = "Conv", relu = "Relu", add = "Add";  // views into other strings than the plan's
    hook.fn(hook.user, event(0, "a", conv, 0, 300));
    hook.fn(hook.user, event(1, "b", relu, 300, 350));
    hook.fn(hook.user, event(2, "c", std::string_view("Conv"), 350, 650));
    hook.fn(hook.user, event(3, "d", add, 650, 750));
    hook.fn(hook.user, event(4, "e", relu, 750, 800));
    const std::vector<ember::op_time> ops = recorder.summary();
    REQUIRE(ops.size() == 3);
    CHECK(ops[0].op == "Conv");
    CHECK(ops[0].count == 2);
    CHECK(ops[0].total.count() == 600);
    CHECK(ops[0].mean().count() == 300);
    CHECK(ops[0].share == doctest::Approx(0.75));
    CHECK(ops[1].op == "Add");  // 100 ns, ties broken by name
    CHECK(ops[1].count == 1);
    CHECK(ops[2].op == "Relu");
    CHECK(ops[2].count == 2);
    CHECK(ops[2].total.count() == 100);
    CHECK(ops[1].share + ops[2].share == doctest::Approx(0.25));

    const std::string table = recorder.summary_table();
    CAPTURE(table);
    CHECK(table.find("op type") == 0);
    CHECK(table.find("Conv           2       0.001         0.3        75.0\n") != std::string::npos);
    CHECK(table.find("all            5       0.001         0.2       100.0\n") != std::string::npos);
    CHECK(table.find("Add ") < table.find("Relu "));

    // Over a real plan: the counts are the plan's steps of each type times the runs.
    const ember::plan p = chain();
    ember::trace_recorder two(2 * p.steps().size());
    ember::session s(p);
    s.set_profile_hook(two.hook());
    REQUIRE(s.run() == status::ok);
    REQUIRE(s.run() == status::ok);
    std::size_t counted = 0;
    for (const ember::op_time& t : two.summary()) {
        std::size_t in_plan = 0;
        for (std::size_t i = 0; i < p.steps().size(); ++i) in_plan += p.step_op(i) == t.op;
        CHECK(t.count == 2 * in_plan);
        counted += t.count;
    }
    CHECK(counted == 2 * p.steps().size());
}

TEST_CASE("profile: one recorder shared by sessions on two threads records every step of both") {
    const ember::plan p = chain();
    const std::size_t steps = p.steps().size();
    constexpr std::size_t runs = 50;
    ember::trace_recorder recorder(2 * runs * steps);
    std::uint32_t threads[2] = {};
    auto body = [&](int t) {
        ember::session s(p);
        s.set_profile_hook(recorder.hook());
        for (std::size_t r = 0; r < runs; ++r)
            if (s.run() != status::ok) return;
        threads[t] = ember::this_thread_number();
    };
    std::thread a(body, 0), b(body, 1);
    a.join();
    b.join();
    CHECK(recorder.size() == 2 * runs * steps);
    CHECK(recorder.dropped() == 0);
    CHECK(threads[0] != 0);
    CHECK(threads[1] != 0);
    CHECK(threads[0] != threads[1]);
    std::size_t per_thread[2] = {};
    for (const step_event& e : recorder.events()) {
        per_thread[0] += e.thread == threads[0];
        per_thread[1] += e.thread == threads[1];
    }
    CHECK(per_thread[0] == runs * steps);
    CHECK(per_thread[1] == runs * steps);
    CHECK(parse(recorder.chrome_trace()).get("traceEvents")->items.size() == 2 * runs * steps);
}
