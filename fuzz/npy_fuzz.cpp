// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: the .npy reader (io/npy.hpp), which ember-run feeds with users' files.
// Whatever loads is saved again and must load back to the same bytes.
#include <cstddef>
#include <cstdint>
#include <cstring>

#include <ember/io/npy.hpp>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    ember::result<ember::tensor> t = ember::npy::load_memory(data, size);
    if (!t) return 0;
    ember::result<std::vector<unsigned char>> saved = ember::npy::save_memory(*t);
    if (!saved) return 0;
    ember::result<ember::tensor> again = ember::npy::load_memory(saved->data(), saved->size());
    if (!again || again->size_bytes() != t->size_bytes() || again->dims() != t->dims() ||
        (t->size_bytes() != 0 && std::memcmp(again->bytes(), t->bytes(), t->size_bytes()) != 0))
        __builtin_trap();  // a tensor that does not survive its own round trip
    return 0;
}
