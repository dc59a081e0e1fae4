// SPDX-License-Identifier: Apache-2.0
// ember-codegen: compiles an ONNX model into a C++ header, so that a program ships no .onnx
// file and parses nothing at load time.
//
//   ember-codegen MODEL.onnx [-o FILE.hpp] [--namespace NAME]
//
// The header holds the graph as ember::onnx::load_file() gives it, as constant tables
// (include/ember/graph/codegen.hpp says what they hold) and the weights as string literals, and
// defines in namespace NAME (default: the model's file name made an identifier, "squeezenet1_1"
// for squeezenet1_1.onnx):
//
//   ember::result<ember::graph> build_graph(const ember::allocator& = ember::default_allocator());
//   ember::result<ember::plan> compile(const ember::compile_options& = {});
//
// It includes only <ember/ember.hpp> and <ember/graph/codegen.hpp>, not the ONNX importer.
// Without -o the header goes to stdout; with -o it is written beside FILE and renamed to it
// when complete, so a failed run never leaves half a header. On any failure it prints one line,
// "ember-codegen: <what>: <why>", on stderr and exits with 2 (bad command line) or 1 (anything
// else).
//
// Why string literals: a float32 weight byte is printable ASCII about a third of the time, so a
// literal with octal escapes takes ~3 characters a byte, and compilers read one literal as one
// token. For 8 MiB of weights, g++ 12 -O2 compiles it in ~1 s (an array of 0x.. bytes: ~23 s, of
// 64-bit words: ~4 s); clang++ 14 in ~0.8 s and 150 MB when the literal initialises a pointer
// (a char array initialised by the literal: ~4 s and 780 MB). MSVC limits a literal to 64 KiB,
// so this header is for g++ and clang++.
#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <ember/ember.hpp>
#include <ember/graph/codegen.hpp>
#include <ember/onnx.hpp>

#include "../common/cli.hpp"

