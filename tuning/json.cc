#include "json.h"

#include <set>

namespace nicoll::tuning {

namespace {

// Nesting deeper than this is no tuning file; the limit keeps the recursion's stack bounded.
constexpr int kMaxDepth = 64;

class Reader {
public:
    explicit Reader(std::string_view text) : text_(text) {}

    std::optional<JsonValue> document(JsonError* error) {
        skip_space();
        if (at_end()) return fail(error, "empty document: expected a JSON object");
        std::optional<JsonValue> v = value(0);
        if (v) {
            skip_space();
            if (!at_end()) {
                error_ = {here_, "unexpected text after the JSON document"};
                v.reset();
            }
        }
        if (!v && error != nullptr) *error = error_;
        return v;
    }

private:
    std::optional<JsonValue> fail(JsonError* error, std::string reason) {
        if (error != nullptr) *error = {here_, std::move(reason)};
        return std::nullopt;
    }
    std::optional<JsonValue> bad(std::string reason) {
        error_ = {here_, std::move(reason)};
        return std::nullopt;
    }
    bool at_end() const { return pos_ >= text_.size(); }
    char peek() const { return at_end() ? '\0' : text_[pos_]; }
    void advance() {
        if (text_[pos_] == '\n') {
            ++here_.line;
            here_.column = 1;
        } else {
            ++here_.column;
        }
        ++pos_;
    }
    void skip_space() {
        while (!at_end() && (peek() == ' ' || peek() == '\t' || peek() == '\n' || peek() == '\r')) {
            advance();
        }
    }
    bool literal(std::string_view word) {
        if (text_.substr(pos_, word.size()) != word) return false;
        for (std::size_t i = 0; i < word.size(); ++i) advance();
        return true;
    }

    std::optional<JsonValue> value(int depth) {
        if (depth > kMaxDepth) return bad("nested deeper than 64 levels");
        JsonValue v;
        v.at = here_;
        const char c = peek();
        if (c == '{') return object(depth);
        if (c == '[') return array(depth);
        if (c == '"') {
            v.type = JsonValue::Type::String;
            if (!string(&v.text)) return std::nullopt;
            return v;
        }
        if (c == '-' || (c >= '0' && c <= '9')) return number();
        if (literal("true")) {
            v.type = JsonValue::Type::Bool;
            v.boolean = true;
            return v;
        }
        if (literal("false")) {
            v.type = JsonValue::Type::Bool;
            return v;
        }
        if (literal("null")) return v;
        if (at_end()) return bad("unexpected end of the document");
        if (c == '/') return bad("comments are not JSON");
        if (c == '\'') return bad("strings take double quotes");
        return bad(std::string("unexpected character '") + c + "'");
    }

    std::optional<JsonValue> object(int depth) {
        JsonValue v;
        v.type = JsonValue::Type::Object;
        v.at = here_;
        advance();  // {
        skip_space();
        if (peek() == '}') {
            advance();
            return v;
        }
        std::set<std::string, std::less<>> seen;
        for (;;) {
            skip_space();
            if (peek() != '"') {
                return bad(peek() == '}' ? "trailing comma before '}'"
                                         : "expected a key in double quotes");
            }
            const Position key_at = here_;
            std::string key;
            if (!string(&key)) return std::nullopt;
            if (!seen.insert(key).second) {
                here_ = key_at;
                return bad("duplicate key \"" + key + "\"");
            }
            skip_space();
            if (peek() != ':') return bad("expected ':' after the key");
            advance();
            skip_space();
            std::optional<JsonValue> member = value(depth + 1);
            if (!member) return std::nullopt;
            v.members.emplace_back(std::move(key), std::move(*member));
            v.key_at.push_back(key_at);
            skip_space();
            if (peek() == ',') {
                advance();
                continue;
            }
            if (peek() == '}') {
                advance();
                return v;
            }
            return bad(at_end() ? "unexpected end of the document: '}' missing"
                                : "expected ',' or '}'");
        }
    }

    std::optional<JsonValue> array(int depth) {
        JsonValue v;
        v.type = JsonValue::Type::Array;
        v.at = here_;
        advance();  // [
        skip_space();
        if (peek() == ']') {
            advance();
            return v;
        }
        for (;;) {
            skip_space();
            if (peek() == ']') return bad("trailing comma before ']'");
            std::optional<JsonValue> item = value(depth + 1);
            if (!item) return std::nullopt;
            v.items.push_back(std::move(*item));
            skip_space();
            if (peek() == ',') {
                advance();
                continue;
            }
            if (peek() == ']') {
                advance();
                return v;
            }
            return bad(at_end() ? "unexpected end of the document: ']' missing"
                                : "expected ',' or ']'");
        }
    }

    static void put_utf8(std::string* out, std::uint32_t cp) {
        if (cp < 0x80) {
            *out += static_cast<char>(cp);
        } else if (cp < 0x800) {
            *out += static_cast<char>(0xC0 | (cp >> 6));
            *out += static_cast<char>(0x80 | (cp & 0x3F));
        } else if (cp < 0x10000) {
            *out += static_cast<char>(0xE0 | (cp >> 12));
            *out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
            *out += static_cast<char>(0x80 | (cp & 0x3F));
        } else {
            *out += static_cast<char>(0xF0 | (cp >> 18));
            *out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
            *out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
            *out += static_cast<char>(0x80 | (cp & 0x3F));
        }
    }

