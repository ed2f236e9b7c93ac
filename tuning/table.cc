#include "table.h"

#include <array>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "nicsim/nicsim.h"

namespace nicoll::tuning {

namespace {

constexpr std::array<std::string_view, kSections> kSectionNames = {
    "barrier", "bcast", "allgather", "ibarrier", "ibcast", "iallgather", "transport"};

// Sizes fit in 63 bits, so that a range's end + 1 never wraps (inf is kept apart).
constexpr std::uint64_t kMaxSize = (std::uint64_t{1} << 63) - 1;

using Type = JsonValue::Type;

// `text` with its control characters as \xNN, so that a file's bytes echoed in a message (a key,
// a name, the file's own name) cannot move the terminal's cursor or colour its text.
std::string printable(std::string_view text) {
    std::string out;
    for (const char c : text) {
        const auto u = static_cast<unsigned char>(c);
        if (u < 0x20 || u == 0x7F) {
            char hex[5];
            std::snprintf(hex, sizeof hex, "\\x%02x", u);
            out += hex;
        } else {
            out += c;
        }
    }
    return out;
}

class Validator {
public:
    explicit Validator(const std::string& name) : name_(name) {}

    LoadResult run(std::string_view text) {
        LoadResult result;
        JsonError syntax;
        std::optional<JsonValue> doc = parse_json(text, &syntax);
        if (!doc) {
            error(syntax.at, "$", syntax.reason);
        } else {
            document(*doc);
        }
        if (errors_.empty()) {
            table_.name = name_;
            result.table = std::move(table_);
        }
        result.errors = std::move(errors_);
        return result;
    }

private:
    void error(Position at, const std::string& path, const std::string& reason) {
        errors_.push_back(printable(name_ + ":" + std::to_string(at.line) + ":" +
                                    std::to_string(at.column) + ": " + path + ": " + reason));
    }

    void document(const JsonValue& doc) {
        if (doc.type != Type::Object) {
            error(doc.at, "$",
                  "expected a JSON object, found " + std::string(json_type_name(doc.type)));
            return;
        }
        const JsonValue* version = doc.find("version");
        if (version == nullptr) {
            error(doc.at, "$", "no \"version\" (this nicoll reads version 1)");
        } else if (version->type != Type::Number || version->text != "1") {
            error(version->at, "$.version",
                  version->type == Type::Number
                      ? "unsupported version " + version->text + " (this nicoll reads version 1)"
                      : "expected the number 1, found " +
                            std::string(json_type_name(version->type)));
        }
        for (std::size_t i = 0; i < doc.members.size(); ++i) {
            const auto& [key, value] = doc.members[i];
            if (key == "version") continue;
            if (key == "provenance") {
                if (value.type != Type::Object) {
                    error(value.at, "$.provenance",
                          "expected an object, found " + std::string(json_type_name(value.type)));
                } else if (const JsonValue* by = value.find("generated_by");
                           by != nullptr && by->type == Type::String) {
                    table_.provenance = by->text;
                }
                continue;
            }
            std::optional<Section> s = find_section(key);
            if (!s) {
                std::string known;
                for (auto n : kSectionNames) known += (known.empty() ? "" : ", ") + std::string(n);
                error(doc.key_at[i], "$." + key,
                      "unknown collective \"" + key + "\" (known: " + known +
                          ", version, provenance)");
                continue;
            }
            section(*s, value);
        }
    }

    void section(Section s, const JsonValue& rules) {
        const std::string path = "$." + std::string(section_name(s));
        if (rules.type != Type::Array) {
            error(rules.at, path,
                  "expected an array of rules, found " + std::string(json_type_name(rules.type)));
            return;
        }
        if (rules.items.empty()) {
            error(rules.at, path,
                  "no rules: every communicator size and message size must be covered");
            return;
        }
        table_.present[static_cast<int>(s)] = true;
        auto& out = table_.sections[static_cast<int>(s)];
        bool all_ok = true;
        for (std::size_t i = 0; i < rules.items.size(); ++i) {
            std::optional<Rule> r = rule(s, static_cast<int>(i), rules.items[i]);
            if (r) {
                out.push_back(*r);
            } else {
                all_ok = false;
            }
        }
        if (all_ok) coverage(s, out, path);
    }

