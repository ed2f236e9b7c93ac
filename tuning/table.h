// Tuning: the tuning table, its loader and validator, and the decision engine.
//
// A tuning file (man nicoll-tuning(5)) is a JSON document: a version, optional provenance, and
// per collective an ordered list of rules, each matching a range of communicator sizes and of
// message sizes (optionally of nodes, processes per node and the fabric) and naming an algorithm
// and its parameters. The loader checks everything a rule could get wrong and reports every error
// with the file, line:column, JSON path and reason, so a bad file is never half used: the component
// takes all of it or none (and then its embedded default). Rules without nodes, ppn or fabric
// must tile communicator sizes 2..inf and, for each communicator-size range, bytes 0..inf, in
// order, with neither gaps nor overlaps; so every (size, bytes) cell has exactly one such rule,
// and no rule is silently shadowed by an earlier one.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "json.h"
#include "nicoll_tuning.h"
#include "nicsim/nicsim.h"

namespace nicoll::tuning {

// The file's sections, in the order of the component's collectives (coll/coll_nicoll.h), then
// the communicator-wide transport settings.
enum class Section { Barrier, Bcast, Allgather, Ibarrier, Ibcast, Iallgather, Transport };
constexpr int kSections = 7;
std::string_view section_name(Section s);
std::optional<Section> find_section(std::string_view name);
// The engine's algorithm table of a collective section (nicsim_collective_t), -1 for transport.
int section_engine_table(Section s);
// Ibcast -> Bcast etc.: the section whose rules a missing nonblocking section borrows.
Section blocking_form(Section s);

constexpr std::uint64_t kInf = UINT64_MAX;  // "inf" as a range's upper end
constexpr int kFileVersion = 1;
// The ranges of coll_nicoll_bcast_k, coll_nicoll_packet_size and coll_nicoll_credits.
constexpr int kMaxK = NICOLL_TUNING_MAX_K;
constexpr std::uint64_t kMaxPacketSize = NICOLL_TUNING_MAX_PACKET_SIZE;
constexpr int kMaxCredits = NICSIM_CREDITS_MAX;

// What carries a communicator's packets (nicoll_tuning_fabric_t): a rule with a fabric matches
// only a communicator whose every rank reaches every peer through it.
enum class Fabric { Unknown, Shm, Ucx, Pml, Mixed };
std::string_view fabric_name(Fabric f);
// The fabrics a rule may name: "shm", "ucx" or "pml".
std::optional<Fabric> find_fabric(std::string_view name);
// Their names, "shm, ucx, pml", for messages.
std::string fabric_names();

struct Range {
    std::uint64_t lo = 0;
    std::uint64_t hi = kInf;  // inclusive
    bool contains(std::uint64_t v) const { return v >= lo && v <= hi; }
    bool overlaps(const Range& o) const { return lo <= o.hi && o.lo <= hi; }
    bool operator==(const Range& o) const { return lo == o.lo && hi == o.hi; }
};
// "12", "64k", "[2, 8]", "inf": the way ranges are written in files and printed.
std::string format_size(std::uint64_t v);
// A size as tuning files, coll_nicoll_packet_size and nicoll-tune's options spell it: decimal
// digits with an optional k (or K), M or G for 2^10, 2^20, 2^30; at most 2^63-1, so that a
// range's end + 1 never wraps.
enum class SizeSyntax { Ok, Negative, NotSize, TooLarge };
SizeSyntax parse_size(std::string_view text, std::uint64_t* bytes);
std::string format_range(const Range& r);

struct Rule {
    Section section = Section::Bcast;
    int index = 0;  // position in its section
    Position at;
    Range comm_size;
    Range bytes;
    std::optional<Range> nodes;  // locality conditions: the rule matches only when known
    std::optional<Range> ppn;
    std::optional<Fabric> fabric;
    // A refinement matches only where the locality (or the fabric) is known.
    bool refines() const { return nodes || ppn || fabric; }
    int algorithm = -1;             // engine table index, -1: auto (or none: transport)
    int k = 0;                      // kbinomial fanout, 0: auto
    std::uint64_t packet_size = 0;  // 0: auto (the transport's, or the component's auto)
    int credits = 0;                // transport: 0: auto
    std::string name;               // "bcast[2]"
    const std::string& path() const { return name; }
};

struct Table {
    std::string name;  // the file's path, or "embedded default"
    std::array<std::vector<Rule>, kSections> sections;
    std::array<bool, kSections> present{};  // the file has this section
    std::string provenance;                 // provenance.generated_by, or empty
    std::uint64_t digest = 0;               // FNV-1a of the text: ranks compare tables by it
};

// Everything wrong with a file, each "NAME:LINE:COL: PATH: REASON" (PATH is the JSON path,
// "$" for the document), in file order; empty when the table loaded.
struct LoadResult {
    std::optional<Table> table;
    std::vector<std::string> errors;
};
LoadResult load_table(std::string_view text, const std::string& name);
LoadResult load_table_file(const std::string& path);

// The built-in table, compiled from tuning/default.json (always valid: a test checks it).
const Table& embedded_table();
std::string_view embedded_text();

struct Query {
    Section section = Section::Bcast;
    int comm_size = 2;
    std::uint64_t bytes = 0;
    int nodes = 0;  // 0: unknown
    int ppn = 0;    // 0: unknown
    Fabric fabric = Fabric::Unknown;
};

// The first rule of the query's section (or of its blocking form's, when the file has no section
// for a nonblocking collective) that matches; nullptr when the table has no such section.
const Rule* decide(const Table& table, const Query& q);

}  // namespace nicoll::tuning
