// nicoll-tune generate --model: the engine's simulator over a grid of communicator sizes and
// message sizes, every algorithm (and every k of the k-binomial tree) per cell, the fastest kept.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "nicsim/nicsim.h"
#include "plan/barrier.h"
#include "plan/tree.h"
#include "sim/bcast.h"
#include "sim/collective.h"
#include "sim/model.h"
#include "tune.h"

namespace nicoll::tune {

namespace {

// A preset name (nicsim presets) or a preset file written by calibrate:
// {"nicoll_preset": 1, "base": NAME, "values": {PARAM: "VALUE", ...}, "provenance": {...}}.
std::optional<nicsim::sim::Model> load_model(const std::string& what, std::string* name,
                                             std::string* why) {
    if (const auto* p = nicsim::sim::find_preset(what)) {
        *name = what;
        return nicsim::sim::preset_model(*p);
    }
    std::ifstream in(what);
    if (!in) {
        *why = "--model " + what + ": neither a preset (nicsim presets) nor a readable preset file";
        return std::nullopt;
    }
    std::stringstream text;
    text << in.rdbuf();
    tuning::JsonError e;
    auto doc = tuning::parse_json(text.str(), &e);
    if (!doc) {
        *why = what + ":" + std::to_string(e.at.line) + ":" + std::to_string(e.at.column) + ": " +
               e.reason;
        return std::nullopt;
    }
    const tuning::JsonValue* base = doc->find("base");
    const tuning::JsonValue* values = doc->find("values");
    if (doc->find("nicoll_preset") == nullptr || base == nullptr ||
        base->type != tuning::JsonValue::Type::String || values == nullptr ||
        values->type != tuning::JsonValue::Type::Object) {
        *why = what + ": not a preset file (nicoll_preset, base and values expected)";
        return std::nullopt;
    }
    const auto* p = nicsim::sim::find_preset(base->text);
    if (p == nullptr) {
        *why = what + ": base \"" + base->text + "\" is not a preset";
        return std::nullopt;
    }
    nicsim::sim::Model m = nicsim::sim::preset_model(*p);
    for (std::size_t i = 0; i < values->members.size(); ++i) {
        const auto& [k, v] = values->members[i];
        std::string w;
        if (!nicsim::sim::set_model_param(m, k, v.text, &w)) {
            *why = what + ":" + std::to_string(values->key_at[i].line) + ":" +
                   std::to_string(values->key_at[i].column) + ": values." + k + ": " + w;
            return std::nullopt;
        }
    }
    *name = what;
    return m;
}

int ceil_log2(std::uint64_t n) {
    int l = 0;
    while ((std::uint64_t{1} << l) < n) ++l;
    return l;
}

// --colls: the collectives to tune, of bcast, allgather and barrier.
std::optional<std::vector<tuning::Section>> parse_colls(const std::string& text, std::string* why) {
    std::vector<tuning::Section> colls;
    for (const std::string_view item : split_list(text)) {
        const std::string name(item);
        auto s = tuning::find_section(name);
        if (!s || (*s != tuning::Section::Bcast && *s != tuning::Section::Allgather &&
                   *s != tuning::Section::Barrier)) {
            *why = "--colls: \"" + name + "\" (bcast, allgather, barrier)";
            return std::nullopt;
        }
        colls.push_back(*s);
    }
    return colls;
}

// --algorithms: the only candidates, by name (kbinomial alone compares k-binomial trees by k).
std::optional<std::vector<std::string>> parse_algorithms(const std::string& text,
                                                         std::string* why) {
    std::vector<std::string> known;  // each name once (flat is a name in all three tables)
    const auto add = [&known](std::string_view name) {
        if (std::find(known.begin(), known.end(), name) == known.end()) known.emplace_back(name);
    };
    for (const nicsim::plan::TreeShape& shape : nicsim::plan::tree_shapes()) add(shape.name);
    for (int a = 0; a < nicsim_algorithm_count(NICSIM_COLL_ALLGATHER); ++a) {
        add(nicsim_algorithm_name(NICSIM_COLL_ALLGATHER, a));
    }
    for (const nicsim::plan::BarrierAlgorithm& a : nicsim::plan::barrier_algorithms()) add(a.name);
    std::vector<std::string> only;
    for (const std::string_view item : split_list(text)) {
        const std::string a(item);
        if (std::find(known.begin(), known.end(), a) == known.end()) {
            std::string names;
            for (const std::string& k : known) names += (names.empty() ? "" : ", ") + k;
            *why = "--algorithms: \"" + a + "\" (" + names + ")";
            return std::nullopt;
        }
        only.push_back(a);
    }
    return only;
}

// The fastest candidate so far; ties go to the first.
struct Best {
    Choice choice;
    double us = INFINITY;
    void consider(const Choice& c, std::optional<double> latency_us) {
        if (latency_us && *latency_us < us) {
            us = *latency_us;
            choice = c;
        }
    }
};

// One cell's candidates on the simulator: every algorithm (and every k of the k-binomial tree)
// that --algorithms leaves, each in the model's own packets and in each of --packet-sizes.
class Search {
public:
    Search(const nicsim::sim::Model& model, std::vector<std::uint64_t> packets,
           std::vector<std::string> only)
        : model_(model), packets_(std::move(packets)), only_(std::move(only)) {}