    // Sizes: a non-negative integer, or a string: an integer with an optional k, M or G suffix
    // (powers of 1024), or "inf" where `inf_ok`.
    std::optional<std::uint64_t> size(const JsonValue& v, const std::string& path, bool inf_ok) {
        const std::string& t = v.text;
        if (v.type != Type::Number && v.type != Type::String) {
            error(v.at, path,
                  "expected a size (a number, or a string such as \"64k\"" +
                      std::string(inf_ok ? " or \"inf\"" : "") + "), found " +
                      std::string(json_type_name(v.type)));
            return std::nullopt;
        }
        if (v.type == Type::String && t == "inf") {
            if (inf_ok) return kInf;
            error(v.at, path, "\"inf\" may only end a range");
            return std::nullopt;
        }
        std::uint64_t bytes = 0;
        switch (parse_size(t, &bytes)) {
            case SizeSyntax::Ok:
                // The largest size a file can write ends a range as "inf" does: no message is
                // larger, so a range up to it leaves no gap after it.
                return inf_ok && bytes == kMaxSize ? kInf : bytes;
            case SizeSyntax::Negative:
                error(v.at, path, "negative size " + quoted(v));
                break;
            case SizeSyntax::NotSize:
                error(v.at, path,
                      "not a size: " + quoted(v) +
                          " (an integer, with k, M or G for 2^10, 2^20, 2^30" +
                          std::string(inf_ok ? ", or inf)" : ")"));
                break;
            case SizeSyntax::TooLarge:
                error(v.at, path,
                      "too large: " + quoted(v) + " (at most 2^63-1" +
                          std::string(inf_ok ? ", or inf)" : ")"));
                break;
        }
        return std::nullopt;
    }

    static std::string quoted(const JsonValue& v) {
        return v.type == Type::String ? "\"" + v.text + "\"" : v.text;
    }

    // [lo, hi] or a single size (lo = hi).
    std::optional<Range> range(const JsonValue& v, const std::string& path) {
        if (v.type == Type::Array) {
            if (v.items.size() != 2) {
                error(
                    v.at, path,
                    "a range is [low, high], found " + std::to_string(v.items.size()) + " values");
                return std::nullopt;
            }
            auto lo = size(v.items[0], path + "[0]", false);
            auto hi = size(v.items[1], path + "[1]", true);
            if (!lo || !hi) return std::nullopt;
            if (*lo > *hi) {
                error(v.at, path, "empty range: " + format_size(*lo) + " > " + format_size(*hi));
                return std::nullopt;
            }
            return Range{*lo, *hi};
        }
        auto one = size(v, path, false);
        if (!one) return std::nullopt;
        return Range{*one, *one};
    }

    // "auto", or an integer in min..max.
    std::optional<long long> number_or_auto(const JsonValue& v, const std::string& path,
                                            long long min, long long max) {
        if (v.type == Type::String && v.text == "auto") return 0;
        if (v.type != Type::Number || v.text.find_first_of(".eE") != std::string::npos) {
            error(v.at, path,
                  "expected an integer " + std::to_string(min) + ".." + std::to_string(max) +
                      " or \"auto\", found " +
                      (v.type == Type::Number || v.type == Type::String
                           ? quoted(v)
                           : std::string(json_type_name(v.type))));
            return std::nullopt;
        }
        errno = 0;
        const long long n = std::strtoll(v.text.c_str(), nullptr, 10);
        if (errno != 0 || n < min || n > max) {
            error(v.at, path,
                  v.text + " out of range " + std::to_string(min) + ".." + std::to_string(max));
            return std::nullopt;
        }
        return n;
    }

