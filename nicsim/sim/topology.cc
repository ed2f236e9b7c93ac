#include "sim/topology.h"

#include <algorithm>
#include <array>
#include <bit>
#include <limits>
#include <numeric>
#include <utility>

#include "sim/rng.h"

namespace nicsim::sim {
namespace {

// The irregular routing table holds 2 * switches^2 bytes: 32 MB at this many switches.
constexpr int kMaxIrregularSwitches = 4096;

// A routing table entry is a neighbour's index in one byte; this one marks states that no
// shortest route passes through, so a switch may have at most this many neighbours.
constexpr std::uint8_t kNoHop = std::numeric_limits<std::uint8_t>::max();

std::nullopt_t fail(std::string* why, std::string reason) {
    if (why) *why = std::move(reason);
    return std::nullopt;
}

}  // namespace

Topology Topology::crossbar(int nodes) {
    Topology topology;
    topology.kind_ = Kind::crossbar;
    topology.nodes_ = nodes;
    topology.hosts_per_switch_ = std::max(nodes, 1);
    topology.neighbours_.resize(1);
    return topology;
}

std::optional<Topology> Topology::hypercube(int nodes, int ports, std::string* why) {
    if (nodes < 1) {
        return fail(why, "hypercube: need at least 1 node, got " + std::to_string(nodes));
    }
    // A d-cube holds 2^d * (ports - d) nodes; 2^31 exceeds any int, so d stays below 32.
    std::int64_t most = 0;
    int d = 0;
    for (; d < ports; ++d) {
        const std::int64_t fit = (std::int64_t{1} << d) * (ports - d);
        if (fit >= nodes) break;
        most = std::max(most, fit);
    }
    if (d >= ports) {
        return fail(why, "hypercube: " + std::to_string(nodes) + " nodes do not fit on " +
                             std::to_string(ports) + "-port switches (at most " +
                             std::to_string(most) + ")");
    }

    Topology topology;
    topology.kind_ = Kind::hypercube;
    topology.nodes_ = nodes;
    topology.hosts_per_switch_ = ports - d;
    topology.dimensions_ = d;
    const int switches = 1 << d;
    topology.neighbours_.resize(switches);
    topology.link_from_.reserve(static_cast<std::size_t>(switches) * d);
    topology.link_to_.reserve(static_cast<std::size_t>(switches) * d);
    // Links in (switch, dimension) order, so that e-cube routing finds its link by arithmetic.
    for (int s = 0; s < switches; ++s) {
        for (int k = 0; k < d; ++k) {
            topology.link_from_.push_back(s);
            topology.link_to_.push_back(s ^ (1 << k));
            topology.neighbours_[s].push_back(s ^ (1 << k));
        }
        std::sort(topology.neighbours_[s].begin(), topology.neighbours_[s].end());
    }
    return topology;
}

std::optional<Topology> Topology::irregular(int nodes, int ports, int hosts_per_switch,
                                            std::uint64_t seed, std::string* why) {
    if (nodes < 1) {
        return fail(why, "irregular: need at least 1 node, got " + std::to_string(nodes));
    }
    if (hosts_per_switch < 1) {
        return fail(why, "irregular: need at least 1 host per switch, got " +
                             std::to_string(hosts_per_switch));
    }
    if (ports - 1 > kNoHop) {
        return fail(why, "irregular: " + std::to_string(ports) +
                             "-port switches have too many ports for the routing table (at most " +
                             std::to_string(kNoHop + 1) + ")");
    }
    if (hosts_per_switch > ports) {
        return fail(why, "irregular: " + std::to_string(hosts_per_switch) +
                             " hosts per switch do not fit on " + std::to_string(ports) +
                             "-port switches");
    }
    const int switches = (nodes - 1) / hosts_per_switch + 1;
    const int free_ports = ports - hosts_per_switch;  // the last switch may have more
    // Asking two free ports of every switch (one when there are only two switches) lets a
    // spanning tree grow in any random order without getting stuck.
    const int needed = switches == 1 ? 0 : switches == 2 ? 1 : 2;
    if (free_ports < needed) {
        return fail(why, "irregular: " + std::to_string(ports) + "-port switches with " +
                             std::to_string(hosts_per_switch) + " hosts each leave " +
                             std::to_string(free_ports) + " ports free; connecting " +
                             std::to_string(switches) + " switches needs " +
                             std::to_string(needed));
    }
    if (switches > kMaxIrregularSwitches) {
        return fail(why, "irregular: " + std::to_string(nodes) + " nodes need " +
                             std::to_string(switches) + " switches, more than the " +
                             std::to_string(kMaxIrregularSwitches) +
                             " the routing table is sized for");
    }

    Rng rng(seed);
    std::vector<int> free(switches, free_ports);
    free.back() = ports - (nodes - (switches - 1) * hosts_per_switch);
    std::vector<std::vector<int>> adjacent(switches);
    auto cable = [&](int u, int v) {
        adjacent[u].push_back(v);
        adjacent[v].push_back(u);
        --free[u];
        --free[v];
    };

    // A random spanning tree: switches join in random order, each cabled to a random switch
    // already in the tree that has a free port.
    std::vector<int> order(switches);
    std::iota(order.begin(), order.end(), 0);
    for (int i = switches - 1; i > 0; --i) std::swap(order[i], order[rng.below(i + 1)]);
    std::vector<int> open{order[0]};  // in the tree, with a free port
    for (int i = 1; i < switches; ++i) {
        const std::size_t j = rng.below(open.size());
        const int parent = open[j];
        cable(parent, order[i]);
        if (free[parent] == 0) {
            open[j] = open.back();
            open.pop_back();
        }
        if (free[order[i]] > 0) open.push_back(order[i]);
    }

    // Extra cables: a random switch with a free port, to a random switch it could still be cabled
    // to. Free ports only get fewer and cables only more, so a switch without such a partner
    // never gets one and drops out; this ends when no pair is left.
    open.clear();
    for (int s = 0; s < switches; ++s) {
        if (free[s] > 0) open.push_back(s);
    }
    std::vector<char> cabled(switches, 0);
    std::vector<int> partners;
    while (open.size() >= 2) {
        const std::size_t i = rng.below(open.size());
        const int u = open[i];
        for (int v : adjacent[u]) cabled[v] = 1;
        partners.clear();
        for (int v : open) {
            if (v != u && !cabled[v]) partners.push_back(v);
        }
        for (int v : adjacent[u]) cabled[v] = 0;
        if (partners.empty()) {
            open.erase(open.begin() + static_cast<std::ptrdiff_t>(i));
            continue;
        }
        cable(u, partners[rng.below(partners.size())]);
        std::erase_if(open, [&](int s) { return free[s] == 0; });
    }
    for (auto& list : adjacent) std::sort(list.begin(), list.end());

    // Levels from a breadth-first search from switch 0.
    std::vector<int> level(switches, -1);
    std::vector<int> queue{0};
    level[0] = 0;
    for (std::size_t head = 0; head < queue.size(); ++head) {
        for (int v : adjacent[queue[head]]) {
            if (level[v] < 0) {
                level[v] = level[queue[head]] + 1;
                queue.push_back(v);
            }
        }
    }
    // Whether x is the up end of a cable between x and y.
    auto above = [&](int x, int y) { return std::pair(level[x], x) < std::pair(level[y], y); };

    Topology topology;
    topology.kind_ = Kind::irregular;
    topology.nodes_ = nodes;
    topology.hosts_per_switch_ = hosts_per_switch;
    // Links grouped by switch, in the order of its sorted neighbours.
    topology.first_link_.resize(switches);
    for (int s = 0; s < switches; ++s) {
        topology.first_link_[s] =
            static_cast<LinkId>(topology.first_switch_link() + topology.link_from_.size());
        for (int v : adjacent[s]) {
            topology.link_from_.push_back(s);
            topology.link_to_.push_back(v);
            topology.link_down_.push_back(!above(v, s));
        }
    }

    // For each destination t, a breadth-first search backwards from t over states (switch,
    // went_down) gives each state's distance to t; a state's next hop is then the legal one into
    // the nearest state, the first in neighbour order at a tie.
    constexpr int kFar = std::numeric_limits<int>::max();
    const std::size_t n = switches;
    topology.next_.assign(2 * n * n, kNoHop);
    std::vector<int> distance(2 * n);  // of state (s, went_down) at 2 * s + went_down
    std::vector<int> states(2 * n);
    for (int t = 0; t < switches; ++t) {
        std::fill(distance.begin(), distance.end(), kFar);
        distance[2 * t] = distance[2 * t + 1] = 0;
        states[0] = 2 * t;
        states[1] = 2 * t + 1;
        for (std::size_t head = 0, tail = 2; head < tail; ++head) {
            const int v = states[head] / 2;
            const bool went_down = states[head] % 2;
            for (int u : adjacent[v]) {
                // Link u -> v: going up, it leads from (u, false) to (v, false); going down, from
                // either state of u to (v, true).
                const bool up = above(v, u);
                if (up == went_down) continue;
                for (int from = 2 * u; from <= 2 * u + !up; ++from) {
                    if (distance[from] == kFar) {
                        distance[from] = distance[states[head]] + 1;
                        states[tail++] = from;
                    }
                }
            }
        }
        for (int s = 0; s < switches; ++s) {
            if (s == t) continue;
            for (int went_down = 0; went_down < 2; ++went_down) {
                int best = kFar;
                std::uint8_t& next = topology.next_[(t * 2 + went_down) * n + s];
                for (std::uint8_t k = 0; k < adjacent[s].size(); ++k) {
                    const int v = adjacent[s][k];
                    const bool up = above(v, s);
                    if (up && went_down) continue;
                    const int d = distance[2 * v + !up];
                    if (d < best) {
                        best = d;
                        next = k;
                    }
                }
            }
        }
    }
    topology.neighbours_ = std::move(adjacent);
    return topology;
}

std::string_view Topology::kind() const {
    static constexpr std::array<std::string_view, 3> names{"crossbar", "hypercube", "irregular"};
    return names[static_cast<int>(kind_)];
}

template <typename Visit>
void Topology::walk(int s, int t, Visit&& visit) const {
    switch (kind_) {
        case Kind::crossbar:
            return;
        case Kind::hypercube:
            while (s != t) {
                const int k = std::countr_zero(static_cast<unsigned>(s ^ t));
                visit(static_cast<LinkId>(first_switch_link() +
                                          static_cast<std::size_t>(s) * dimensions_ + k));
                s ^= 1 << k;
            }
            return;
        case Kind::irregular: {
            const std::size_t n = neighbours_.size();
            for (std::size_t went_down = 0; s != t;) {
                const LinkId link = first_link_[s] + next_[(t * 2 + went_down) * n + s];
                visit(link);
                const std::size_t i = link - first_switch_link();
                s = static_cast<int>(link_to_[i]);
                went_down |= link_down_[i];
            }
            return;
        }
    }
}

void Topology::route(int a, int b, std::vector<LinkId>& path) const {
    path.push_back(2 * static_cast<LinkId>(a));
    walk(switch_of(a), switch_of(b), [&](LinkId link) { path.push_back(link); });
    path.push_back(2 * static_cast<LinkId>(b) + 1);
}

int Topology::switch_hops(int a, int b) const {
    int hops = 1;
    walk(switch_of(a), switch_of(b), [&](LinkId) { ++hops; });
    return hops;
}

std::string Topology::link_name(LinkId link) const {
    if (link < first_switch_link()) {
        const int node = static_cast<int>(link / 2);
        const std::string end = "node" + std::to_string(node);
        const std::string sw = "sw" + std::to_string(switch_of(node));
        return link % 2 == 0 ? end + ">" + sw : sw + ">" + end;
    }
    const std::size_t i = link - first_switch_link();
    return "sw" + std::to_string(link_from_[i]) + ">sw" + std::to_string(link_to_[i]);
}

}  // namespace nicsim::sim
