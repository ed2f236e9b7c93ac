// Planner: k-ary n-trees, the fat trees of the Quadrics network (Coll et al. §2-3).
//
// A k-ary n-tree has k^n nodes and n levels of k^(n-1) switches, each with k links down and
// (below the top) k links up. Quadrics builds the quaternary one (k = 4) from 8-port Elite
// switches. A switch is named (level, block, replica): at level l it covers the block of k^(l+1)
// nodes numbered `block`, and is one of k^l equivalent switches for that block:
//
//   level 1        (1,0,0)    (1,0,1)    (1,0,2)    (1,0,3)        16 nodes, k = 4, n = 2
//                   ||||  \\\\ ...  (complete bipartite between the levels)
//   level 0    (0,0,0)    (0,1,0)    (0,2,0)    (0,3,0)
//               0 1 2 3    4 5 6 7   8 9 10 11  12 13 14 15
//
// Up port u of (l, b, r) leads to (l+1, b / k, r + u k^l); down port j of (l, b, r) leads to
// (l-1, b k + j, r mod k^(l-1)), or at level 0 to node b k + j. So the replica at level l records
// the up ports a packet took to get there, and the one path down from a switch to a node is fixed.
//
// Routing is minimal: a packet climbs to a nearest common ancestor of source and destination,
// choosing any up port (adaptive), then descends on the fixed path (deterministic).
//
// Hardware multicast may replicate a packet only in the broadcast tree: the switches with replica
// 0, which descend from the top-left switch (n-1, 0, 0) to every node (Definition 1). The root
// switch of a range of nodes is its nearest common ancestor in that tree (Definition 2). Reaching
// a broadcast-tree switch at level R from below takes the up ports 0 of the first R hops, the
// broadcast tree's own links; beyond level R the climb is adaptive again.
//
// A network with fewer than k^n nodes (Coll et al.'s 32-node cluster on a 64-port tree) populates
// nodes 0..nodes-1; the rest of the ports are empty.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <span>
#include <vector>

#include "core/status.h"

namespace nicsim::plan {

// A group of adjacent nodes [lo, hi], both ends included, as Coll et al. writes [x - x'].
struct NodeRange {
    Rank lo = 0;
    Rank hi = 0;

    Rank size() const { return hi - lo + 1; }
    bool contains(Rank node) const { return lo <= node && node <= hi; }
    friend bool operator==(const NodeRange&, const NodeRange&) = default;
};

struct Switch {
    int level = 0;
    std::int64_t block = 0;    // the k^(level+1) nodes it covers: block * k^(level+1) onwards
    std::int64_t replica = 0;  // 0 .. k^level - 1; 0 is the broadcast tree
    friend bool operator==(const Switch&, const Switch&) = default;
};

using FatLink = std::uint32_t;

class FatTree {
public:
    static constexpr int kMaxLevels = 10;

    // The smallest k-ary tree that holds `nodes` (1 .. k^kMaxLevels), at least one level.
    static FatTree holding(Rank nodes, int arity = 4);

    int arity() const { return k_; }
    int levels() const { return n_; }
    Rank nodes() const { return nodes_; }
    // k^e for e = 0..levels().
    std::int64_t power(int e) const { return pow_[static_cast<std::size_t>(e)]; }
    std::int64_t switches_per_level() const { return power(n_ - 1); }

    // The block of size k^level that `node` is in: node / k^level. Coll et al.'s floor(x / 4^l).
    std::int64_t block(Rank node, int level) const { return node / power(level); }
    // The level of the root switch of `range` (0 for a range inside one level-0 switch).
    int root_level(NodeRange range) const;
    Switch root_switch(NodeRange range) const;

    // Links are directional and numbered: node v's link up into its switch is 2v, the link down
    // to it 2v + 1; then for each switch below the top and each up port u, the link up and the
    // link back down. links() counts them all.
    std::size_t links() const;
    FatLink node_up(Rank node) const { return 2 * static_cast<FatLink>(node); }
    FatLink node_down(Rank node) const { return 2 * static_cast<FatLink>(node) + 1; }
    FatLink switch_up(Switch s, int port) const;    // from s up through its port
    FatLink switch_down(Switch s, int port) const;  // back down into s through that port
    Switch up(Switch s, int port) const;
    Switch leaf_of(Rank node) const { return {0, node / k_, 0}; }

    // Picks one of the `k` up ports of switch `from` for an adaptive hop; the links are the
    // candidates' up links in port order. The simulator picks the least loaded.
    using Chooser = std::function<int(Switch from, std::span<const FatLink> up_links)>;

    // The links a unicast packet from a to b (a != b) crosses, in order.
    void unicast_route(Rank a, Rank b, const Chooser& choose, std::vector<FatLink>& path) const;

    // The links a hardware multicast from `source` to `dest` takes: the climb to the root switch
    // (the broadcast tree's links to level R = root_level(dest), then adaptive hops and a fixed
    // descent when the source lies outside the root switch's block), then the broadcast tree's
    // links down to every node of `dest`. `hops[i]` is the number of links the packet's head
    // crosses before it enters path[i] (for timing). `dest` may contain the source.
    void multicast_route(Rank source, NodeRange dest, const Chooser& choose,
                         std::vector<FatLink>& path, std::vector<int>* hops = nullptr) const;

    // For traces and Graphviz: "node3>sw(0,0,0)", "sw(1,0,2)>sw(0,3,0)".
    std::string link_name(FatLink link) const;

private:
    FatTree(int arity, int levels, Rank nodes);
    std::int64_t switch_index(Switch s) const {
        return (static_cast<std::int64_t>(s.level) * power(n_ - 1)) + s.block * power(s.level) +
               s.replica;
    }
    void descend(Switch s, NodeRange dest, int hops, std::vector<FatLink>& path,
                 std::vector<int>* hop_list) const;

    int k_ = 4;
    int n_ = 1;
    Rank nodes_ = 1;
    std::vector<std::int64_t> pow_;
};

}  // namespace nicsim::plan
