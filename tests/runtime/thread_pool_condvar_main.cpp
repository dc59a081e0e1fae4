// SPDX-License-Identifier: Apache-2.0
// ember_pool_condvar_test: thread_pool's test cases over its condition-variable parking, the
// path systems without a futex take, built here with EMBER_THREAD_POOL_CONDVAR.
#define EMBER_THREAD_POOL_CONDVAR 1
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include "runtime/thread_pool_cases.hpp"
