// What both hardware-tree planners share: the groups, their order, the checks of a preselected
// combination and the choice of a source for each group.
#include "plan/hwtree.h"

#include <algorithm>
#include <array>
#include <set>

#include "plan/hwtree_search.h"

namespace nicsim::plan {

std::vector<NodeRange> live_groups(Rank nodes, std::span<const Rank> faulty) {
    std::vector<bool> down(static_cast<std::size_t>(nodes), false);
    for (const Rank v : faulty) {
        if (v >= 0 && v < nodes) down[static_cast<std::size_t>(v)] = true;
    }
    std::vector<NodeRange> groups;
    for (Rank v = 0; v < nodes; ++v) {
        if (down[static_cast<std::size_t>(v)]) continue;
        if (!groups.empty() && groups.back().hi == v - 1) {
            groups.back().hi = v;
        } else {
            groups.push_back({v, v});
        }
    }
    return groups;
}

void sort_groups(const FatTree& net, std::vector<NodeRange>& groups) {
    std::sort(groups.begin(), groups.end(), [&](NodeRange a, NodeRange b) {
        if (a.size() != b.size()) return a.size() > b.size();
        const int la = net.root_level(a), lb = net.root_level(b);
        if (la != lb) return la > lb;
        return a.lo < b.lo;
    });
}

std::vector<NodeRange> subtract(std::span<const NodeRange> pending,
                                std::span<const NodeRange> reached) {
    std::vector<NodeRange> sorted(reached.begin(), reached.end());
    std::sort(sorted.begin(), sorted.end(), [](NodeRange a, NodeRange b) { return a.lo < b.lo; });
    std::vector<NodeRange> out;
    std::size_t r = 0;
    for (const NodeRange& g : pending) {
        Rank lo = g.lo;
        while (r < sorted.size() && sorted[r].hi < lo) ++r;
        for (std::size_t i = r; i < sorted.size() && sorted[i].lo <= g.hi && lo <= g.hi; ++i) {
            if (sorted[i].lo > lo) out.push_back({lo, sorted[i].lo - 1});
            lo = std::max(lo, sorted[i].hi + 1);
        }
        if (lo <= g.hi) out.push_back({lo, g.hi});
    }
    return out;
}

std::vector<NodeRange> merge(std::span<const NodeRange> a, std::span<const NodeRange> b) {
    std::vector<NodeRange> all(a.begin(), a.end());
    all.insert(all.end(), b.begin(), b.end());
    std::sort(all.begin(), all.end(), [](NodeRange x, NodeRange y) { return x.lo < y.lo; });
    std::vector<NodeRange> out;
    for (const NodeRange& r : all) {
        if (!out.empty() && r.lo <= out.back().hi + 1) {
            out.back().hi = std::max(out.back().hi, r.hi);
        } else {
            out.push_back(r);
        }
    }
    return out;
}

std::optional<HwStep> assign_sources(const FatTree& net, std::span<const NodeRange> sources,
                                     std::span<const NodeRange> groups) {
    // Highest root level first. A group at level R needs a source whose block of k^R nodes no
    // group at level >= R climbs out of yet; the blocks below R inside it are then free too,
    // since every earlier climb left from a different block of k^R nodes. Level-0 groups need
    // only a source of their own.
    std::vector<std::size_t> order(groups.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
        return net.root_level(groups[a]) > net.root_level(groups[b]);
    });
    std::vector<std::set<std::int64_t>> used(static_cast<std::size_t>(net.levels()));
    std::set<Rank> busy;
    HwStep step(groups.size());
    for (const std::size_t i : order) {
        const int level = net.root_level(groups[i]);
        std::optional<Rank> chosen;
        for (const NodeRange& r : sources) {
            for (std::int64_t b = net.block(r.lo, level); b <= net.block(r.hi, level) && !chosen;
                 ++b) {
                if (level > 0 && used[static_cast<std::size_t>(level)].count(b)) continue;
                // The block's first source node that sends nothing yet.
                const auto first = std::max<std::int64_t>(r.lo, b * net.power(level));
                const auto last = std::min<std::int64_t>(r.hi, (b + 1) * net.power(level) - 1);
                for (auto v = static_cast<Rank>(first); v <= last && !chosen; ++v) {
                    if (!busy.count(v)) chosen = v;
                }
            }
            if (chosen) break;
        }
        if (!chosen) return std::nullopt;
        busy.insert(*chosen);
        for (int m = 1; m <= level; ++m)
            used[static_cast<std::size_t>(m)].insert(net.block(*chosen, m));
        step[i] = {*chosen, groups[i]};
    }
    std::sort(step.begin(), step.end(), [](const HwMulticast& a, const HwMulticast& b) {
        return a.dest.lo < b.dest.lo;
    });
    return step;
}

namespace {

int needs_top(const FatTree& net, std::span<const NodeRange> groups) {
    int top = 0;
    for (const NodeRange& g : groups) top = std::max(top, net.root_level(g));
    return top;
}

}  // namespace

Check check_combination(const FatTree& net, std::span<const NodeRange> sources,
                        std::span<const NodeRange> combination) {
    Check out;
    out.by_position.assign(combination.begin(), combination.end());
    std::sort(out.by_position.begin(), out.by_position.end(),
              [](NodeRange a, NodeRange b) { return a.lo < b.lo; });
    if (auto o = first_backward_overlap(net, out.by_position)) {
        out.backward = o;
        return out;
    }
    out.forward_level =
        forward_overlap_level(differences(capabilities(net, sources), needs(net, combination)));
    if (out.forward_level < 0) {
        out.step = assign_sources(net, sources, out.by_position);
        // Eq. 3 guarantees an assignment; were it ever wrong, the split of the highest group
        // keeps the tree valid rather than its multicasts colliding.
        if (!out.step) out.forward_level = needs_top(net, combination);
    }
    return out;
}

std::vector<std::size_t> forward_splits(const FatTree& net, std::span<const NodeRange> combination,
                                        int level) {
    std::vector<std::size_t> out;
    for (std::size_t i = combination.size(); i-- > 0;) {
        if (net.root_level(combination[i]) >= level) out.push_back(i);
    }
    return out;
}

std::vector<NodeRange> replace_group(std::span<const NodeRange> list, std::size_t at,
                                     const std::vector<NodeRange>& pieces) {
    std::vector<NodeRange> out(list.begin(), list.begin() + static_cast<std::ptrdiff_t>(at));
    out.insert(out.end(), pieces.begin(), pieces.end());
    out.insert(out.end(), list.begin() + static_cast<std::ptrdiff_t>(at) + 1, list.end());
    return out;
}

std::vector<NodeRange> split_forward(const FatTree& net, std::span<const NodeRange> combination,
                                     std::size_t at) {
    return replace_group(combination, at, split_lower(net, combination[at]));
}

std::int64_t node_count(std::span<const NodeRange> ranges) {
    std::int64_t n = 0;
    for (const NodeRange& r : ranges) n += r.size();
    return n;
}

std::span<const HwTreePlanner> hw_tree_planners() {
    static constexpr std::array<HwTreePlanner, 2> table{{
        {"greedy",
         "Algorithm 2 of Coll et al.: one branch, groups largest first; cost grows with the depth"},
        {"optimal",
         "Algorithm 1 of Coll et al.: backtracking over every combination and split; exponential"},
    }};
    return table;
}

}  // namespace nicsim::plan
