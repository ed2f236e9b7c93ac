#include "sim/hw_collective.h"

#include <algorithm>

#include "plan/tree.h"
#include "sim/hw_multicast.h"
#include "sim/simulator.h"

namespace nicsim::sim {

namespace {

// Tests of a barrier that never succeeds (a bug) stop here, and the run reports the nodes that
// never completed, rather than loop for ever.
constexpr std::uint64_t kMaxTests = 1'000'000;

// Wall-clock bound on the backtracking planner inside a simulation, in recursive calls.
constexpr std::uint64_t kOptimalCalls = 1'000'000;

// Each node's part of the tree: the transactions it sends once it has the message (or, for a
// barrier, the groups it tests and releases), in order, and for the software tree its parent.
struct Part {
    std::vector<HwMulticastNetwork::Send> sends;
    Rank parent = -1;
};

struct Plan {
    std::string tree;
    int depth = 0;
    plan::HwTree multicasts;
    std::vector<Part> parts;  // per node
    std::vector<bool> live;
};

std::optional<Plan> make_plan(const HwCollectiveSpec& spec, std::uint64_t bytes, std::string* why) {
    const Rank n = spec.model.nodes;
    if (spec.model.topology != "fattree") {
        *why = "--tree " + spec.tree + ": needs the fattree topology (--preset quadrics-elan3)";
        return std::nullopt;
    }
    // A k-ary n-tree's switches have k links down and k up (Coll et al. §2: Quadrics' 8-port Elite
    // switches, k = 4). N need not be a power of k: the first N ports of the smallest tree that
    // holds them are populated (Coll et al. §6 runs 32 nodes, Table 1 2048), but that tree has at
    // most FatTree::kMaxLevels levels.
    const int ports = spec.model.switch_ports;
    if (ports % 2 != 0 || ports < 4) {
        *why = "switch_ports=" + std::to_string(ports) +
               ": a fattree switch has as many links up as down, at least 2 each: an even number "
               "from 4";
        return std::nullopt;
    }
    std::int64_t capacity = 1;
    for (int l = 0; l < plan::FatTree::kMaxLevels && capacity < n; ++l) capacity *= ports / 2;
    if (capacity < n) {
        *why = "--nodes " + std::to_string(n) + ": a fattree of " + std::to_string(ports) +
               "-port switches holds at most " + std::to_string(capacity) + " nodes in " +
               std::to_string(plan::FatTree::kMaxLevels) + " levels";
        return std::nullopt;
    }
    Plan p;
    p.tree = spec.tree;
    p.live.assign(static_cast<std::size_t>(n), true);
    for (const Rank v : spec.faulty) {
        if (v < 0 || v >= n) {
            *why = "--faulty " + std::to_string(v) + ": not a node of 0.." + std::to_string(n - 1);
            return std::nullopt;
        }
        p.live[static_cast<std::size_t>(v)] = false;
    }
    if (spec.root < 0 || spec.root >= n) {
        *why =
            "--root " + std::to_string(spec.root) + ": not a node of 0.." + std::to_string(n - 1);
        return std::nullopt;
    }
    if (!p.live[static_cast<std::size_t>(spec.root)]) {
        *why = "--root " + std::to_string(spec.root) + ": the root is faulty";
        return std::nullopt;
    }
    p.parts.resize(static_cast<std::size_t>(n));
    const std::vector<plan::NodeRange> groups = plan::live_groups(n, spec.faulty);
    const plan::FatTree net = plan::FatTree::holding(n, ports / 2);
    if (spec.tree == "software") {
        // The live nodes in order from the root on, and over those positions a balanced tree
        // with the network's fan-out: position q's children are kq + 1 .. kq + k.
        std::vector<Rank> order;
        for (Rank v = 0; v < n; ++v) {
            if (p.live[static_cast<std::size_t>((spec.root + v) % n)])
                order.push_back((spec.root + v) % n);
        }
        const auto size = static_cast<Rank>(order.size());
        std::vector<std::vector<Rank>> children(static_cast<std::size_t>(size));
        for (Rank c = 1; c < size; ++c)
            children[static_cast<std::size_t>((c - 1) / net.arity())].push_back(c);
        const plan::Tree shape = plan::tree_from_children(0, std::move(children));
        p.depth = plan::depth(shape);
        for (Rank pos = 0; pos < shape.size(); ++pos) {
            Part& part = p.parts[static_cast<std::size_t>(order[static_cast<std::size_t>(pos)])];
            if (shape.parent[pos] >= 0)
                part.parent = order[static_cast<std::size_t>(shape.parent[pos])];
            for (const Rank c : shape.children[pos]) {
                const Rank child = order[static_cast<std::size_t>(c)];
                part.sends.push_back(
                    {order[static_cast<std::size_t>(pos)], {child, child}, false, bytes});
            }
        }
        return p;
    }
    if (spec.tree == "hardware") {
        if (groups.size() != 1) {
            *why = "--tree hardware: the live nodes are not adjacent (" +
                   std::to_string(groups.size()) + " groups); use --tree hwtree or software";
            return std::nullopt;
        }
        p.multicasts = {spec.root, {{{spec.root, groups.front()}}}};
    } else if (spec.tree == "hwtree") {
        if (spec.planner == "greedy") {
            p.multicasts = plan::greedy_hw_tree(net, spec.root, groups);
        } else if (spec.planner == "optimal") {
            p.multicasts = plan::optimal_hw_tree(net, spec.root, groups, kOptimalCalls).tree;
        } else {
            *why = "--planner " + spec.planner + ": not one of greedy|optimal";
            return std::nullopt;
        }
    } else {
        *why = "--tree " + spec.tree + ": not one of " + kHwTreeNames + " on a fattree network";
        return std::nullopt;
    }
    p.depth = p.multicasts.depth();
    for (const plan::HwStep& step : p.multicasts.steps) {
        for (const plan::HwMulticast& m : step) {
            p.parts[static_cast<std::size_t>(m.source)].sends.push_back(
                {m.source, m.dest, true, bytes});
        }
    }
    return p;
}

// Runs one collective over a plan on the modeled network.
class Runner final : public HwMulticastUser, public EventHandler {
public:
    Runner(const HwCollectiveSpec& spec, Plan plan, bool barrier, Trace* trace)
        : spec_(spec),
          plan_(std::move(plan)),
          barrier_(barrier),
          on_nic_(barrier && plan_.tree != "software"),
          net_(spec.model, sim_, trace, *this) {
        const auto n = static_cast<std::size_t>(spec.model.nodes);
        done_.assign(n, -1);
        has_.assign(n, false);
        ready_.assign(n, false);
        next_test_.assign(n, 0);
        waiting_.assign(n, 0);
        for (std::size_t v = 0; v < n; ++v) {
            if (plan_.parts[v].parent >= 0)
                ++waiting_[static_cast<std::size_t>(plan_.parts[v].parent)];
        }
    }

