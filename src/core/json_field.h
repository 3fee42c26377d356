// JsonIntField: one integer field of a JSON object, as WebDataset's ".json" label members hold
// it ({"label": 3, "caption": "..."}). Reads the whole text by RFC 8259 (strings with escapes,
// nested values up to 64 deep skipped over), so that what is not JSON is an error, not a guess.
//
//   JsonIntField(bytes of R"({"id": "x", "label": 7})", "label")  -> 7
//
// Errors (CorruptData): not a JSON object, the field missing, its value not an integer (a
// fraction, a string, out of the int64 range), a duplicate of the field, text after the object.
// Thread-safety: pure.
#ifndef SLUICE_CORE_JSON_FIELD_H_
#define SLUICE_CORE_JSON_FIELD_H_

#include <cstdint>
#include <span>
#include <string_view>

#include "sluice/status.h"

namespace sluice {

Result<int64_t> JsonIntField(std::span<const uint8_t> json, std::string_view field);

}  // namespace sluice

#endif  // SLUICE_CORE_JSON_FIELD_H_
