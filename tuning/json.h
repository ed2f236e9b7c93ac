// Tuning: a small strict JSON reader that remembers where every value starts.
//
// Tuning files are written by hand as often as by tools, so an error must point at the line and
// column it comes from, and what other readers forgive must be caught here: a key given twice
// (which one wins?), trailing commas, comments, numbers too large for a double to hold exactly.
// RFC 8259 otherwise, with the whole document in memory (tuning files are a few kilobytes).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace nicoll::tuning {

struct Position {
    int line = 1;    // 1-based
    int column = 1;  // 1-based, in bytes
};

struct JsonValue {
    enum class Type { Null, Bool, Number, String, Array, Object };
    Type type = Type::Null;
    Position at;
    bool boolean = false;
    std::string text;              // String: the decoded string; Number: the literal as written
    std::vector<JsonValue> items;  // Array
    std::vector<std::pair<std::string, JsonValue>> members;  // Object, in file order
    std::vector<Position> key_at;                            // Object: where each key starts

    const JsonValue* find(std::string_view key) const;
};

std::string_view json_type_name(JsonValue::Type type);

struct JsonError {
    Position at;
    std::string reason;
};

// The document, or the first syntax error (duplicate keys included) with its position.
std::optional<JsonValue> parse_json(std::string_view text, JsonError* error);

}  // namespace nicoll::tuning