    std::optional<HwCollectiveResult> run(std::string* why) {
        const Rank root = spec_.root;
        if (!barrier_) {
            got_message(root, 0);
        } else {
            for (Rank v = 0; v < spec_.model.nodes; ++v) {
                if (!plan_.live[static_cast<std::size_t>(v)]) continue;
                if (on_nic_) {
                    sim_.schedule(from_us(spec_.model.ts), *this, 0, static_cast<std::uint32_t>(v));
                } else {
                    arrived_up(v, 0, false);
                }
            }
        }
        HwCollectiveResult r;
        r.events = sim_.run();
        r.tree = plan_.tree;
        r.depth = plan_.depth;
        r.plan = plan_.multicasts;
        r.packets = net_.packets();
        r.tests = tests_;
        for (Rank v = 0; v < spec_.model.nodes; ++v) {
            const auto i = static_cast<std::size_t>(v);
            if (!plan_.live[i]) {
                r.done_us.push_back(-1);
                continue;
            }
            if (done_[i] < 0) {
                *why =
                    "simulation broke an invariant: node " + std::to_string(v) + " never completed";
                return std::nullopt;
            }
            r.done_us.push_back(done_[i]);
            r.latency_us = std::max(r.latency_us, done_[i]);
        }
        if (!barrier_ && r.latency_us > 0)
            r.bandwidth_mbs = static_cast<double>(spec_.bytes) / r.latency_us;
        return r;
    }

    // A barrier host has told its NIC it arrived: start testing, last step first.
    void on_event(std::uint32_t, std::uint32_t arg) override {
        const auto v = static_cast<Rank>(arg);
        next_test_[arg] = plan_.parts[arg].sends.size();
        test_next(v, sim_.now());
    }

    void delivered(Rank node, std::uint32_t tx, Time at) override {
        if (barrier_ && !on_nic_ && up_[tx]) {
            arrived_up(node, at, true);
        } else {
            got_message(node, at);
        }
    }

    void acknowledged(Rank source, std::uint32_t tx, bool positive, Time at) override {
        if (!tested_[tx]) return;  // the acks of data and releases tell nothing new
        if (!positive) {
            ++next_test_[static_cast<std::size_t>(source)];  // the same group again
        }
        test_next(source, at);
    }