    std::optional<Rule> rule(Section s, int index, const JsonValue& v) {
        const std::string path =
            "$." + std::string(section_name(s)) + "[" + std::to_string(index) + "]";
        if (v.type != Type::Object) {
            error(v.at, path,
                  "expected a rule object, found " + std::string(json_type_name(v.type)));
            return std::nullopt;
        }
        Rule r;
        r.section = s;
        r.index = index;
        r.name = std::string(section_name(s)) + "[" + std::to_string(index) + "]";
        r.at = v.at;
        bool ok = true;
        const bool transport = s == Section::Transport;
        const bool bcast = s == Section::Bcast || s == Section::Ibcast;
        const bool barrier = s == Section::Barrier || s == Section::Ibarrier;
        const int table = section_engine_table(s);
        std::string algorithm_name = "auto";
        const JsonValue* k_value = nullptr;
        Position k_at;
        for (std::size_t i = 0; i < v.members.size(); ++i) {
            const auto& [key, value] = v.members[i];
            const std::string p = path + "." + key;
            auto not_here = [&](const char* why) {
                error(
                    v.key_at[i], p,
                    std::string(key) + " does not apply to " + std::string(section_name(s)) + why);
                ok = false;
            };
            if (key == "comment") {
                if (value.type != Type::String) {
                    error(value.at, p, "expected a string");
                    ok = false;
                }
            } else if (key == "comm_size" || key == "bytes" || key == "nodes" || key == "ppn") {
                if (key == "bytes" && transport) {
                    not_here(" (its settings hold for the whole communicator)");
                    continue;
                }
                auto rg = range(value, p);
                if (!rg) {
                    ok = false;
                    continue;
                }
                if (key == "comm_size") r.comm_size = *rg;
                if (key == "bytes") r.bytes = *rg;
                if (key == "nodes") r.nodes = *rg;
                if (key == "ppn") r.ppn = *rg;
            } else if (key == "fabric") {
                if (transport) {
                    not_here(" (its settings are chosen before the fabric is known)");
                    continue;
                }
                const auto f = value.type == Type::String ? find_fabric(value.text) : std::nullopt;
                if (!f) {
                    error(value.at, p,
                          "unknown fabric " + quoted(value) + " (known: " + fabric_names() + ")");
                    ok = false;
                    continue;
                }
                r.fabric = *f;
            } else if (key == "algorithm") {
                if (transport) {
                    not_here(" (algorithms are chosen per collective)");
                    continue;
                }
                if (value.type != Type::String) {
                    error(value.at, p,
                          "expected an algorithm name, found " +
                              std::string(json_type_name(value.type)));
                    ok = false;
                    continue;
                }
                algorithm_name = value.text;
                if (value.text != "auto") {
                    r.algorithm = nicsim_algorithm_find(static_cast<nicsim_collective_t>(table),
                                                        value.text.c_str());
                    if (r.algorithm < 0) {
                        std::string known = "auto";
                        for (int a = 0;
                             a < nicsim_algorithm_count(static_cast<nicsim_collective_t>(table));
                             ++a) {
                            known +=
                                std::string(", ") +
                                nicsim_algorithm_name(static_cast<nicsim_collective_t>(table), a);
                        }
                        error(value.at, p,
                              "unknown algorithm \"" + value.text + "\" for " +
                                  std::string(section_name(s)) + " (known: " + known + ")");
                        ok = false;
                    }
                }
            } else if (key == "k") {
                if (!bcast) {
                    not_here(" (k is the k-binomial broadcast tree's fanout)");
                    continue;
                }
                k_value = &value;
                k_at = v.key_at[i];
                auto k = number_or_auto(value, p, 1, kMaxK);
                if (!k) {
                    ok = false;
                    continue;
                }
                r.k = static_cast<int>(*k);
            } else if (key == "packet_size") {
                if (barrier) {
                    not_here(" (a barrier carries no data)");
                    continue;
                }
                if (value.type == Type::String && value.text == "auto") continue;
                auto ps = size(value, p, false);
                if (!ps) {
                    ok = false;
                    continue;
                }
                if (*ps < 1 || *ps > kMaxPacketSize) {
                    error(value.at, p, "packet_size " + quoted(value) + " out of range 1..64M");
                    ok = false;
                    continue;
                }
                r.packet_size = *ps;
            } else if (key == "credits") {
                if (!transport) {
                    not_here(" (credits are set per communicator, in the transport section)");
                    continue;
                }
                auto c = number_or_auto(value, p, 1, kMaxCredits);
                if (!c) {
                    ok = false;
                    continue;
                }
                r.credits = static_cast<int>(*c);
            } else if (key == "forwarding") {
                if (!bcast) {
                    not_here(" (forwarding is how broadcast packets are passed on)");
                    continue;
                }
                if (value.type != Type::String ||
                    (value.text != "fpfs" && value.text != "fcfs" && value.text != "host")) {
                    error(value.at, p,
                          "unknown forwarding " + quoted(value) + " (known: fpfs, fcfs, host)");
                    ok = false;
                } else if (value.text != "fpfs") {
                    error(value.at, p,
                          "forwarding \"" + value.text +
                              "\" runs only on the modeled network (nicsim bcast --forwarding); "
                              "real jobs forward fpfs");
                    ok = false;
                }
            } else {
                error(v.key_at[i], p,
                      "unknown key \"" + key +
                          "\" (known: comm_size, bytes, nodes, ppn, fabric, algorithm, k, "
                          "packet_size, credits, forwarding, comment)");
                ok = false;
            }
        }
        if (v.find("comm_size") == nullptr) {
            error(v.at, path, "no comm_size");
            ok = false;
        }
        if (!transport && !barrier && v.find("bytes") == nullptr) {
            error(v.at, path, "no bytes");
            ok = false;
        }
        if (!transport && v.find("algorithm") == nullptr) {
            error(v.at, path, "no algorithm (a name, or \"auto\")");
            ok = false;
        }
        if (k_value != nullptr && ok && algorithm_name != "auto" && algorithm_name != "kbinomial") {
            error(k_at, path + ".k",
                  "k applies only to algorithm kbinomial, not " + algorithm_name);
            ok = false;
        }
        if (!ok) return std::nullopt;
        return r;
    }

