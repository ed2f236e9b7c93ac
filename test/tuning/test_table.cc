// tuning/table.h: the loader's exact errors for every class of mistake, and the decisions of
// valid tables.
#include <gtest/gtest.h>

#include <initializer_list>
#include <string>
#include <vector>

#include "nicsim/nicsim.h"
#include "nicoll_tuning.h"
#include "table.h"

namespace nicoll::tuning {
namespace {

// A valid file's sections, for cases that break one thing.
const std::string kAllgather =
    R"("allgather": [{"comm_size": [2, "inf"], "bytes": [0, "inf"], "algorithm": "rd"}])";
const std::string kBarrier =
    R"("barrier": [{"comm_size": [2, "inf"], "algorithm": "dissemination"}])";

struct BadCase {
    const char* name;
    std::string text;
    std::vector<std::string> errors;  // exact, in order
};

std::string bcast(const std::string& rules) {
    return "{\"version\": 1, \"bcast\": [" + rules + "]}";
}

std::vector<BadCase> bad_cases() {
    return {
        {"empty", "", {"f.json:1:1: $: empty document: expected a JSON object"}},
        {"blank", "  \n ", {"f.json:2:2: $: empty document: expected a JSON object"}},
        {"not_json", "version: 1", {"f.json:1:1: $: unexpected character 'v'"}},
        {"comment", "{\"version\": 1 // one\n}", {"f.json:1:15: $: expected ',' or '}'"}},
        {"trailing_comma", "{\"version\": 1,}", {"f.json:1:15: $: trailing comma before '}'"}},
        {"unterminated",
         "{\"version\": 1",
         {"f.json:1:14: $: unexpected end of the document: '}' missing"}},
        {"garbage_after",
         "{\"version\": 1} x",
         {"f.json:1:16: $: unexpected text after the JSON document"}},
        {"duplicate_key",
         "{\"version\": 1,\n \"version\": 1}",
         {"f.json:2:2: $: duplicate key \"version\""}},
        {"duplicate_key_in_rule",
         bcast(R"({"comm_size": 2, "comm_size": 3, "bytes": 0, "algorithm": "chain"})"),
         {"f.json:1:43: $: duplicate key \"comm_size\""}},
        {"top_array", "[1]", {"f.json:1:1: $: expected a JSON object, found an array"}},
        {"too_deep",
         std::string(70, '[') + std::string(70, ']'),
         {"f.json:1:66: $: nested deeper than 64 levels"}},
        {"control_character",
         "{\"version\": 1, \"x\ty\": 2}",
         {"f.json:1:18: $: control character in a string"}},
        {"escape_byte", "\x1b[2J", {"f.json:1:1: $: unexpected character '\\x1b'"}},
        {"escape_in_key",
         "{\"version\": 1, \"re\\u001bduce\": []}",
         {"f.json:1:16: $.re\\x1bduce: unknown collective \"re\\x1bduce\" (known: barrier, bcast, "
          "allgather, ibarrier, ibcast, iallgather, transport, version, provenance)"}},
        {"nul_escape",
         "{\"version\": 1, \"provenance\": \"a\\u0000b\"}",
         {"f.json:1:38: $: \\u0000 in a string (a tuning file's strings hold no NUL)"}},
        {"invalid_utf8",
         "{\"version\": 1, \"provenance\": \"a\xff\"}",
         {"f.json:1:32: $: invalid UTF-8 in a string"}},
        {"overlong_utf8",
         "{\"version\": 1, \"provenance\": \"a\xc0\xaf\"}",
         {"f.json:1:32: $: invalid UTF-8 in a string"}},
        {"surrogate_utf8",
         "{\"version\": 1, \"provenance\": \"a\xed\xa0\x80\"}",
         {"f.json:1:32: $: invalid UTF-8 in a string"}},
        {"no_version", "{}", {"f.json:1:1: $: no \"version\" (this nicoll reads version 1)"}},
        {"wrong_version",
         "{\"version\": 2}",
         {"f.json:1:13: $.version: unsupported version 2 (this nicoll reads version 1)"}},
        {"version_string",
         "{\"version\": \"1\"}",
         {"f.json:1:13: $.version: expected the number 1, found a string"}},
        {"unknown_collective",
         "{\"version\": 1, \"reduce\": []}",
         {"f.json:1:16: $.reduce: unknown collective \"reduce\" (known: barrier, bcast, allgather, "
          "ibarrier, "
          "ibcast, iallgather, transport, version, provenance)"}},
        {"section_not_array",
         "{\"version\": 1, \"bcast\": {}}",
         {"f.json:1:25: $.bcast: expected an array of rules, found an object"}},
        {"no_rules",
         "{\"version\": 1, \"bcast\": []}",
         {"f.json:1:25: $.bcast: no rules: every communicator size and message size must be "
          "covered"}},
        {"unknown_algorithm",
         bcast(R"({"comm_size": [2, "inf"], "bytes": [0, "inf"], "algorithm": "ring"})"),
         {"f.json:1:86: $.bcast[0].algorithm: unknown algorithm \"ring\" for bcast (known: auto, "
          "binomial, binary, "
          "chain, flat, kbinomial)"}},
        {"unknown_key",
         bcast(
             R"({"comm_size": [2, "inf"], "bytes": [0, "inf"], "algorithm": "chain", "fanout": 3})"),
         {"f.json:1:95: $.bcast[0].fanout: unknown key \"fanout\" (known: comm_size, bytes, nodes, "
          "ppn, fabric, algorithm, k, "
          "packet_size, credits, forwarding, comment)"}},
        {"missing_keys",
         bcast(R"({"algorithm": "chain"})"),
         {"f.json:1:26: $.bcast[0]: no comm_size", "f.json:1:26: $.bcast[0]: no bytes"}},
        {"k_zero",
         bcast(
             R"({"comm_size": [2, "inf"], "bytes": [0, "inf"], "algorithm": "kbinomial", "k": 0})"),
         {"f.json:1:104: $.bcast[0].k: 0 out of range 1..64"}},
        {"k_huge",
         bcast(
             R"({"comm_size": [2, "inf"], "bytes": [0, "inf"], "algorithm": "kbinomial", "k": 99999999999999999999})"),
         {"f.json:1:104: $.bcast[0].k: 99999999999999999999 out of range 1..64"}},
        {"k_fraction",
         bcast(
             R"({"comm_size": [2, "inf"], "bytes": [0, "inf"], "algorithm": "kbinomial", "k": 2.5})"),
         {"f.json:1:104: $.bcast[0].k: expected an integer 1..64 or \"auto\", found 2.5"}},
        {"k_wrong_algorithm",
         bcast(R"({"comm_size": [2, "inf"], "bytes": [0, "inf"], "algorithm": "chain", "k": 2})"),
         {"f.json:1:95: $.bcast[0].k: k applies only to algorithm kbinomial, not chain"}},
        {"k_in_allgather",
         "{\"version\": 1, \"allgather\": [{\"comm_size\": [2, \"inf\"], \"bytes\": [0, \"inf\"], "
         "\"algorithm\": \"rd\", \"k\": 2}]}",
         {"f.json:1:96: $.allgather[0].k: k does not apply to allgather (k is the k-binomial "
          "broadcast tree's fanout)"}},
        {"packet_size_zero",
         bcast(
             R"({"comm_size": [2, "inf"], "bytes": [0, "inf"], "algorithm": "chain", "packet_size": 0})"),
         {"f.json:1:110: $.bcast[0].packet_size: packet_size 0 out of range 1..64M"}},
        {"packet_size_too_big",
         bcast(
             R"({"comm_size": [2, "inf"], "bytes": [0, "inf"], "algorithm": "chain", "packet_size": "1G"})"),
         {"f.json:1:110: $.bcast[0].packet_size: packet_size \"1G\" out of range 1..64M"}},
        {"credits_outside_transport",
         bcast(
             R"({"comm_size": [2, "inf"], "bytes": [0, "inf"], "algorithm": "chain", "credits": 4})"),
         {"f.json:1:95: $.bcast[0].credits: credits does not apply to bcast (credits are set per "
          "communicator, in "
          "the transport section)"}},
        {"credits_range",
         "{\"version\": 1, \"transport\": [{\"comm_size\": [2, \"inf\"], \"credits\": 2000}]}",
         {"f.json:1:67: $.transport[0].credits: 2000 out of range 1..1024"}},
        {"forwarding_model_only",
         bcast(
             R"({"comm_size": [2, "inf"], "bytes": [0, "inf"], "algorithm": "chain", "forwarding": "fcfs"})"),
         {"f.json:1:109: $.bcast[0].forwarding: forwarding \"fcfs\" runs only on the modeled "
          "network (nicsim bcast "
          "--forwarding); real jobs forward fpfs"}},
        {"negative_size",
         bcast(R"({"comm_size": [2, "inf"], "bytes": [-1, "inf"], "algorithm": "chain"})"),
         {"f.json:1:62: $.bcast[0].bytes[0]: negative size -1"}},
        {"negative_size_string",
         bcast(R"({"comm_size": [2, "inf"], "bytes": ["-4k", "inf"], "algorithm": "chain"})"),
         {"f.json:1:62: $.bcast[0].bytes[0]: negative size \"-4k\""}},
        {"huge_size",
         bcast(
             R"({"comm_size": [2, "inf"], "bytes": [0, 18446744073709551616], "algorithm": "chain"})"),
         {"f.json:1:65: $.bcast[0].bytes[1]: too large: 18446744073709551616 (at most 2^63-1, or "
          "inf)"}},
        {"huge_suffixed_size",
         bcast(R"({"comm_size": [2, "inf"], "bytes": [0, "99999999999G"], "algorithm": "chain"})"),
         {"f.json:1:65: $.bcast[0].bytes[1]: too large: \"99999999999G\" (at most 2^63-1, or "
          "inf)"}},
        {"bad_suffix",
         bcast(R"({"comm_size": [2, "inf"], "bytes": [0, "4kb"], "algorithm": "chain"})"),
         {"f.json:1:65: $.bcast[0].bytes[1]: not a size: \"4kb\" (an integer, with k, M or G for "
          "2^10, 2^20, 2^30, or inf)"}},
        {"inf_low",
         bcast(R"({"comm_size": ["inf", "inf"], "bytes": [0, "inf"], "algorithm": "chain"})"),
         {"f.json:1:41: $.bcast[0].comm_size[0]: \"inf\" may only end a range"}},
        {"empty_range",
         bcast(R"({"comm_size": [8, 4], "bytes": [0, "inf"], "algorithm": "chain"})"),
         {"f.json:1:40: $.bcast[0].comm_size: empty range: 8 > 4"}},
        {"range_of_three",
         bcast(R"({"comm_size": [2, 4, 8], "bytes": [0, "inf"], "algorithm": "chain"})"),
         {"f.json:1:40: $.bcast[0].comm_size: a range is [low, high], found 3 values"}},
        {"bytes_gap",
         bcast(R"({"comm_size": [2, "inf"], "bytes": [0, 1023], "algorithm": "chain"},
                  {"comm_size": [2, "inf"], "bytes": [2048, "inf"], "algorithm": "binomial"})"),
         {"f.json:2:19: $.bcast[1]: gap: bytes [1k, 2047] are not covered for comm_size [2, inf]"}},
        {"bytes_overlap",
         bcast(R"({"comm_size": [2, "inf"], "bytes": [0, "4k"], "algorithm": "chain"},
                  {"comm_size": [2, "inf"], "bytes": ["4k", "inf"], "algorithm": "binomial"})"),
         {"f.json:2:19: $.bcast[1]: bytes [4k, inf] overlap bcast[0]'s [0, 4k]"}},
        {"bytes_unsorted",
         bcast(R"({"comm_size": [2, "inf"], "bytes": [1024, "inf"], "algorithm": "chain"},
                  {"comm_size": [2, "inf"], "bytes": [0, 1023], "algorithm": "binomial"})"),
         {"f.json:1:26: $.bcast[0]: gap: bytes [0, 1023] are not covered for comm_size [2, inf]"}},
        {"bytes_unsorted_later",
         bcast(R"({"comm_size": [2, "inf"], "bytes": [0, 99], "algorithm": "chain"},
                  {"comm_size": [2, "inf"], "bytes": [1024, "inf"], "algorithm": "chain"},
                  {"comm_size": [2, "inf"], "bytes": [100, 1023], "algorithm": "binomial"})"),
         {"f.json:2:19: $.bcast[1]: gap: bytes [100, 1023] are not covered for comm_size [2, "
          "inf]"}},
        {"bytes_not_to_inf",
         bcast(R"({"comm_size": [2, "inf"], "bytes": [0, "1M"], "algorithm": "chain"})"),
         {"f.json:1:26: $.bcast[0]: gap: bytes [1048577, inf] are not covered for comm_size [2, "
          "inf]"}},
        {"comm_gap",
         bcast(R"({"comm_size": [2, 4], "bytes": [0, "inf"], "algorithm": "chain"},
                  {"comm_size": [8, "inf"], "bytes": [0, "inf"], "algorithm": "binomial"})"),
         {"f.json:2:19: $.bcast[1]: gap: comm_size [5, 7] is not covered"}},
        {"comm_overlap",
         bcast(R"({"comm_size": [2, 8], "bytes": [0, "inf"], "algorithm": "chain"},
                  {"comm_size": [8, "inf"], "bytes": [0, "inf"], "algorithm": "binomial"})"),
         {"f.json:2:19: $.bcast[1]: comm_size [8, inf] overlaps bcast[0]'s [2, 8]"}},
        {"comm_unsorted",
         bcast(R"({"comm_size": [9, "inf"], "bytes": [0, "inf"], "algorithm": "chain"},
                  {"comm_size": [2, 8], "bytes": [0, "inf"], "algorithm": "binomial"})"),
         {"f.json:1:26: $.bcast[0]: gap: comm_size [2, 8] is not covered"}},
        {"comm_not_to_inf",
         bcast(R"({"comm_size": [2, 64], "bytes": [0, "inf"], "algorithm": "chain"})"),
         {"f.json:1:26: $.bcast[0]: gap: comm_size [65, inf] is not covered"}},
        {"shadowed_refinement",
         bcast(R"({"comm_size": [2, "inf"], "bytes": [0, "inf"], "algorithm": "chain"},
                  {"comm_size": [2, "inf"], "bytes": [0, "inf"], "nodes": [2, 4], "algorithm": "binomial"})"),
         {"f.json:2:19: $.bcast[1]: never matches where bcast[0] already decides (comm_size [2, "
          "inf], bytes [0, "
          "inf]); put rules with nodes, ppn or fabric first"}},
        {"shadowed_fabric_refinement",
         bcast(R"({"comm_size": [2, "inf"], "bytes": [0, "inf"], "algorithm": "chain"},
                  {"comm_size": [2, 2], "bytes": [0, "inf"], "fabric": "shm", "algorithm": "flat"})"),
         {"f.json:2:19: $.bcast[1]: never matches where bcast[0] already decides (comm_size [2, "
          "inf], bytes [0, "
          "inf]); put rules with nodes, ppn or fabric first"}},
        {"unknown_fabric",
         bcast(R"({"comm_size": [2, "inf"], "bytes": [0, "inf"], "fabric": "tcp", "algorithm": "chain"},
                  {"comm_size": [2, "inf"], "bytes": [0, "inf"], "algorithm": "chain"})"),
         {"f.json:1:83: $.bcast[0].fabric: unknown fabric \"tcp\" (known: shm, ucx, pml)"}},
        {"bytes_in_transport",
         "{\"version\": 1, \"transport\": [{\"comm_size\": [2, \"inf\"], \"bytes\": 0}]}",
         {"f.json:1:56: $.transport[0].bytes: bytes does not apply to transport (its settings hold "
          "for the whole "
          "communicator)"}},
        {"wrong_type_algorithm",
         bcast(R"({"comm_size": [2, "inf"], "bytes": [0, "inf"], "algorithm": 3})"),
         {"f.json:1:86: $.bcast[0].algorithm: expected an algorithm name, found a number"}},
        {"several_errors",
         "{\"version\": 3,\n \"bcast\": [{\"comm_size\": [2, \"inf\"], \"bytes\": [0, \"inf\"], "
         "\"algorithm\": \"x\"}],\n"
         " \"gather\": []}",
         {"f.json:1:13: $.version: unsupported version 3 (this nicoll reads version 1)",
          "f.json:2:72: $.bcast[0].algorithm: unknown algorithm \"x\" for bcast (known: auto, "
          "binomial, binary, chain, "
          "flat, kbinomial)",
          "f.json:3:2: $.gather: unknown collective \"gather\" (known: barrier, bcast, allgather, "
          "ibarrier, ibcast, "
          "iallgather, transport, version, provenance)"}},
    };
}

class BadFile : public ::testing::TestWithParam<BadCase> {};

TEST_P(BadFile, ReportsExactErrors) {
    const BadCase& c = GetParam();
    LoadResult r = load_table(c.text, "f.json");
    EXPECT_FALSE(r.table.has_value());
    EXPECT_EQ(r.errors, c.errors);
}

INSTANTIATE_TEST_SUITE_P(Tuning, BadFile, ::testing::ValuesIn(bad_cases()),
                         [](const ::testing::TestParamInfo<BadCase>& i) {
                             return std::string(i.param.name);
                         });

const std::string kGood = R"({
  "version": 1,
  "provenance": {"generated_by": "test", "anything": [1, {"x": null}]},
  "transport": [
    {"comm_size": 2, "packet_size": "1M", "credits": 8},
    {"comm_size": [3, "inf"], "packet_size": "auto", "credits": "auto"}
  ],
  "bcast": [
    {"comm_size": [2, 7], "bytes": [0, "inf"], "algorithm": "binomial"},
    {"comm_size": [8, "inf"], "bytes": [0, 4096], "nodes": [2, 2], "algorithm": "chain", "comment": "two nodes"},
    {"comm_size": [8, "inf"], "bytes": [0, 8191], "algorithm": "binary", "forwarding": "fpfs"},
    {"comm_size": [8, "inf"], "bytes": ["8k", "inf"], "algorithm": "kbinomial", "k": 2, "packet_size": "16k"}
  ],
  "allgather": [
    {"comm_size": [2, 2], "bytes": ["2M", "inf"], "fabric": "shm", "algorithm": "ab", "packet_size": "1M"},
    {"comm_size": [1, "inf"], "bytes": [0, 1023], "algorithm": "rd"},
    {"comm_size": [1, "inf"], "bytes": ["1k", "inf"], "algorithm": "ab"}
  ],
  "ibarrier": [
    {"comm_size": [2, "inf"], "algorithm": "recursive_doubling"}
  ]
})";