    // The root may lie in a group a later step reaches (its own run of nodes); it is not that
    // multicast's child, and waits on it, so it answers yes rather than wait for itself.
    bool test(Rank node, std::uint32_t) override {
        return node == spec_.root || ready_[static_cast<std::size_t>(node)];
    }

private:
    std::uint32_t post(const HwMulticastNetwork::Send& send, Time at, bool up, bool tested) {
        const std::uint32_t tx = net_.post(send, at);
        up_.resize(tx + 1, false);
        tested_.resize(tx + 1, false);
        up_[tx] = up;
        tested_[tx] = tested;
        return tx;
    }

    // The message (broadcast data or barrier release) reached `node` at `at`: pass it on.
    void got_message(Rank node, Time at) {
        const auto i = static_cast<std::size_t>(node);
        if (has_[i]) return;  // a multicast over the root's own group brings it a copy
        has_[i] = true;
        done_[i] = to_us(at) + (on_nic_ ? spec_.model.tr : 0);
        for (HwMulticastNetwork::Send send : plan_.parts[i].sends) {
            send.bytes = barrier_ ? 0 : spec_.bytes;
            send.on_nic = on_nic_;
            post(send, at, false, false);
        }
    }

    // Software barrier: `node` arrived (at 0, before any message), or heard from one more child;
    // once every child has, it tells its parent, or, the root, releases.
    void arrived_up(Rank node, Time at, bool from_child) {
        const auto i = static_cast<std::size_t>(node);
        if (from_child) --waiting_[i];
        if (waiting_[i] != 0) return;
        const Rank parent = plan_.parts[i].parent;
        if (parent < 0) {
            got_message(node, at);
        } else {
            post({node, {parent, parent}, false, 0}, at, true, false);
        }
    }

    // Barrier on the NICs: test the next group (sends are in step order, tested backwards), or,
    // all answered, the node is ready; the root then releases.
    void test_next(Rank node, Time at) {
        const auto i = static_cast<std::size_t>(node);
        if (next_test_[i] > 0 && tests_ < kMaxTests) {
            HwMulticastNetwork::Send send = plan_.parts[i].sends[--next_test_[i]];
            send.bytes = 0;
            send.on_nic = true;
            send.test = true;
            ++tests_;
            post(send, at, false, true);
            return;
        }
        if (next_test_[i] > 0) return;  // gave up: kMaxTests
        ready_[i] = true;
        if (node == spec_.root) got_message(node, at);
    }

    const HwCollectiveSpec& spec_;
    Plan plan_;
    bool barrier_;
    bool on_nic_;
    Simulator sim_;
    HwMulticastNetwork net_;
    std::vector<double> done_;
    std::vector<bool> has_, ready_;
    std::vector<std::size_t> next_test_;
    std::vector<int> waiting_;   // software barrier: children not heard from yet
    std::vector<bool> up_, tested_;  // per transaction
    std::uint64_t tests_ = 0;
};

std::optional<HwCollectiveResult> run(const HwCollectiveSpec& spec, bool barrier, Trace* trace,
                                      std::string* why) {
    auto plan = make_plan(spec, barrier ? 0 : spec.bytes, why);
    if (!plan) return std::nullopt;
    return Runner(spec, std::move(*plan), barrier, trace).run(why);
}

}  // namespace

std::vector<Rank> random_faults(Rank nodes, std::int64_t count, Rank keep, Rng& rng) {
    // A partial Fisher-Yates shuffle of the nodes other than `keep`.
    std::vector<Rank> others;
    for (Rank v = 0; v < nodes; ++v) {
        if (v != keep) others.push_back(v);
    }
    for (std::int64_t i = 0; i < count; ++i) {
        const auto j =
            static_cast<std::size_t>(i) +
            static_cast<std::size_t>(rng.below(others.size() - static_cast<std::size_t>(i)));
        std::swap(others[static_cast<std::size_t>(i)], others[j]);
    }
    others.resize(static_cast<std::size_t>(count));
    std::sort(others.begin(), others.end());
    return others;
}

std::optional<HwCollectiveResult> run_hw_bcast(const HwCollectiveSpec& spec, Trace* trace,
                                               std::string* why) {
    return run(spec, false, trace, why);
}

std::optional<HwCollectiveResult> run_hw_barrier(const HwCollectiveSpec& spec, Trace* trace,
                                                 std::string* why) {
    return run(spec, true, trace, why);
}

}  // namespace nicsim::sim