namespace {

using example::exit_usage;
using example::fail;

constexpr std::string_view usage =
    "usage: ember-codegen MODEL.onnx [-o FILE.hpp] [--namespace NAME]\n"
    "  -o FILE.hpp         write the header to FILE.hpp (default: stdout)\n"
    "  --namespace NAME    the C++ namespace of the generated code (default: the model's file\n"
    "                      name as an identifier); NAME may be nested, a::b\n";

struct options {
    std::string model, output, name_space;
};

constexpr std::string_view keywords[] = {
    "alignas", "alignof", "and", "and_eq", "asm", "auto", "bitand", "bitor", "bool", "break", "case", "catch", "char",
    "char8_t", "char16_t", "char32_t", "class", "compl", "concept", "const", "consteval", "constexpr", "constinit",
    "const_cast", "continue", "co_await", "co_return", "co_yield", "decltype", "default", "delete", "do", "double",
    "dynamic_cast", "else", "enum", "explicit", "export", "extern", "false", "float", "for", "friend", "goto", "if",
    "inline", "int", "long", "mutable", "namespace", "new", "noexcept", "not", "not_eq", "nullptr", "operator", "or",
    "or_eq", "private", "protected", "public", "register", "reinterpret_cast", "requires", "return", "short", "signed",
    "sizeof", "static", "static_assert", "static_cast", "struct", "switch", "template", "this", "thread_local", "throw",
    "true", "try", "typedef", "typeid", "typename", "union", "unsigned", "using", "virtual", "void", "volatile",
    "wchar_t", "while", "xor", "xor_eq",
    // names the header itself uses at namespace scope
    "ember", "std"};

bool is_keyword(std::string_view s) {
    for (std::string_view k : keywords)
        if (s == k) return true;
    return false;
}

/// Why `s` is not usable as one component of a namespace name, or "" when it is.
std::string identifier_problem(std::string_view s) {
    if (s.empty()) return "an empty name";
    for (char c : s)
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_'))
            return "'" + std::string(s) + "' has characters other than letters, digits and '_'";
    if (s[0] >= '0' && s[0] <= '9') return "'" + std::string(s) + "' starts with a digit";
    if (s.find("__") != std::string_view::npos || (s[0] == '_' && s.size() > 1 && s[1] >= 'A' && s[1] <= 'Z'))
        return "'" + std::string(s) + "' is reserved for the implementation";
    if (is_keyword(s)) return "'" + std::string(s) + "' is a C++ keyword or a namespace the header uses";
    return "";
}

/// The default namespace: the file name without folder and extension, as an identifier.
std::string namespace_from_path(const std::string& path) {
    std::string stem = path.substr(path.find_last_of("/\\") == std::string::npos ? 0 : path.find_last_of("/\\") + 1);
    if (const std::size_t dot = stem.find('.'); dot != std::string::npos) stem.resize(dot);
    std::string out;
    for (char c : stem) {
        const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
        if (ok) out.push_back(c);
        else if (!out.empty() && out.back() != '_') out.push_back('_');
    }
    while (!out.empty() && out.back() == '_') out.pop_back();
    if (out.empty()) return "model";
    if (out[0] >= '0' && out[0] <= '9') out = "model_" + out;
    if (is_keyword(out)) out += "_model";
    return out;
}

options parse_args(int argc, char** argv) {
    options o;
    for (int i = 1; i < argc; ++i) {
        std::string_view arg = argv[i];
        if (arg == "--help" || arg == "-h") {
            std::fputs(usage.data(), stdout);
            std::exit(0);
        }
        std::string_view flag = arg, value;
        bool has_value = false;
        if (arg.substr(0, 2) == "--") {
            if (const std::size_t eq = arg.find('='); eq != std::string_view::npos) {
                flag = arg.substr(0, eq);
                value = arg.substr(eq + 1);
                has_value = true;
            }
        }
        if (flag == "-o" || flag == "--namespace") {
            if (!has_value) {
                if (i + 1 >= argc) fail(std::string(flag), "needs a value", exit_usage);
                value = argv[++i];
            }
            if (flag == "-o") {
                if (value.empty()) fail("-o", "needs a file name", exit_usage);
                o.output = std::string(value);
            } else {
                o.name_space = std::string(value);
            }
            continue;
        }
        if (arg.size() > 1 && arg[0] == '-') fail(std::string(flag), "unknown flag (see ember-codegen --help)", exit_usage);
        if (!o.model.empty()) fail("command line", "more than one model given ('" + o.model + "' and '" + std::string(arg) + "')", exit_usage);
        o.model = std::string(arg);
    }
    if (o.model.empty()) fail("command line", "no model given (see ember-codegen --help)", exit_usage);
    if (o.name_space.empty()) {
        o.name_space = namespace_from_path(o.model);
    } else {
        std::string_view rest = o.name_space;
        while (true) {
            const std::size_t colons = rest.find("::");
            const std::string problem = identifier_problem(rest.substr(0, colons));
            if (!problem.empty()) fail("--namespace", problem, exit_usage);
            if (colons == std::string_view::npos) break;
            rest = rest.substr(colons + 2);
        }
    }
    return o;
}

// ---- writing C++ ------------------------------------------------------------------------

/// Appends bytes as the inside of a string literal: printable ASCII as is (but '"', '\\' and
/// '?', which could start a trigraph), the rest as octal escapes, three digits only when an
/// octal digit follows (an escape ends after three digits, so "\0001" is 0 then '1').
void append_escaped(std::string& out, const unsigned char* p, std::size_t n) {
    auto raw = [](unsigned char c) { return c >= 32 && c < 127 && c != '"' && c != '\\' && c != '?'; };
    for (std::size_t i = 0; i < n; ++i) {
        const unsigned char c = p[i];
        if (raw(c)) {
            out.push_back(static_cast<char>(c));
            continue;
        }
        const bool digit_follows = i + 1 < n && raw(p[i + 1]) && p[i + 1] >= '0' && p[i + 1] <= '7';
        out.push_back('\\');
        if (digit_follows || c >= 64) out.push_back(static_cast<char>('0' + (c >> 6)));
        if (digit_follows || c >= 8) out.push_back(static_cast<char>('0' + ((c >> 3) & 7)));
        out.push_back(static_cast<char>('0' + (c & 7)));
    }
}

std::string literal(std::string_view s) {
    std::string out = "\"";
    append_escaped(out, reinterpret_cast<const unsigned char*>(s.data()), s.size());
    out += '"';
    return out;
}

/// A codegen::text initializer: {"bytes", size}.
std::string text(std::string_view s) { return "{" + literal(s) + ", " + std::to_string(s.size()) + "}"; }

/// s fit for a // comment: printable ASCII, no backslash (a line continuation) or '?'.
std::string comment_safe(std::string_view s) {
    std::string out(s.substr(0, 120));
    for (char& c : out)
        if (c < 32 || c > 126 || c == '\\' || c == '?') c = '_';
    return out;
}

std::string range(std::size_t first, std::size_t count) { return "{" + std::to_string(first) + ", " + std::to_string(count) + "}"; }

std::string_view enumerator(ember::dtype t) {
    switch (t) {
        case ember::dtype::float32: return "float32";
        case ember::dtype::float16: return "float16";
        case ember::dtype::bfloat16: return "bfloat16";
        case ember::dtype::float64: return "float64";
        case ember::dtype::int8: return "int8";
        case ember::dtype::uint8: return "uint8";
        case ember::dtype::int16: return "int16";
        case ember::dtype::int32: return "int32";
        case ember::dtype::int64: return "int64";
        case ember::dtype::boolean: return "boolean";
        case ember::dtype::uint16: return "uint16";
        case ember::dtype::uint32: return "uint32";
        case ember::dtype::uint64: return "uint64";
        case ember::dtype::undefined: break;
    }
    return "undefined";
}

std::string_view enumerator(ember::value_kind k) {
    switch (k) {
        case ember::value_kind::input: return "input";
        case ember::value_kind::constant: return "constant";
        case ember::value_kind::node_output: break;
    }
    return "node_output";
}

std::string_view enumerator(ember::attribute_kind k) {
    switch (k) {
        case ember::attribute_kind::floating: return "floating";
        case ember::attribute_kind::integer: return "integer";
        case ember::attribute_kind::string: return "string";
        case ember::attribute_kind::tensor: return "tensor";
        case ember::attribute_kind::graph: return "graph";
        case ember::attribute_kind::floats: return "floats";
        case ember::attribute_kind::ints: return "ints";
        case ember::attribute_kind::strings: return "strings";
        case ember::attribute_kind::tensors: return "tensors";
        case ember::attribute_kind::graphs: return "graphs";
        case ember::attribute_kind::undefined: break;
    }
    return "undefined";
}

std::string int64_literal(std::int64_t v) {
    // INT64_MIN has no literal of its own.
    if (v == INT64_MIN) return "(-9223372036854775807 - 1)";
    return std::to_string(v);
}

std::string float_bits(float f) {
    std::uint32_t bits;
    std::memcpy(&bits, &f, 4);
    char buf[16];
    std::snprintf(buf, sizeof buf, "0x%08xu", static_cast<unsigned>(bits));
    return buf;
}

/// The tables of one model, filled graph by graph, each pool as the lines of its initializer.
class tables_writer {
public:
    /// Walks g and its subgraphs (breadth first: a graph's entries stay contiguous).
    void add(const ember::graph& main) {
        pending_.push_back(&main);
        graph_count_ = 1;
        for (std::size_t i = 0; i < pending_.size(); ++i) add_graph(*pending_[i]);
    }