const Rule& decided(const Table& t, Section s, int comm, std::uint64_t bytes, int nodes = 0,
                    Fabric fabric = Fabric::Unknown) {
    Query q;
    q.section = s;
    q.comm_size = comm;
    q.bytes = bytes;
    q.nodes = nodes;
    q.fabric = fabric;
    const Rule* r = decide(t, q);
    EXPECT_NE(r, nullptr);
    static Rule none;
    return r != nullptr ? *r : none;
}

TEST(Tuning, GoodFileDecides) {
    LoadResult r = load_table(kGood, "good.json");
    ASSERT_TRUE(r.table) << r.errors.front();
    const Table& t = *r.table;
    EXPECT_EQ(t.provenance, "test");
    EXPECT_EQ(decided(t, Section::Bcast, 4, 1 << 30).path(), "bcast[0]");
    EXPECT_EQ(decided(t, Section::Bcast, 8, 100).path(), "bcast[2]");     // locality unknown
    EXPECT_EQ(decided(t, Section::Bcast, 8, 100, 2).path(), "bcast[1]");  // two nodes
    EXPECT_EQ(decided(t, Section::Bcast, 8, 100, 3).path(), "bcast[2]");
    EXPECT_EQ(decided(t, Section::Bcast, 8, 8191).path(), "bcast[2]");
    EXPECT_EQ(decided(t, Section::Bcast, 8, 8192).path(), "bcast[3]");
    EXPECT_EQ(decided(t, Section::Bcast, 8, 8192).k, 2);
    EXPECT_EQ(decided(t, Section::Bcast, 8, 8192).packet_size, 16384u);
    EXPECT_EQ(decided(t, Section::Bcast, 8, 8192).algorithm,
              nicsim_algorithm_find(NICSIM_COLL_BCAST, "kbinomial"));
    EXPECT_EQ(decided(t, Section::Ibcast, 1000, 1).path(), "bcast[2]");  // borrows bcast's rules
    EXPECT_EQ(decided(t, Section::Allgather, 5, 1023).algorithm,
              nicsim_algorithm_find(NICSIM_COLL_ALLGATHER, "rd"));
    EXPECT_EQ(decided(t, Section::Iallgather, 5, 1024).algorithm,
              nicsim_algorithm_find(NICSIM_COLL_ALLGATHER, "ab"));
    // a fabric's rule: only where every peer is reached through it
    EXPECT_EQ(decided(t, Section::Allgather, 2, 4 << 20, 1, Fabric::Shm).path(), "allgather[0]");
    EXPECT_EQ(decided(t, Section::Allgather, 2, 4 << 20, 1, Fabric::Shm).packet_size, 1u << 20);
    EXPECT_EQ(decided(t, Section::Allgather, 2, 4 << 20, 1, Fabric::Pml).path(), "allgather[2]");
    EXPECT_EQ(decided(t, Section::Allgather, 2, 4 << 20, 2, Fabric::Mixed).path(), "allgather[2]");
    EXPECT_EQ(decided(t, Section::Allgather, 2, 4 << 20).path(), "allgather[2]");  // not known yet
    EXPECT_EQ(decided(t, Section::Allgather, 3, 4 << 20, 1, Fabric::Shm).path(), "allgather[2]");
    EXPECT_EQ(decided(t, Section::Ibarrier, 3, 0).path(), "ibarrier[0]");
    EXPECT_EQ(decided(t, Section::Transport, 2, 0).packet_size, 1u << 20);
    EXPECT_EQ(decided(t, Section::Transport, 2, 0).credits, 8);
    EXPECT_EQ(decided(t, Section::Transport, 3, 0).packet_size, 0u);  // auto
    Query barrier;
    barrier.section = Section::Barrier;  // neither barrier nor a blocking form: the default's
    EXPECT_EQ(decide(t, barrier), nullptr);
}

