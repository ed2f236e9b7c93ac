// nicoll-tune show: one decision, and what made it, in the component's order: an MCA variable
// (read from OMPI_MCA_coll_nicoll_* as mpirun would pass it), a rule of the tuning file, a rule of
// the embedded default, auto.
#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "nicoll_tuning.h"
#include "nicsim/nicsim.h"
#include "plan/kbinomial.h"
#include "tune.h"

namespace nicoll::tune {

namespace {

struct Line {
    std::string value;
    std::string from;
};

std::string mca(const char* name) {
    const std::string var = std::string("OMPI_MCA_coll_nicoll_") + name;
    const char* v = std::getenv(var.c_str());
    return v == nullptr || std::string(v) == "auto" ? std::string() : std::string(v);
}

}  // namespace

int cmd_show(const Args& args) {
    std::string why;
    auto o = parse_options(
        args, {"--file", "--coll", "--comm-size", "--bytes", "--nodes", "--ppn", "--fabric"}, {},
        {}, &why);
    if (!o) return usage_error("show", why);
    if (!o->has("--coll") || !o->has("--comm-size"))
        return usage_error("show", "--coll and --comm-size are required");
    auto section = tuning::find_section(o->text("--coll"));
    if (!section)
        return usage_error("show", "--coll " + o->text("--coll") +
                                       ": unknown collective (barrier, bcast, allgather, ibarrier, "
                                       "ibcast, iallgather, transport)");
    const bool needs_bytes = *section != tuning::Section::Transport &&
                             *section != tuning::Section::Barrier &&
                             *section != tuning::Section::Ibarrier;
    if (needs_bytes && !o->has("--bytes"))
        return usage_error("show", "--bytes is required for " + o->text("--coll"));
    auto comm = parse_list(o->text("--comm-size"), 2, 1 << 24, &why);
    if (!comm || comm->size() != 1)
        return usage_error("show", "--comm-size: " + (comm ? "one size" : why));
    auto bytes = parse_list(o->text("--bytes", "0"), 0, (std::uint64_t{1} << 62), &why);
    if (!bytes || bytes->size() != 1)
        return usage_error("show", "--bytes: " + (bytes ? "one size" : why));
    auto nodes = parse_list(o->text("--nodes", "0"), 0, 1 << 24, &why);
    if (!nodes || nodes->size() != 1)
        return usage_error("show", "--nodes: " + (nodes ? "one number" : why));
    auto ppn = parse_list(o->text("--ppn", "0"), 0, 1 << 24, &why);
    if (!ppn || ppn->size() != 1)
        return usage_error("show", "--ppn: " + (ppn ? "one number" : why));
    const auto fabric = o->has("--fabric") ? tuning::find_fabric(o->text("--fabric"))
                                           : std::optional(tuning::Fabric::Unknown);
    if (!fabric)
        return usage_error(
            "show", "--fabric " + o->text("--fabric") + ": not one of " + tuning::fabric_names());

    tuning::Query q;
    q.section = *section;
    q.comm_size = static_cast<int>(comm->front());
    q.bytes = bytes->front();
    q.nodes = static_cast<int>(nodes->front());
    q.ppn = static_cast<int>(ppn->front());
    q.fabric = *fabric;

    std::optional<tuning::Table> file;
    std::string file_path = o->text("--file", mca("tuning_file"));
    if (!file_path.empty() && file_path != "-") {
        tuning::LoadResult r = tuning::load_table_file(file_path);
        if (!r.table) {
            std::printf("tuning file not used: %s%s\n", r.errors.front().c_str(),
                        r.errors.size() > 1
                            ? (" (and " + std::to_string(r.errors.size() - 1) + " more)").c_str()
                            : "");
        } else {
            file = std::move(r.table);
        }
    }
    const tuning::Rule* rule = file ? tuning::decide(*file, q) : nullptr;
    std::string from = rule != nullptr ? file->name + " " + rule->path() : "";
    if (rule == nullptr) {
        rule = tuning::decide(tuning::embedded_table(), q);
        if (rule != nullptr) from = "embedded default " + rule->path();
    }
    const std::string rule_from = rule != nullptr ? "rule " + from : "auto (no rule)";
    const int table = tuning::section_engine_table(*section);
    const bool bcast = *section == tuning::Section::Bcast || *section == tuning::Section::Ibcast;

    std::printf("%s, comm size %d, %llu bytes:\n", o->text("--coll").c_str(), q.comm_size,
                static_cast<unsigned long long>(q.bytes));
    auto print = [](const char* what, const Line& l) {
        std::printf("  %-12s %-12s from %s\n", what, l.value.c_str(), l.from.c_str());
    };

    // packet size, needed for auto k as well
    std::uint64_t transport_packet = nicoll_tuning_auto_packet_size(q.comm_size);
    Line packet{std::to_string(transport_packet), "auto (coll_nicoll_packet_size's auto)"};
    tuning::Query tq = q;
    tq.section = tuning::Section::Transport;
    const tuning::Rule* transport = file ? tuning::decide(*file, tq) : nullptr;
    std::string transport_from = transport != nullptr ? file->name + " " + transport->path() : "";
    if (transport == nullptr) {
        transport = tuning::decide(tuning::embedded_table(), tq);
        if (transport != nullptr) transport_from = "embedded default " + transport->path();
    }
    if (transport != nullptr && transport->packet_size != 0) {
        transport_packet = transport->packet_size;
        packet = {std::to_string(transport_packet), "rule " + transport_from};
    }
    if (rule != nullptr && rule->packet_size != 0)
        packet = {std::to_string(rule->packet_size), rule_from};
    if (!mca("packet_size").empty())
        packet = {mca("packet_size"), "MCA variable coll_nicoll_packet_size"};

    if (*section == tuning::Section::Transport) {
        Line credits{"auto", "auto (8, fewer above 33 ranks)"};
        if (transport != nullptr && transport->credits != 0)
            credits = {std::to_string(transport->credits), "rule " + transport_from};
        if (!mca("credits").empty()) credits = {mca("credits"), "MCA variable coll_nicoll_credits"};
        print("packet_size", packet);
        print("credits", credits);
        return 0;
    }

    const char* var = bcast                            ? "bcast_algorithm"
                      : table == NICSIM_COLL_ALLGATHER ? "allgather_algorithm"
                                                       : "barrier_algorithm";
    // auto as the component has it (coll/coll_nicoll_tuning.c): allgather rd while the whole
    // result fits in one packet, else ab.
    const std::uint64_t call_packet =
        rule != nullptr && rule->packet_size != 0 && mca("packet_size").empty()
            ? rule->packet_size
            : std::strtoull(packet.value.c_str(), nullptr, 10);
    const bool ab = table == NICSIM_COLL_ALLGATHER &&
                    q.bytes * static_cast<std::uint64_t>(q.comm_size) > call_packet;
    Line algorithm{bcast ? "kbinomial"
                   : ab  ? "ab"
                         : nicsim_algorithm_name(static_cast<nicsim_collective_t>(table), 0),
                   "auto (no rule, or the rule says auto)"};
    if (rule != nullptr && rule->algorithm >= 0) {
        algorithm = {
            nicsim_algorithm_name(static_cast<nicsim_collective_t>(table), rule->algorithm),
            rule_from};
    }
    if (!mca(var).empty()) algorithm = {mca(var), std::string("MCA variable coll_nicoll_") + var};
    print("algorithm", algorithm);
    if (bcast) {
        const std::uint64_t ps = std::strtoull(packet.value.c_str(), nullptr, 10);
        const std::uint64_t packets =
            ps == 0 ? 1 : std::max<std::uint64_t>(1, (q.bytes + ps - 1) / ps);
        const int best = nicsim::plan::optimal_k(q.comm_size, static_cast<std::int64_t>(packets));
        Line k{std::to_string(best), "auto (Kesavan and Panda Theorem 3 for " + std::to_string(packets) +
                                         " packet" + (packets == 1 ? "" : "s") + ")"};
        if (rule != nullptr && rule->k != 0) k = {std::to_string(rule->k), rule_from};
        if (!mca("bcast_k").empty()) k = {mca("bcast_k"), "MCA variable coll_nicoll_bcast_k"};
        if (algorithm.value == "kbinomial") print("k", k);
    }
    if (table != NICSIM_COLL_BARRIER) print("packet_size", packet);
    return 0;
}

}  // namespace nicoll::tune
