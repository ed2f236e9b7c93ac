// Simulator: the network a packet crosses.
//
// A Topology is nodes on switches, switches wired to each other, and a routing function that
// gives every packet its fixed path. Links are directional (a cable is two links, one per
// direction) and numbered 0..links()-1, so the simulator keeps what it knows about a link (when it
// is next free) in a flat vector indexed by LinkId. Routes are computed once, at construction,
// into tables: route() runs once per simulated packet and must cost O(hops), nothing more.
//
// Three shapes, each from a paper the simulator reproduces:
//   crossbar   every node on one switch: contention only at the nodes' own links
//   hypercube  Bhoedjang et al.'s 64-node Myrinet cluster: sixteen 8-port switches as a 4-cube,
//              four nodes per switch, dimension-order (e-cube) routing
//   irregular  Kesavan and Panda's network: random switch interconnections, up*/down* routing
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace nicsim::sim {

using LinkId = std::uint32_t;

class Topology {
public:
    // `nodes` (>= 1) nodes on one switch with as many ports as needed.
    static Topology crossbar(int nodes);

    // 2^d switches of `ports` ports wired as a d-cube, ports - d nodes on each, with the smallest
    // d that holds `nodes`; node i is on switch i / (ports - d). A packet corrects the lowest
    // differing dimension first (e-cube), which is deadlock-free. Empty, with a one-line reason
    // in *why (when `why` is not null), when no d holds `nodes` or nodes < 1.
    static std::optional<Topology> hypercube(int nodes, int ports, std::string* why);

    // ceil(nodes / hosts_per_switch) switches of `ports` ports, node i on switch
    // i / hosts_per_switch, the ports left over wired at random (from `seed`): a random spanning
    // tree, then random extra cables between switches that still have free ports until no pair
    // that is not yet cabled has a free port each. No switch is cabled to itself or twice to
    // another switch.
    //
    // Up*/down* routing: a breadth-first search from switch 0 gives each switch a level; the
    // "up" end of a cable is the switch with the lower (level, id). A legal route takes zero or
    // more up links, then zero or more down links, so no cycle of waiting packets can form. Each
    // packet takes a shortest legal route; at a tie, the lower-numbered next switch.
    //
    // Empty, with a one-line reason in *why (when not null), when the switches cannot be
    // connected (too few free ports) or the routing table cannot hold them (too many switches or
    // ports).
    static std::optional<Topology> irregular(int nodes, int ports, int hosts_per_switch,
                                             std::uint64_t seed, std::string* why);

    int nodes() const { return nodes_; }
    int switches() const { return static_cast<int>(neighbours_.size()); }
    std::size_t links() const { return first_switch_link() + link_from_.size(); }
    // "crossbar", "hypercube" or "irregular".
    std::string_view kind() const;
    int switch_of(int node) const { return node / hosts_per_switch_; }
    // For each switch, the switches it is cabled to, sorted.
    const std::vector<std::vector<int>>& switch_neighbours() const { return neighbours_; }

    // Appends to `path` the links a packet from node a to node b (a != b) crosses, in order: a's
    // link into its switch, the links between switches, the link from b's switch into b. Does
    // not allocate when `path` has room for them.
    void route(int a, int b, std::vector<LinkId>& path) const;
    // Switches a packet from a to b passes through: the length of its route minus one.
    int switch_hops(int a, int b) const;
    // For traces: "node3>sw0", "sw0>sw5", "sw5>node9".
    std::string link_name(LinkId link) const;

private:
    enum class Kind { crossbar, hypercube, irregular };

    Topology() = default;

    // Node n's link into its switch is 2n, the link back is 2n + 1; switch-to-switch links follow.
    std::size_t first_switch_link() const { return 2 * static_cast<std::size_t>(nodes_); }
    // Calls visit(link) for each switch-to-switch link from switch s to switch t, in order.
    template <typename Visit>
    void walk(int s, int t, Visit&& visit) const;

    Kind kind_ = Kind::crossbar;
    int nodes_ = 0;
    int hosts_per_switch_ = 1;
    int dimensions_ = 0;  // hypercube only
    std::vector<std::vector<int>> neighbours_;
    // Switch-to-switch link first_switch_link() + i runs from link_from_[i] to link_to_[i].
    std::vector<std::uint32_t> link_from_;
    std::vector<std::uint32_t> link_to_;
    // Irregular only. link_down_[i]: link i leads down, after which a packet may not go up.
    std::vector<std::uint8_t> link_down_;
    // Irregular only. Switch s's links are first_link_[s] onwards, in the order of its sorted
    // neighbours; the next hop from s towards switch t is its link number
    // next_[(t * 2 + went_down) * switches() + s]. One byte an entry, and a destination's entries
    // together, keep the table small enough to stay in cache.
    std::vector<LinkId> first_link_;
    std::vector<std::uint8_t> next_;
};

}  // namespace nicsim::sim
