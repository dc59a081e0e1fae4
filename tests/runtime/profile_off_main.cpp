// SPDX-License-Identifier: Apache-2.0
// ember_profile_off_test: with EMBER_ENABLE_PROFILING 0 (set for this file by tests/CMakeLists.txt)
// the profiling API still compiles (set_profile_hook, trace_recorder) and a hook that is set is
// never called, by run() or run_for(), while both still run every step. The plan is built by hand
// (three steps of a counting kernel), so this needs no op table and compiles in seconds.
// Prints "profile off: ok" when every check passes.
#include <cstdio>

#include <ember/runtime/profile.hpp>
#include <ember/runtime/session.hpp>

#if EMBER_ENABLE_PROFILING != 0
#error "this test is built with EMBER_ENABLE_PROFILING=0"
#endif
static_assert(!ember::profiling_enabled, "profiling_enabled follows EMBER_ENABLE_PROFILING");

namespace {

int failures = 0;

void check(bool ok, const char* what) {
    if (!ok) {
        std::printf("FAIL: %s\n", what);
        ++failures;
    }
}

void count_step(const void* args, const ember::run_context&) noexcept { ++*static_cast<int*>(const_cast<void*>(args)); }

void count_event(void* user, const ember::step_event&) noexcept { ++*static_cast<int*>(user); }

} // namespace

int main() {
    int steps_run = 0;
    ember::plan p;
    for (int i = 0; i < 3; ++i) {
        ember::detail::plan_access::steps(p).push_back({&count_step, &steps_run, i});
        ember::detail::plan_access::step_names(p).push_back("step " + std::to_string(i));
        ember::detail::plan_access::step_ops(p).push_back("Count");
    }
    ember::session s(p);
    check(s.state() == ember::status::ok, "session state");

    int hook_calls = 0;
    ember::trace_recorder recorder(16);
    s.set_profile_hook(&count_event, &hook_calls);
    check(s.get_profile_hook().user == &hook_calls, "the hook is stored");
    check(s.run() == ember::status::ok, "run()");
    ember::run_progress progress;
    do progress = s.run_for(ember::run_budget::steps(1));
    while (progress.in_progress());
    check(progress.done(), "run_for()");
    s.set_profile_hook(recorder.hook());
    check(s.run() == ember::status::ok, "run() with the recorder");

    check(steps_run == 9, "every step ran three times");
    check(hook_calls == 0, "the hook was never called");
    check(recorder.size() == 0 && recorder.dropped() == 0, "the recorder saw nothing");
    if (failures) return 1;
    std::printf("profile off: ok (%d steps run, %d hook calls)\n", steps_run, hook_calls);
    return 0;
}