    // The fastest for `bytes` on `nodes` nodes; empty with *why (possibly empty) if none ran.
    std::optional<Choice> best(tuning::Section s, std::uint64_t nodes, std::uint64_t bytes,
                               std::string* why) const {
        Best best;
        for (std::uint64_t packet :
             s == tuning::Section::Barrier ? std::vector<std::uint64_t>{0} : packets_) {
            nicsim::sim::Model m = model_;
            m.nodes = static_cast<int>(nodes);
            if (packet > 0) m.mtu = static_cast<int>(packet);
            if (s == tuning::Section::Bcast) bcast(m, bytes, packet, best, why);
            if (s == tuning::Section::Allgather) allgather(m, bytes, packet, best, why);
            if (s == tuning::Section::Barrier) barrier(m, best, why);
        }
        if (best.choice.algorithm.empty()) return std::nullopt;
        return best.choice;
    }

private:
    bool wanted(std::string_view a) const {
        return only_.empty() || std::find(only_.begin(), only_.end(), a) != only_.end();
    }

    void bcast(const nicsim::sim::Model& m, std::uint64_t bytes, std::uint64_t packet, Best& best,
               std::string* why) const {
        auto run = [&](const std::string& tree, int k) -> std::optional<double> {
            nicsim::sim::BcastSpec spec;
            spec.model = m;
            spec.bytes = bytes;
            spec.tree = tree;
            spec.k = k;
            auto r = nicsim::sim::run_bcast(spec, nullptr, why);
            if (!r) return std::nullopt;
            return r->latency_us;
        };
        // Larger k first: Theorem 3 gives ties to the larger k (the smaller L1).
        for (int k = std::max(1, ceil_log2(static_cast<std::uint64_t>(m.nodes)));
             k >= 1 && wanted("kbinomial"); --k) {
            best.consider({"kbinomial", k, packet}, run("kbinomial", k));
        }
        for (const nicsim::plan::TreeShape& shape : nicsim::plan::tree_shapes()) {
            const std::string tree(shape.name);
            if (!shape.takes_k && wanted(tree)) best.consider({tree, 0, packet}, run(tree, 0));
        }
    }

    void allgather(const nicsim::sim::Model& m, std::uint64_t bytes, std::uint64_t packet,
                   Best& best, std::string* why) const {
        for (int i = 0; i < nicsim_algorithm_count(NICSIM_COLL_ALLGATHER); ++i) {
            const std::string a(nicsim_algorithm_name(NICSIM_COLL_ALLGATHER, i));
            if (!wanted(a)) continue;
            nicsim::sim::CollectiveSpec spec;
            spec.model = m;
            spec.algorithm = a;
            spec.bytes = bytes;
            auto r = nicsim::sim::run_allgather(spec, nullptr, why);
            best.consider({a, 0, packet}, r ? std::optional<double>(r->latency_us) : std::nullopt);
        }
    }

    void barrier(const nicsim::sim::Model& m, Best& best, std::string* why) const {
        for (const nicsim::plan::BarrierAlgorithm& b : nicsim::plan::barrier_algorithms()) {
            const std::string a(b.name);
            if (!wanted(a)) continue;
            nicsim::sim::CollectiveSpec spec;
            spec.model = m;
            spec.algorithm = a;
            auto r = nicsim::sim::run_barrier(spec, nullptr, why);
            best.consider({a, 0}, r ? std::optional<double>(r->latency_us) : std::nullopt);
        }
    }