    /// Writes the weight literals and the tables into out.
    void write(std::string& out) const {
        out += weights_;
        out += "\n";
        pool(out, "graph_entry", "graphs", graphs_);
        pool(out, "value_entry", "values", values_);
        pool(out, "node_entry", "nodes", nodes_);
        pool(out, "attribute_entry", "attributes", attributes_);
        pool(out, "tensor_entry", "tensors", tensors_);
        pool(out, "opset_entry", "opsets", opsets_);
        pool(out, "dim_entry", "dims", dims_);
        pool(out, "std::uint32_t", "ids", ids_);
        pool(out, "std::int64_t", "ints", ints_);
        pool(out, "std::uint32_t", "float_bits", floats_);
        pool(out, "text", "texts", texts_);
        out += "inline constexpr tables model = {";
        const char* names[] = {"graphs", "values", "nodes", "attributes", "tensors", "opsets", "dims", "ids", "ints", "float_bits", "texts"};
        const std::vector<std::string>* pools[] = {&graphs_, &values_, &nodes_, &attributes_, &tensors_, &opsets_,
                                                   &dims_,   &ids_,    &ints_,  &floats_,     &texts_};
        for (std::size_t k = 0; k < 11; ++k) {
            out += k ? ", " : "";
            out += pools[k]->empty() ? std::string("{}") : std::string(names[k]);
        }
        out += "};\n";
    }

