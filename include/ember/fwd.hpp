// SPDX-License-Identifier: Apache-2.0
// Forward declarations of ember's public types: cheap enough to include from a game's headers
// that only hold pointers or references to a plan or session.
#pragma once

#include <cstdint>

#include "ember/config.hpp"

EMBER_NAMESPACE_BEGIN

enum class status : std::uint8_t;
enum class dtype : std::uint8_t;
struct error_info;
template <class T>
class result;
template <class T>
class span;
class shape;
struct partial_shape;
template <class T>
class tensor_view;
class tensor;
struct allocator;
struct attribute;
struct value;
struct node;
class graph;
class graph_builder;
struct compile_options;
class op_registry;
class plan;
class session;
struct executor;
class thread_pool;

EMBER_NAMESPACE_END