    // In order, no overlap, no gap: communicator sizes 2..inf, and bytes 0..inf for each
    // communicator-size range. Rules with nodes, ppn or a fabric are refinements: they must come
    // before every general rule they meet, or they could never match.
    void coverage(Section s, const std::vector<Rule>& rules, const std::string& path) {
        const Rule* prev = nullptr;
        std::uint64_t next_comm = 2;  // the smallest communicator size not yet covered
        std::vector<const Rule*> general;
        for (const Rule& r : rules) {
            const std::string p = path + "[" + std::to_string(r.index) + "]";
            if (r.refines()) {
                for (const Rule* g : general) {
                    if (g->comm_size.overlaps(r.comm_size) && g->bytes.overlaps(r.bytes)) {
                        error(r.at, p,
                              "never matches where " + g->path() + " already decides (comm_size " +
                                  format_range(g->comm_size) + ", bytes " + format_range(g->bytes) +
                                  "); put rules with nodes, ppn or fabric first");
                        return;
                    }
                }
                continue;
            }
            const bool same_group = prev != nullptr && prev->comm_size == r.comm_size;
            if (same_group) {
                if (r.bytes.lo <= prev->bytes.hi) {
                    error(r.at, p,
                          "bytes " + format_range(r.bytes) +
                              (r.bytes.lo < prev->bytes.lo ? " out of order after " : " overlap ") +
                              prev->path() + "'s " + format_range(prev->bytes));
                    return;
                }
                if (r.bytes.lo != prev->bytes.hi + 1) {
                    error(r.at, p,
                          "gap: bytes " + format_range({prev->bytes.hi + 1, r.bytes.lo - 1}) +
                              " are not covered for comm_size " + format_range(r.comm_size));
                    return;
                }
            } else {
                if (prev != nullptr && prev->bytes.hi != kInf) {
                    error(prev->at, path + "[" + std::to_string(prev->index) + "]",
                          "gap: bytes " + format_range({prev->bytes.hi + 1, kInf}) +
                              " are not covered for comm_size " + format_range(prev->comm_size));
                    return;
                }
                if (prev != nullptr && r.comm_size.lo <= prev->comm_size.hi) {
                    error(r.at, p,
                          "comm_size " + format_range(r.comm_size) +
                              (r.comm_size.lo < prev->comm_size.lo ? " out of order after "
                                                                   : " overlaps ") +
                              prev->path() + "'s " + format_range(prev->comm_size));
                    return;
                }
                if (r.comm_size.lo > next_comm) {
                    error(r.at, p,
                          "gap: comm_size " + format_range({next_comm, r.comm_size.lo - 1}) +
                              " is not covered");
                    return;
                }
                if (r.bytes.lo != 0) {
                    error(r.at, p,
                          "gap: bytes " + format_range({0, r.bytes.lo - 1}) +
                              " are not covered for comm_size " + format_range(r.comm_size));
                    return;
                }
                next_comm = r.comm_size.hi == kInf ? kInf : r.comm_size.hi + 1;
            }
            general.push_back(&r);
            prev = &r;
        }
        if (prev == nullptr) {
            error(rules.front().at, path,
                  "only rules with nodes, ppn or fabric: sizes where they are unknown are not "
                  "covered");
            return;
        }
        if (prev->bytes.hi != kInf) {
            error(prev->at, path + "[" + std::to_string(prev->index) + "]",
                  "gap: bytes " + format_range({prev->bytes.hi + 1, kInf}) +
                      " are not covered for comm_size " + format_range(prev->comm_size));
        } else if (next_comm != kInf) {
            error(prev->at, path + "[" + std::to_string(prev->index) + "]",
                  "gap: comm_size " + format_range({next_comm, kInf}) + " is not covered");
        }
        (void)s;
    }