TEST(Tuning, EmbeddedDefaultIsValidAndComplete) {
    LoadResult r = load_table(embedded_text(), "embedded default");
    ASSERT_TRUE(r.table) << r.errors.front();
    for (Section s : {Section::Barrier, Section::Bcast, Section::Allgather, Section::Ibarrier,
                      Section::Ibcast, Section::Iallgather, Section::Transport}) {
        for (int comm : {2, 3, 4, 5, 64, 1 << 20}) {
            for (std::uint64_t bytes :
                 {std::uint64_t{0}, std::uint64_t{1}, std::uint64_t{65536}, kInf - 1}) {
                Query q;
                q.section = s;
                q.comm_size = comm;
                q.bytes = bytes;
                EXPECT_NE(decide(embedded_table(), q), nullptr)
                    << section_name(s) << " " << comm << " " << bytes;
            }
        }
    }
    EXPECT_FALSE(embedded_table().provenance.empty());
}

TEST(Tuning, Sizes) {
    EXPECT_EQ(format_size(0), "0");
    EXPECT_EQ(format_size(1023), "1023");
    EXPECT_EQ(format_size(65536), "64k");
    EXPECT_EQ(format_size(3 << 20), "3M");
    EXPECT_EQ(format_size(kInf), "inf");
    LoadResult r = load_table(
        R"({"version": 1, "bcast": [{"comm_size": [2, "inf"], "bytes": [0, "1G"], "algorithm": "chain"},
                                   {"comm_size": [2, "inf"], "bytes": [1073741825, 9223372036854775807], "algorithm": "chain"},
                                   {"comm_size": [2, "inf"], "bytes": [9223372036854775807, "inf"], "algorithm": "chain"}]})",
        "f.json");
    EXPECT_FALSE(r.table);  // the last two overlap at 2^63-1
    ASSERT_EQ(r.errors.size(), 1u);
    EXPECT_EQ(r.errors[0],
              "f.json:3:36: $.bcast[2]: bytes [9223372036854775807, inf] overlap bcast[1]'s "
              "[1073741825, inf]");
    // A range up to 2^63-1, the largest size a file can write, ends as one up to inf does.
    r = load_table(
        R"({"version": 1, "bcast": [{"comm_size": [2, 9223372036854775807], "bytes": [0, 9223372036854775807], "algorithm": "chain"}]})",
        "f.json");
    EXPECT_TRUE(r.table) << (r.errors.empty() ? "" : r.errors[0]);
}

