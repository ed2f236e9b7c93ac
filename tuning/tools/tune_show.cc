// nicoll-tune show: one decision, and what made it, in the component's order: an MCA variable
// (read from OMPI_MCA_coll_nicoll_* as mpirun would pass it), a rule of the tuning file, a rule of
// the embedded default, auto.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>

#include "nicoll_tuning.h"
#include "nicsim/nicsim.h"
#include "plan/kbinomial.h"
#include "tune.h"

namespace nicoll::tune {

namespace {

// A value and what decided it.
struct Line {
    std::string value;
    std::string from;
};

void print(const char* what, const Line& l) {
    std::printf("  %-12s %-12s from %s\n", what, l.value.c_str(), l.from.c_str());
}

// coll_nicoll_NAME as the component takes it: empty where unset, auto, or not `valid` (the
// component warns and takes auto; a line here says so, naming what is valid).
std::string mca(const char* name, const std::function<bool(const std::string&)>& valid = {},
                const std::string& what = {}) {
    const std::string var = std::string("OMPI_MCA_coll_nicoll_") + name;
    const char* v = std::getenv(var.c_str());
    if (v == nullptr || std::string(v) == "auto") return {};
    if (valid && !valid(v)) {
        std::printf(
            "MCA variable not used: coll_nicoll_%s=%s (valid: auto, %s): the component "
            "warns and takes auto\n",
            name, v, what.c_str());
        return {};
    }
    return v;
}

// An integer in [min, max], as the component reads its numeric variables.
std::function<bool(const std::string&)> in_range(long min, long max) {
    return [=](const std::string& text) {
        long v = 0;
        return nicoll_tuning_parse_integer(text.c_str(), min, max, &v) != 0;
    };
}

// The call the options describe; empty with *why.
std::optional<tuning::Query> query_from(const Options& o, std::string* why) {
    if (!o.has("--coll") || !o.has("--comm-size")) {
        *why = "--coll and --comm-size are required";
        return std::nullopt;
    }
    tuning::Query q;
    const auto section = tuning::find_section(o.text("--coll"));
    if (!section) {
        *why = "--coll " + o.text("--coll") +
               ": unknown collective (barrier, bcast, allgather, ibarrier, ibcast, iallgather, "
               "transport)";
        return std::nullopt;
    }
    q.section = *section;
    const bool needs_bytes = q.section != tuning::Section::Transport &&
                             q.section != tuning::Section::Barrier &&
                             q.section != tuning::Section::Ibarrier;
    if (needs_bytes && !o.has("--bytes")) {
        *why = "--bytes is required for " + o.text("--coll");
        return std::nullopt;
    }
    if (o.has("--nodes") != o.has("--ppn")) {
        *why = "--nodes and --ppn go together: a communicator knows both once it ran a "
               "collective, and neither before";
        return std::nullopt;
    }
    const auto comm = parse_one(o, "--comm-size", "", 2, 1 << 24, "one size", why);
    const auto bytes =
        comm ? parse_one(o, "--bytes", "0", 0, std::uint64_t{1} << 62, "one size", why)
             : std::nullopt;
    const auto nodes = bytes ? parse_one(o, "--nodes", "0", 0, 1 << 24, "one number", why) : bytes;
    const auto ppn = nodes ? parse_one(o, "--ppn", "0", 0, 1 << 24, "one number", why) : nodes;
    if (!ppn) return std::nullopt;
    const auto fabric = o.has("--fabric") ? tuning::find_fabric(o.text("--fabric"))
                                          : std::optional(tuning::Fabric::Unknown);
    if (!fabric) {
        *why = "--fabric " + o.text("--fabric") + ": not one of " + tuning::fabric_names();
        return std::nullopt;
    }
    q.comm_size = static_cast<int>(*comm);
    q.bytes = *bytes;
    q.nodes = static_cast<int>(*nodes);
    q.ppn = static_cast<int>(*ppn);
    q.fabric = *fabric;
    return q;
}

// --file, else coll_nicoll_tuning_file's; one that does not load is reported and not used.
std::optional<tuning::Table> tuning_file(const Options& o) {
    const std::string path = o.text("--file", mca("tuning_file"));
    if (path.empty() || path == "-") return std::nullopt;
    tuning::LoadResult r = tuning::load_table_file(path);
    if (!r.table) {
        std::printf("tuning file not used: %s%s\n", r.errors.front().c_str(),
                    r.errors.size() > 1
                        ? (" (and " + std::to_string(r.errors.size() - 1) + " more)").c_str()
                        : "");
    }
    return std::move(r.table);
}

// The rule that decides `q`: the tuning file's first match, else the embedded default's.
struct Decided {
    const tuning::Rule* rule = nullptr;
    std::string from;  // "rule FILE PATH"
};

Decided decide(const std::optional<tuning::Table>& file, const tuning::Query& q) {
    for (const tuning::Table* t : {file ? &*file : nullptr, &tuning::embedded_table()}) {
        if (t == nullptr) continue;
        if (const tuning::Rule* r = tuning::decide(*t, q)) {
            return {r, "rule " + t->name + " " + r->path()};
        }
    }
    return {};
}

// The packet size in bytes: the variable (where it is a size in range; the component takes
// auto for any other), else the call's rule, else the transport's rule, else auto.
Line packet_line(int comm_size, const Decided& call, const Decided& transport) {
    std::uint64_t bytes = 0;
    const auto in_size_range = [&bytes](const std::string& text) {
        return tuning::parse_size(text, &bytes) == tuning::SizeSyntax::Ok && bytes >= 1 &&
               bytes <= tuning::kMaxPacketSize;
    };
    const std::string what =
        "1.." + std::to_string(tuning::kMaxPacketSize) + " bytes, as 65536 or 64k";
    if (!mca("packet_size", in_size_range, what).empty()) {
        return {std::to_string(bytes), "MCA variable coll_nicoll_packet_size"};
    }
    if (call.rule != nullptr && call.rule->packet_size != 0) {
        return {std::to_string(call.rule->packet_size), call.from};
    }
    if (transport.rule != nullptr && transport.rule->packet_size != 0) {
        return {std::to_string(transport.rule->packet_size), transport.from};
    }
    return {std::to_string(nicoll_tuning_auto_packet_size(comm_size)),
            "auto (coll_nicoll_packet_size's auto)"};
}

Line credits_line(const Decided& transport) {
    const std::string credits = mca("credits", in_range(1, tuning::kMaxCredits),
                                    "an integer in 1.." + std::to_string(tuning::kMaxCredits));
    if (!credits.empty()) return {credits, "MCA variable coll_nicoll_credits"};
    if (transport.rule != nullptr && transport.rule->credits != 0) {
        return {std::to_string(transport.rule->credits), transport.from};
    }
    return {"auto", "auto (8, fewer above 33 ranks)"};
}

// auto as the component has it (coll/coll_nicoll_tuning.c): bcast kbinomial; allgather rd while
// the whole result fits in one packet of `packet` bytes, else ab; barrier the table's first.
Line algorithm_line(const tuning::Query& q, int table, std::uint64_t packet, const Decided& call) {
    const auto coll = static_cast<nicsim_collective_t>(table);
    const char* var = table == NICSIM_COLL_BCAST       ? "bcast_algorithm"
                      : table == NICSIM_COLL_ALLGATHER ? "allgather_algorithm"
                                                       : "barrier_algorithm";
    std::string names;
    for (int a = 0; a < nicsim_algorithm_count(coll); ++a) {
        names += std::string(a ? ", " : "") + nicsim_algorithm_name(coll, a);
    }
    const std::string set = mca(
        var, [coll](const std::string& v) { return nicsim_algorithm_find(coll, v.c_str()) >= 0; },
        names);
    if (!set.empty()) return {set, std::string("MCA variable coll_nicoll_") + var};
    if (call.rule != nullptr && call.rule->algorithm >= 0) {
        return {nicsim_algorithm_name(coll, call.rule->algorithm), call.from};
    }
    const bool ab = table == NICSIM_COLL_ALLGATHER &&
                    q.bytes * static_cast<std::uint64_t>(q.comm_size) > packet;
    return {table == NICSIM_COLL_BCAST ? "kbinomial"
            : ab                       ? "ab"
                                       : nicsim_algorithm_name(coll, 0),
            "auto (no rule, or the rule says auto)"};
}

// The k-binomial tree's fanout for a message in packets of `packet` bytes.
Line k_line(const tuning::Query& q, std::uint64_t packet, const Decided& call) {
    const std::string k = mca("bcast_k", in_range(1, tuning::kMaxK),
                              "an integer in 1.." + std::to_string(tuning::kMaxK));
    if (!k.empty()) return {k, "MCA variable coll_nicoll_bcast_k"};
    if (call.rule != nullptr && call.rule->k != 0) return {std::to_string(call.rule->k), call.from};
    const std::uint64_t packets =
        packet == 0 ? 1 : std::max<std::uint64_t>(1, (q.bytes + packet - 1) / packet);
    const int best = nicsim::plan::optimal_k(q.comm_size, static_cast<std::int64_t>(packets));
    return {std::to_string(best), "auto (Kesavan and Panda Theorem 3 for " +
                                      std::to_string(packets) + " packet" +
                                      (packets == 1 ? "" : "s") + ")"};
}

}  // namespace

int cmd_show(const Args& args) {
    std::string why;
    auto o = parse_options(
        args, {"--file", "--coll", "--comm-size", "--bytes", "--nodes", "--ppn", "--fabric"}, {},
        {}, &why);
    if (!o) return usage_error("show", why);
    const auto q = query_from(*o, &why);
    if (!q) return usage_error("show", why);
    const std::optional<tuning::Table> file = tuning_file(*o);
    tuning::Query tq = *q;
    tq.section = tuning::Section::Transport;
    const Decided call = decide(file, *q), transport = decide(file, tq);

    // Every line first: the variables not used are said before the decision.
    const Line packet = packet_line(q->comm_size, call, transport);
    const std::uint64_t packet_bytes = std::strtoull(packet.value.c_str(), nullptr, 10);
    const int table = tuning::section_engine_table(q->section);
    const bool transport_only = q->section == tuning::Section::Transport;
    const Line credits = transport_only ? credits_line(transport) : Line{};
    const Line algorithm = transport_only ? Line{} : algorithm_line(*q, table, packet_bytes, call);
    const Line k = table == NICSIM_COLL_BCAST ? k_line(*q, packet_bytes, call) : Line{};

    std::printf("%s, comm size %d, %llu bytes:\n", o->text("--coll").c_str(), q->comm_size,
                static_cast<unsigned long long>(q->bytes));
    if (transport_only) {
        print("packet_size", packet);
        print("credits", credits);
        return 0;
    }
    print("algorithm", algorithm);
    if (algorithm.value == "kbinomial") print("k", k);
    if (table != NICSIM_COLL_BARRIER) print("packet_size", packet);
    return 0;
}

}  // namespace nicoll::tune