    std::string name_;
    Table table_;
    std::vector<std::string> errors_;
};

bool matches(const Rule& r, const Query& q) {
    if (!r.comm_size.contains(static_cast<std::uint64_t>(q.comm_size)) ||
        !r.bytes.contains(q.bytes))
        return false;
    if (r.nodes && (q.nodes <= 0 || !r.nodes->contains(static_cast<std::uint64_t>(q.nodes))))
        return false;
    if (r.ppn && (q.ppn <= 0 || !r.ppn->contains(static_cast<std::uint64_t>(q.ppn)))) return false;
    if (r.fabric && q.fabric != *r.fabric) return false;
    return true;
}

}  // namespace

std::string_view section_name(Section s) {
    return kSectionNames[static_cast<int>(s)];
}

std::string_view fabric_name(Fabric f) {
    constexpr std::array<std::string_view, 5> names = {"unknown", "shm", "ucx", "pml", "mixed"};
    return names[static_cast<int>(f)];
}

namespace {
constexpr std::array kRuleFabrics = {Fabric::Shm, Fabric::Ucx, Fabric::Pml};
}  // namespace

std::optional<Fabric> find_fabric(std::string_view name) {
    for (const Fabric f : kRuleFabrics) {
        if (fabric_name(f) == name) return f;
    }
    return std::nullopt;
}

std::string fabric_names() {
    std::string names;
    for (const Fabric f : kRuleFabrics) {
        if (!names.empty()) names += ", ";
        names += fabric_name(f);
    }
    return names;
}

std::optional<Section> find_section(std::string_view name) {
    for (int i = 0; i < kSections; ++i) {
        if (kSectionNames[i] == name) return static_cast<Section>(i);
    }
    return std::nullopt;
}

int section_engine_table(Section s) {
    switch (blocking_form(s)) {
        case Section::Barrier:
            return NICSIM_COLL_BARRIER;
        case Section::Bcast:
            return NICSIM_COLL_BCAST;
        case Section::Allgather:
            return NICSIM_COLL_ALLGATHER;
        default:
            return -1;
    }
}

Section blocking_form(Section s) {
    switch (s) {
        case Section::Ibarrier:
            return Section::Barrier;
        case Section::Ibcast:
            return Section::Bcast;
        case Section::Iallgather:
            return Section::Allgather;
        default:
            return s;
    }
}

std::string format_size(std::uint64_t v) {
    if (v == kInf) return "inf";
    if (v != 0 && v % (1 << 30) == 0) return std::to_string(v >> 30) + "G";
    if (v != 0 && v % (1 << 20) == 0) return std::to_string(v >> 20) + "M";
    if (v != 0 && v % 1024 == 0) return std::to_string(v >> 10) + "k";
    return std::to_string(v);
}

SizeSyntax parse_size(std::string_view text, std::uint64_t* bytes) {
    std::uint64_t unit = 1;
    if (!text.empty()) {
        const char last = text.back();
        if (last == 'k' || last == 'K') unit = std::uint64_t{1} << 10;
        if (last == 'M') unit = std::uint64_t{1} << 20;
        if (last == 'G') unit = std::uint64_t{1} << 30;
        if (unit != 1) text.remove_suffix(1);
    }
    if (!text.empty() && text[0] == '-') return SizeSyntax::Negative;
    if (text.empty() || text.find_first_not_of("0123456789") != std::string_view::npos) {
        return SizeSyntax::NotSize;
    }
    std::uint64_t n = 0;
    for (char c : text) {
        if (n > (kMaxSize - static_cast<std::uint64_t>(c - '0')) / 10) return SizeSyntax::TooLarge;
        n = n * 10 + static_cast<std::uint64_t>(c - '0');
    }
    if (n > kMaxSize / unit) return SizeSyntax::TooLarge;
    *bytes = n * unit;
    return SizeSyntax::Ok;
}

std::string format_range(const Range& r) {
    if (r.lo == r.hi) return format_size(r.lo);
    return "[" + format_size(r.lo) + ", " + format_size(r.hi) + "]";
}

LoadResult load_table(std::string_view text, const std::string& name) {
    LoadResult r = Validator(name).run(text);
    if (r.table) {
        std::uint64_t h = 14695981039346656037ull;
        for (unsigned char c : text) h = (h ^ c) * 1099511628211ull;
        r.table->digest = h;
    }
    return r;
}

LoadResult load_table_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::error_code ec;
    if (!in || std::filesystem::is_directory(path, ec)) {
        LoadResult r;
        r.errors.push_back(printable(path) + ": cannot open: " +
                           (in ? std::string("a directory") : std::strerror(errno)));
        return r;
    }
    std::ostringstream text;
    text << in.rdbuf();
    if (in.bad()) {
        LoadResult r;
        r.errors.push_back(printable(path) + ": cannot read: " + std::strerror(errno));
        return r;
    }
    return load_table(text.str(), path);
}

const Table& embedded_table() {
    static const Table table = [] {
        LoadResult r = load_table(embedded_text(), "embedded default");
        // A test keeps tuning/default.json valid; should it ever not be, no rule decides and every
        // choice is auto.
        return r.table ? *r.table : Table{};
    }();
    return table;
}

const Rule* decide(const Table& table, const Query& q) {
    int s = static_cast<int>(q.section);
    if (!table.present[s]) s = static_cast<int>(blocking_form(q.section));
    if (!table.present[s]) return nullptr;
    for (const Rule& r : table.sections[s]) {
        if (matches(r, q)) return &r;
    }
    return nullptr;  // unreachable for a validated table with comm_size >= 2
}

}  // namespace nicoll::tuning