// parse_size, which tuning files, coll_nicoll_packet_size (nicoll_tuning_parse_size) and
// nicoll-tune's lists share.
TEST(Tuning, ParseSize) {
    struct Case {
        const char* text;
        SizeSyntax syntax;
        std::uint64_t bytes;
    };
    for (const Case& c : std::initializer_list<Case>{
             {"0", SizeSyntax::Ok, 0},
             {"65536", SizeSyntax::Ok, 65536},
             {"64k", SizeSyntax::Ok, 65536},
             {"64K", SizeSyntax::Ok, 65536},
             {"4M", SizeSyntax::Ok, 4u << 20},
             {"1G", SizeSyntax::Ok, 1u << 30},
             {"9223372036854775807", SizeSyntax::Ok, (std::uint64_t{1} << 63) - 1},
             {"8589934591G", SizeSyntax::Ok, (std::uint64_t{8589934591}) << 30},
             {"9223372036854775808", SizeSyntax::TooLarge, 0},
             {"8589934592G", SizeSyntax::TooLarge, 0},
             {"-5", SizeSyntax::Negative, 0},
             {"-5k", SizeSyntax::Negative, 0},
             {"", SizeSyntax::NotSize, 0},
             {"k", SizeSyntax::NotSize, 0},
             {"4m", SizeSyntax::NotSize, 0},
             {"12abc", SizeSyntax::NotSize, 0},
             {" 64", SizeSyntax::NotSize, 0},
             {"+64", SizeSyntax::NotSize, 0},
             {"1.5M", SizeSyntax::NotSize, 0},
             {"64kk", SizeSyntax::NotSize, 0},
         }) {
        std::uint64_t bytes = 0;
        EXPECT_EQ(parse_size(c.text, &bytes), c.syntax) << '"' << c.text << '"';
        if (c.syntax == SizeSyntax::Ok) {
            EXPECT_EQ(bytes, c.bytes) << '"' << c.text << '"';
        }
    }
    unsigned long long bytes = 0;
    EXPECT_EQ(nicoll_tuning_parse_size("64k", &bytes), 1);
    EXPECT_EQ(bytes, 65536u);
    EXPECT_EQ(nicoll_tuning_parse_size("64 k", &bytes), 0);
    EXPECT_EQ(nicoll_tuning_parse_size(nullptr, &bytes), 0);
}