    std::size_t node_count = 0, constant_bytes = 0, tensor_count = 0;

private:
    static void pool(std::string& out, const char* type, const char* name, const std::vector<std::string>& items) {
        if (items.empty()) return;  // no zero-length arrays: the tables get an empty span
        out += "inline constexpr ";
        out += type;
        out += " ";
        out += name;
        out += "[] = {\n";
        for (const std::string& item : items) {
            out += "    ";
            out += item;
            out += ",\n";
        }
        out += "};\n";
    }

    std::size_t ids(const std::vector<std::uint32_t>& list) {
        const std::size_t first = ids_.size();
        for (std::uint32_t v : list) ids_.push_back(std::to_string(v) + "u");
        return first;
    }

    std::uint32_t add_tensor(const ember::tensor& t, const std::string& what) {
        const std::size_t index = tensors_.size();
        const std::size_t dims_first = ints_.size();
        for (std::size_t k = 0; k < t.rank(); ++k) ints_.push_back(int64_literal(t.dims()[k]));
        std::string dims_text;
        ember::format_append(dims_text, t.dims());
        const std::string var = "tensor_" + std::to_string(index);
        weights_ += "// " + comment_safe(what) + ": " + std::string(ember::to_string(t.type())) + " " + dims_text + ", " +
                    std::to_string(t.size_bytes()) + " bytes\n";
        if (t.size_bytes() == 0) {
            weights_ += "inline constexpr const char* " + var + " = nullptr;\n";
        } else {
            weights_ += "inline constexpr const char* " + var + " =\n";
            const auto* bytes = reinterpret_cast<const unsigned char*>(t.bytes());
            constexpr std::size_t per_line = 96;
            for (std::size_t at = 0; at < t.size_bytes(); at += per_line) {
                weights_ += "    \"";
                append_escaped(weights_, bytes + at, std::min(per_line, t.size_bytes() - at));
                weights_ += "\"\n";
            }
            weights_ += "    ;\n";
        }
        tensors_.push_back("{dtype::" + std::string(enumerator(t.type())) + ", " + range(dims_first, t.rank()) + ", " + var + ", " +
                           std::to_string(t.size_bytes()) + "}");
        constant_bytes += t.size_bytes();
        ++tensor_count;
        return static_cast<std::uint32_t>(index);
    }

    std::uint32_t add_subgraph(const ember::graph& g) {
        pending_.push_back(&g);
        return static_cast<std::uint32_t>(graph_count_++);
    }

