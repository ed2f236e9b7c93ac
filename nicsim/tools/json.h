// One JSON object on one line, built field by field (what `--json` prints).
#pragma once

#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

namespace nicsim::tools {

class JsonObject {
public:
    JsonObject& field(std::string_view key, std::string_view value) {
        key_(key);
        quote(value);
        return *this;
    }
    JsonObject& field(std::string_view key, const char* value) {
        return field(key, std::string_view(value));
    }
    JsonObject& field(std::string_view key, double value) {
        key_(key);
        number(value);
        return *this;
    }
    JsonObject& field(std::string_view key, long long value) {
        key_(key);
        out_ += std::to_string(value);
        return *this;
    }
    JsonObject& field(std::string_view key, bool value) {
        key_(key);
        out_ += value ? "true" : "false";
        return *this;
    }
    template <typename T>
    JsonObject& array(std::string_view key, const std::vector<T>& values) {
        key_(key);
        out_ += '[';
        for (std::size_t i = 0; i < values.size(); ++i) {
            if (i != 0) out_ += ',';
            number(static_cast<double>(values[i]));
        }
        out_ += ']';
        return *this;
    }
    // A nested object or array already in JSON.
    JsonObject& raw(std::string_view key, std::string_view json) {
        key_(key);
        out_ += json;
        return *this;
    }
    std::string str() const { return out_ + "}"; }

private:
    void key_(std::string_view key) {
        out_ += out_.size() == 1 ? "" : ",";
        quote(key);
        out_ += ':';
    }
    void number(double v) {
        char buf[32];
        std::snprintf(buf, sizeof buf, "%.10g", v);
        out_ += buf;
    }
    void quote(std::string_view s) {
        out_ += '"';
        for (const char c : s) {
            if (c == '"' || c == '\\') {
                out_ += '\\';
                out_ += c;
            } else if (static_cast<unsigned char>(c) < 0x20) {
                char buf[8];
                std::snprintf(buf, sizeof buf, "\\u%04x", c);
                out_ += buf;
            } else {
                out_ += c;
            }
        }
        out_ += '"';
    }

    std::string out_ = "{";
};

}  // namespace nicsim::tools