// The integer variables' rule (coll_nicoll_credits, bcast_k, shm_limit), which the component and
// nicoll-tune show share: digits only, in range.
TEST(Tuning, ParseInteger) {
    long v = 0;
    EXPECT_EQ(nicoll_tuning_parse_integer("8", 1, 1024, &v), 1);
    EXPECT_EQ(v, 8);
    EXPECT_EQ(nicoll_tuning_parse_integer("1024", 1, 1024, &v), 1);
    EXPECT_EQ(v, 1024);
    for (const char* text : {"0", "1025", " 8", "+8", "-3", "8 ", "8k", "0x10", "", "abc",
                             "99999999999999999999"}) {
        v = -1;
        EXPECT_EQ(nicoll_tuning_parse_integer(text, 1, 1024, &v), 0) << '"' << text << '"';
        EXPECT_EQ(v, -1) << '"' << text << '"';
    }
    EXPECT_EQ(nicoll_tuning_parse_integer(nullptr, 1, 1024, &v), 0);
}

// Strings in UTF-8 of two, three and four bytes are taken as they are.
TEST(Tuning, Utf8StringsAreKept) {
    const std::string provenance = "caf\xc3\xa9, \xe2\x82\xac, \xf0\x9f\x93\x88";
    LoadResult r = load_table("{\"version\": 1, \"provenance\": {\"generated_by\": \"" +
                                  provenance + "\"}, " + kBarrier + "}",
                              "f.json");
    ASSERT_TRUE(r.table) << (r.errors.empty() ? "" : r.errors[0]);
    EXPECT_EQ(r.table->provenance, provenance);
}

TEST(Tuning, UnreadableFile) {
    LoadResult r = load_table_file("/nonexistent/tuning.json");
    EXPECT_FALSE(r.table);
    ASSERT_EQ(r.errors.size(), 1u);
    EXPECT_EQ(r.errors[0], "/nonexistent/tuning.json: cannot open: No such file or directory");
}

}  // namespace
}  // namespace nicoll::tuning