    void add_graph(const ember::graph& g) {
        const std::string where = "graph '" + g.name + "'";
        const std::size_t values_first = values_.size();
        for (const ember::value& v : g.values) {
            const std::size_t dims_first = dims_.size();
            if (v.declared.rank_known)
                for (const ember::dim& d : v.declared.dims) dims_.push_back("{" + int64_literal(d.value) + ", " + text(d.symbol) + "}");
            values_.push_back("{" + text(v.name) + ", value_kind::" + std::string(enumerator(v.kind)) + ", dtype::" +
                              std::string(enumerator(v.type)) + ", " +
                              std::to_string(v.declared.rank_known ? static_cast<long long>(v.declared.dims.size()) : -1LL) + ", " +
                              std::to_string(dims_first) + "u, " + std::to_string(v.producer) + ", " + std::to_string(v.constant) + "}");
        }
        std::vector<std::uint32_t> constants;
        for (std::size_t k = 0; k < g.constants.size(); ++k) {
            std::string name = "constant " + std::to_string(k);
            for (const ember::value& v : g.values)
                if (v.constant == static_cast<std::int32_t>(k)) name = "'" + v.name + "'";
            constants.push_back(add_tensor(g.constants[k], where + " " + name));
        }
        std::vector<std::string> node_lines;
        for (std::size_t i = 0; i < g.nodes.size(); ++i) {
            const ember::node& n = g.nodes[i];
            const std::size_t attributes_first = attributes_.size();
            std::vector<std::string> attribute_lines;
            for (const ember::attribute& a : n.attributes) attribute_lines.push_back(attribute_line(g, i, a));
            attributes_.insert(attributes_.end(), attribute_lines.begin(), attribute_lines.end());
            const std::size_t in_first = ids(n.inputs), out_first = ids(n.outputs);
            node_lines.push_back("{" + text(n.name) + ", " + text(n.op_type) + ", " + text(n.domain) + ", " + range(in_first, n.inputs.size()) +
                                 ", " + range(out_first, n.outputs.size()) + ", " + range(attributes_first, n.attributes.size()) + "}");
        }
        const std::size_t nodes_first = nodes_.size();
        nodes_.insert(nodes_.end(), node_lines.begin(), node_lines.end());
        node_count += g.nodes.size();
        const std::size_t constants_first = ids(constants);
        const std::size_t inputs_first = ids(g.inputs), outputs_first = ids(g.outputs);
        const std::size_t opsets_first = opsets_.size();
        for (const ember::opset& o : g.opsets) opsets_.push_back("{" + text(o.domain) + ", " + int64_literal(o.version) + "}");
        graphs_.push_back("{" + text(g.name) + ", " + range(values_first, g.values.size()) + ", " + range(nodes_first, g.nodes.size()) + ", " +
                          range(constants_first, constants.size()) + ", " + range(inputs_first, g.inputs.size()) + ", " +
                          range(outputs_first, g.outputs.size()) + ", " + range(opsets_first, g.opsets.size()) + "}");
    }

    std::string attribute_line(const ember::graph& g, std::size_t node_index, const ember::attribute& a) {
        std::size_t first = 0, count = 1;
        const std::string where = ember::describe_node(g, node_index) + " attribute '" + a.name + "'";
        switch (a.kind) {
            case ember::attribute_kind::floating:
                first = floats_.size();
                floats_.push_back(float_bits(a.f));
                break;
            case ember::attribute_kind::floats:
                first = floats_.size();
                count = a.floats.size();
                for (float f : a.floats) floats_.push_back(float_bits(f));
                break;
            case ember::attribute_kind::integer:
                first = ints_.size();
                ints_.push_back(int64_literal(a.i));
                break;
            case ember::attribute_kind::ints:
                first = ints_.size();
                count = a.ints.size();
                for (std::int64_t v : a.ints) ints_.push_back(int64_literal(v));
                break;
            case ember::attribute_kind::string:
                first = texts_.size();
                texts_.push_back(text(a.s));
                break;
            case ember::attribute_kind::strings:
                first = texts_.size();
                count = a.strings.size();
                for (const std::string& s : a.strings) texts_.push_back(text(s));
                break;
            case ember::attribute_kind::tensor: first = ids({add_tensor(a.t, where)}); break;
            case ember::attribute_kind::tensors: {
                std::vector<std::uint32_t> list;
                for (std::size_t k = 0; k < a.tensors.size(); ++k) list.push_back(add_tensor(a.tensors[k], where + " " + std::to_string(k)));
                first = ids(list);
                count = list.size();
                break;
            }
            case ember::attribute_kind::graph:
            case ember::attribute_kind::graphs: {
                std::vector<std::uint32_t> list;
                for (const ember::graph& sub : a.graphs) list.push_back(add_subgraph(sub));
                first = ids(list);
                count = list.size();
                break;
            }
            case ember::attribute_kind::undefined: count = 0; break;
        }
        return "{" + text(a.name) + ", attribute_kind::" + std::string(enumerator(a.kind)) + ", " + range(first, count) + "}";
    }