    const nicsim::sim::Model& model_;
    std::vector<std::uint64_t> packets_;  // 0: the model's own
    std::vector<std::string> only_;       // empty: every algorithm
};

// The provenance: the command, the method and the model's parameters.
std::vector<std::string> provenance(const Options& o, const std::string& name,
                                    const nicsim::sim::Model& model) {
    std::vector<std::string> out;
    out.push_back("\"generated_by\": " +
                  quote("nicoll-tune generate --model " + name +
                        o.echo({"--set", "--comm-sizes", "--sizes", "--colls", "--algorithms",
                                "--packet-sizes"})));
    out.push_back(
        "\"method\": \"the engine's simulator (sim/bcast.h, sim/collective.h), one run per "
        "algorithm, k and packet size (the model's mtu, and each of --packet-sizes) per cell, the "
        "lowest latency kept; nodes = communicator size; the model's own mtu is written as auto\"");
    std::string params = "\"model\": {";
    bool first = true;
    for (const auto& p : nicsim::sim::model_params()) {
        if (p.name == "nodes") continue;
        params += std::string(first ? "" : ", ") + quote(p.name) + ": " +
                  quote(nicsim::sim::model_param_value(model, p));
        first = false;
    }
    out.push_back(params + "}");
    return out;
}

}  // namespace

int cmd_generate_model(const Args& args) {
    std::string why;
    auto o = parse_options(args,
                           {"--model", "--comm-sizes", "--sizes", "--colls", "--algorithms",
                            "--packet-sizes", "--set", "--out"},
                           {}, {"--set"}, &why);
    if (!o) return usage_error("generate", why);
    if (!o->has("--comm-sizes") || !o->has("--sizes"))
        return usage_error("generate", "--model needs --comm-sizes and --sizes");
    std::string name;
    auto model = load_model(o->text("--model"), &name, &why);
    if (!model) return usage_error("generate", why);
    for (const std::string& set : o->all("--set")) {
        if (!nicsim::sim::set_model_param(*model, set, &why)) {
            return usage_error("generate", "--set " + why);
        }
    }
    if (!nicsim::sim::check_model(*model, &why)) {
        // A contradiction may come from the preset or from what --set changed in it.
        return usage_error("generate", "--model " + o->text("--model") + o->echo({"--set"}) + ": " +
                                           why);
    }
    auto comm = parse_list(o->text("--comm-sizes"), 2, 4096, &why);
    if (!comm) return usage_error("generate", "--comm-sizes: " + why);
    auto sizes = parse_list(o->text("--sizes"), 0, std::uint64_t{1} << 30, &why);
    if (!sizes) return usage_error("generate", "--sizes: " + why);
    auto colls = parse_colls(o->text("--colls", "bcast,allgather,barrier"), &why);
    if (!colls) return usage_error("generate", why);
    std::optional<std::vector<std::string>> only = std::vector<std::string>{};
    if (o->has("--algorithms")) only = parse_algorithms(o->text("--algorithms"), &why);
    if (!only) return usage_error("generate", why);
    // The model's own packet size (0, which the rules leave auto), then each of --packet-sizes.
    std::vector<std::uint64_t> packets{0};
    if (o->has("--packet-sizes")) {
        auto list = parse_list(o->text("--packet-sizes"), 1, tuning::kMaxPacketSize, &why);
        if (!list) return usage_error("generate", "--packet-sizes: " + why);
        packets.insert(packets.end(), list->begin(), list->end());
    }

    const Search search(*model, std::move(packets), std::move(*only));
    std::vector<Grid> grids;
    for (tuning::Section s : *colls) {
        Grid g;
        g.section = s;
        g.comm_sizes = *comm;
        g.sizes = s == tuning::Section::Barrier ? std::vector<std::uint64_t>{0} : *sizes;
        for (std::uint64_t n : *comm) {
            std::vector<Choice> row;
            for (std::uint64_t bytes : g.sizes) {
                std::string w;
                auto best = search.best(s, n, bytes, &w);
                if (!best) {
                    std::fprintf(
                        stderr,
                        "nicoll-tune generate: %s, %llu nodes, %llu bytes: no algorithm ran: %s\n",
                        std::string(tuning::section_name(s)).c_str(),
                        static_cast<unsigned long long>(n), static_cast<unsigned long long>(bytes),
                        w.empty() ? "--algorithms names none of its algorithms" : w.c_str());
                    return 1;
                }
                row.push_back(*best);
            }
            g.best.push_back(std::move(row));
        }
        grids.push_back(std::move(g));
    }
    return emit_table(*o, grids, provenance(*o, name, *model));
}

}  // namespace nicoll::tune