    // The bytes of the UTF-8 sequence `s` starts with (RFC 3629: no overlong forms, surrogates or
    // code points above U+10FFFF), or 0 where it starts none.
    static std::size_t utf8_length(std::string_view s) {
        const auto b = [&s](std::size_t i) -> unsigned {
            return i < s.size() ? static_cast<unsigned char>(s[i]) : 0u;
        };
        const unsigned lead = b(0);
        const std::size_t n = lead >= 0xC2 && lead <= 0xDF   ? 2
                              : lead >= 0xE0 && lead <= 0xEF ? 3
                              : lead >= 0xF0 && lead <= 0xF4 ? 4
                                                             : 0;
        // the second byte's range, narrower after E0, ED, F0 and F4
        const unsigned lo = lead == 0xE0 ? 0xA0 : lead == 0xF0 ? 0x90 : 0x80;
        const unsigned hi = lead == 0xED ? 0x9F : lead == 0xF4 ? 0x8F : 0xBF;
        if (n == 0 || b(1) < lo || b(1) > hi) return 0;
        for (std::size_t i = 2; i < n; ++i) {
            if (b(i) < 0x80 || b(i) > 0xBF) return 0;
        }
        return n;
    }

    bool hex4(std::uint32_t* out) {
        *out = 0;
        for (int i = 0; i < 4; ++i) {
            const char c = peek();
            int d = c >= '0' && c <= '9'   ? c - '0'
                    : c >= 'a' && c <= 'f' ? c - 'a' + 10
                    : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                           : -1;
            if (d < 0) {
                bad("\\u takes four hexadecimal digits");
                return false;
            }
            *out = *out * 16 + static_cast<std::uint32_t>(d);
            advance();
        }
        return true;
    }

    bool string(std::string* out) {
        advance();  // "
        for (;;) {
            if (at_end()) {
                bad("unterminated string");
                return false;
            }
            const char c = peek();
            if (c == '"') {
                advance();
                return true;
            }
            if (static_cast<unsigned char>(c) < 0x20) {
                bad("control character in a string");
                return false;
            }
            if (static_cast<unsigned char>(c) >= 0x80) {
                const std::size_t n = utf8_length(text_.substr(pos_));
                if (n == 0) {
                    bad("invalid UTF-8 in a string");
                    return false;
                }
                for (std::size_t i = 0; i < n; ++i) {
                    *out += peek();
                    advance();
                }
                continue;
            }
            if (c != '\\') {
                *out += c;
                advance();
                continue;
            }
            advance();
            const char e = peek();
            switch (e) {
                case '"':
                case '\\':
                case '/':
                    *out += e;
                    break;
                case 'b':
                    *out += '\b';
                    break;
                case 'f':
                    *out += '\f';
                    break;
                case 'n':
                    *out += '\n';
                    break;
                case 'r':
                    *out += '\r';
                    break;
                case 't':
                    *out += '\t';
                    break;
                case 'u': {
                    advance();
                    std::uint32_t cp = 0;
                    if (!hex4(&cp)) return false;
                    if (cp >= 0xD800 && cp < 0xDC00 && text_.substr(pos_, 2) == "\\u") {
                        advance();
                        advance();
                        std::uint32_t low = 0;
                        if (!hex4(&low)) return false;
                        if (low >= 0xDC00 && low < 0xE000) {
                            cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
                        } else {
                            bad("unpaired surrogate in \\u escape");
                            return false;
                        }
                    } else if (cp >= 0xD800 && cp < 0xE000) {
                        bad("unpaired surrogate in \\u escape");
                        return false;
                    } else if (cp == 0) {
                        bad("\\u0000 in a string (a tuning file's strings hold no NUL)");
                        return false;
                    }
                    put_utf8(out, cp);
                    continue;
                }
                default:
                    bad(std::string("bad escape '\\") + e + "' in a string");
                    return false;
            }
            advance();
        }
    }

    std::optional<JsonValue> number() {
        JsonValue v;
        v.type = JsonValue::Type::Number;
        v.at = here_;
        const std::size_t start = pos_;
        auto digits = [&] {
            std::size_t n = 0;
            while (peek() >= '0' && peek() <= '9') {
                advance();
                ++n;
            }
            return n;
        };
        if (peek() == '-') advance();
        if (peek() == '0') {
            advance();
            if (peek() >= '0' && peek() <= '9') return bad("numbers do not take leading zeros");
        } else if (digits() == 0) {
            return bad("expected a digit");
        }
        if (peek() == '.') {
            advance();
            if (digits() == 0) return bad("expected a digit after '.'");
        }
        if (peek() == 'e' || peek() == 'E') {
            advance();
            if (peek() == '+' || peek() == '-') advance();
            if (digits() == 0) return bad("expected a digit in the exponent");
        }
        v.text = std::string(text_.substr(start, pos_ - start));
        return v;
    }

    std::string_view text_;
    std::size_t pos_ = 0;
    Position here_;
    JsonError error_;
};

}  // namespace

const JsonValue* JsonValue::find(std::string_view key) const {
    for (const auto& [k, v] : members) {
        if (k == key) return &v;
    }
    return nullptr;
}

std::string_view json_type_name(JsonValue::Type type) {
    switch (type) {
        case JsonValue::Type::Null:
            return "null";
        case JsonValue::Type::Bool:
            return "a boolean";
        case JsonValue::Type::Number:
            return "a number";
        case JsonValue::Type::String:
            return "a string";
        case JsonValue::Type::Array:
            return "an array";
        case JsonValue::Type::Object:
            return "an object";
    }
    return "?";
}

std::optional<JsonValue> parse_json(std::string_view text, JsonError* error) {
    return Reader(text).document(error);
}

}  // namespace nicoll::tuning