    std::vector<const ember::graph*> pending_;
    std::size_t graph_count_ = 0;
    std::string weights_;
    std::vector<std::string> graphs_, values_, nodes_, attributes_, tensors_, opsets_, dims_, ids_, ints_, floats_, texts_;
};

std::string describe_io(const ember::graph& g, const std::vector<ember::value_id>& list) {
    std::string out;
    for (ember::value_id id : list) {
        if (!out.empty()) out += ", ";
        if (id >= g.values.size()) continue;
        const ember::value& v = g.values[id];
        out += "'" + v.name + "' " + std::string(ember::to_string(v.type)) + " ";
        ember::format_append(out, v.declared);
    }
    return out;
}

std::string header_for(const ember::graph& g, const options& o) {
    tables_writer tables;
    tables.add(g);
    const std::size_t slash = o.model.find_last_of("/\\");
    const std::string file = o.model.substr(slash == std::string::npos ? 0 : slash + 1);
    std::string out;
    out += "// Generated by ember-codegen from " + comment_safe(file) + ". Do not edit: run ember-codegen again.\n";
    out += "// The model compiled into the program: no .onnx file to ship, nothing parsed at load time.\n//\n";
    out += "//   ember::result<ember::graph> g = " + o.name_space + "::build_graph();  // the graph ember::onnx::load_file() gives\n";
    out += "//   ember::result<ember::plan> p = " + o.name_space + "::compile(options);  // build_graph(), then ember::compile()\n//\n";
    out += "// " + std::to_string(tables.node_count) + " nodes, " + std::to_string(tables.tensor_count) + " constant tensors (" +
           std::to_string(tables.constant_bytes) + " bytes, copied into the graph's tensors by build_graph()).\n";
    out += "// Inputs: " + comment_safe(describe_io(g, g.inputs)) + "\n";
    out += "// Outputs: " + comment_safe(describe_io(g, g.outputs)) + "\n";
    out += "// Include it in one .cpp file: each file that includes it holds its own copy of the weight bytes.\n";
    out += "#pragma once\n\n#include <cstdint>\n\n#include <ember/ember.hpp>\n#include <ember/graph/codegen.hpp>\n\n";
    out += "static_assert(ember::codegen::format_version == 1, \"this header was generated for another version of ember: run ember-codegen again\");\n\n";
    out += "namespace " + o.name_space + " {\nnamespace detail {\n\n";
    out += "using ember::attribute_kind;\nusing ember::dtype;\nusing ember::value_kind;\n";
    out += "using namespace ember::codegen;\n\n";
    tables.write(out);
    out += "\n} // namespace detail\n\n";
    out += "/// The model's graph, as ember::onnx::load_file() gives it; the constants come from alloc.\n";
    out += "[[nodiscard]] inline ember::result<ember::graph> build_graph(const ember::allocator& alloc = ember::default_allocator()) {\n";
    out += "    return ember::codegen::build_graph(detail::model, alloc);\n}\n\n";
    out += "/// build_graph(options.alloc), then ember::compile() with the options.\n";
    out += "[[nodiscard]] inline ember::result<ember::plan> compile(const ember::compile_options& options = {}) {\n";
    out += "    ember::result<ember::graph> graph = build_graph(options.alloc);\n";
    out += "    if (!graph) return graph.error();\n";
    out += "    return ember::compile(*graph, options);\n}\n\n";
    out += "} // namespace " + o.name_space + "\n";
    return out;
}

/// Writes text to path through a temporary file beside it, renamed over path when complete.
void write_file(const std::string& path, const std::string& text) {
    const std::string temp = path + ".tmp";
    std::FILE* f = std::fopen(temp.c_str(), "wb");
    if (!f) fail("-o " + path, std::string("cannot create '") + temp + "': " + std::strerror(errno));
    const bool written = std::fwrite(text.data(), 1, text.size(), f) == text.size();
    const bool closed = std::fclose(f) == 0;
    if (!written || !closed) {
        std::remove(temp.c_str());
        fail("-o " + path, "cannot write '" + temp + "' (disk full?)");
    }
    if (std::rename(temp.c_str(), path.c_str()) != 0) {
        const std::string why = std::strerror(errno);
        std::remove(temp.c_str());
        fail("-o " + path, "cannot rename '" + temp + "' to it: " + why);
    }
}

int run(int argc, char** argv) {
    const options o = parse_args(argc, argv);
    const ember::graph g = example::checked(ember::onnx::load_file(o.model), o.model);
    const std::string header = header_for(g, o);
    if (o.output.empty()) {
        if (std::fwrite(header.data(), 1, header.size(), stdout) != header.size() || std::fflush(stdout) != 0)
            fail("stdout", "cannot write the header");
    } else {
        write_file(o.output, header);
    }
    return 0;
}

} // namespace

int main(int argc, char** argv) {
    return example::run_main("ember-codegen", [&] { return run(argc, argv); });
}
