#include "core/json_field.h"

#include <gtest/gtest.h>

#include <string>

namespace sluice {
namespace {

Result<int64_t> Field(const std::string& json, const std::string& field = "label") {
  return JsonIntField({reinterpret_cast<const uint8_t*>(json.data()), json.size()}, field);
}

TEST(JsonFieldTest, ReadsATopLevelIntegerPastAnyOtherValue) {
  EXPECT_EQ(*Field(R"({"label": 7})"), 7);
  EXPECT_EQ(*Field(R"( { "id" : "a\"b\\c\u00e9" , "n": [1, 2.5e3, {"label": 9}], "t": true, "f": false,
                      "z": null, "label": -12 } )"), -12);
  EXPECT_EQ(*Field(R"({"lab\u0065l": 3})"), 3);  // an escaped key is the same key
  EXPECT_EQ(*Field(R"({"x": {"label": 1}, "label": 2})"), 2);  // only the top level counts
  EXPECT_EQ(*Field(R"({"label": 9223372036854775807})"), INT64_MAX);
  EXPECT_EQ(*Field(R"({"cls": 4})", "cls"), 4);
}

TEST(JsonFieldTest, WhatIsNotAnIntegerFieldOfAnObjectIsAnError) {
  EXPECT_EQ(Field(R"({"id": 1})").status().message(), "the JSON object has no field 'label'");
  EXPECT_EQ(Field(R"({"label": 1.5})").status().message(), "the JSON field 'label' is not an int64 (at byte 10)");
  EXPECT_EQ(Field(R"({"label": 1e3})").status().code(), StatusCode::kCorruptData);
  EXPECT_EQ(Field(R"({"label": 99999999999999999999})").status().code(), StatusCode::kCorruptData);
  EXPECT_EQ(Field(R"({"label": "3"})").status().message(), "the JSON field 'label' is not a number");
  EXPECT_EQ(Field(R"({"label": 1, "label": 2})").status().message(), "the JSON field 'label' appears twice");
  EXPECT_EQ(Field("[1]").status().message(), "not a JSON object: expected '{' at byte 0");
  EXPECT_EQ(Field(R"({"label": 1} x)").status().message(), "not a JSON object: text after the object at byte 13");
  EXPECT_EQ(Field(R"({"label": 01})").status().code(), StatusCode::kCorruptData);
  EXPECT_EQ(Field(R"({"label": 1)").status().code(), StatusCode::kCorruptData);
  EXPECT_EQ(Field(R"({"a": "unterminated)").status().code(), StatusCode::kCorruptData);
  EXPECT_EQ(Field(R"({"a": tru, "label": 1})").status().code(), StatusCode::kCorruptData);
  EXPECT_EQ(Field("").status().code(), StatusCode::kCorruptData);
  EXPECT_EQ(Field(std::string(R"({"a": )") + std::string(100, '[') + std::string(100, ']') + R"(, "label": 1})").status().message(),
            "not a JSON object: nested deeper than 64 at byte 70");
}

}  // namespace
}  // namespace sluice
