#include "plan/fattree.h"

#include <array>
#include <string>

namespace nicsim::plan {

FatTree::FatTree(int arity, int levels, Rank nodes) : k_(arity), n_(levels), nodes_(nodes) {
    pow_.push_back(1);
    for (int e = 1; e <= n_; ++e) pow_.push_back(pow_.back() * k_);
}

FatTree FatTree::holding(Rank nodes, int arity) {
    int levels = 1;
    std::int64_t capacity = arity;
    while (capacity < nodes && levels < kMaxLevels) {
        capacity *= arity;
        ++levels;
    }
    return FatTree(arity, levels, nodes);
}

int FatTree::root_level(NodeRange range) const {
    int level = 0;
    while (level + 1 < n_ && block(range.lo, level + 1) != block(range.hi, level + 1)) ++level;
    return level;
}

Switch FatTree::root_switch(NodeRange range) const {
    const int level = root_level(range);
    return {level, block(range.lo, level + 1), 0};
}

std::size_t FatTree::links() const {
    return 2 * static_cast<std::size_t>(power(n_)) +
           2 * static_cast<std::size_t>((n_ - 1) * power(n_ - 1) * k_);
}

FatLink FatTree::switch_up(Switch s, int port) const {
    return static_cast<FatLink>(2 * power(n_) + 2 * (switch_index(s) * k_ + port));
}

FatLink FatTree::switch_down(Switch s, int port) const { return switch_up(s, port) + 1; }

Switch FatTree::up(Switch s, int port) const {
    return {s.level + 1, s.block / k_, s.replica + port * power(s.level)};
}

void FatTree::unicast_route(Rank a, Rank b, const Chooser& choose,
                            std::vector<FatLink>& path) const {
    int top = 0;
    while (block(a, top + 1) != block(b, top + 1)) ++top;
    path.push_back(node_up(a));
    Switch s = leaf_of(a);
    std::array<FatLink, 64> candidates{};
    for (int level = 0; level < top; ++level) {
        for (int u = 0; u < k_; ++u) candidates[static_cast<std::size_t>(u)] = switch_up(s, u);
        const int u =
            choose(s, std::span<const FatLink>(candidates.data(), static_cast<std::size_t>(k_)));
        path.push_back(candidates[static_cast<std::size_t>(u)]);
        s = up(s, u);
    }
    descend(s, {b, b}, 0, path, nullptr);
}

// Down from switch s (whose block holds all of dest) to every node of dest: at each switch the
// down ports whose sub-blocks meet dest, so a range reaches a contiguous run of ports, as the
// Elite switches require.
void FatTree::descend(Switch s, NodeRange dest, int hops, std::vector<FatLink>& path,
                      std::vector<int>* hop_list) const {
    if (s.level == 0) {
        for (int j = 0; j < k_; ++j) {
            const Rank node = static_cast<Rank>(s.block * k_ + j);
            if (!dest.contains(node)) continue;
            path.push_back(node_down(node));
            if (hop_list) hop_list->push_back(hops);
        }
        return;
    }
    const std::int64_t size = power(s.level);  // nodes under each down port
    for (int j = 0; j < k_; ++j) {
        const std::int64_t child_block = s.block * k_ + j;
        const std::int64_t first = child_block * size;
        if (first > dest.hi || first + size - 1 < dest.lo) continue;
        const Switch child{s.level - 1, child_block, s.replica % power(s.level - 1)};
        path.push_back(switch_down(child, static_cast<int>(s.replica / power(s.level - 1))));
        if (hop_list) hop_list->push_back(hops);
        descend(child, dest, hops + 1, path, hop_list);
    }
}

void FatTree::multicast_route(Rank source, NodeRange dest, const Chooser& choose,
                              std::vector<FatLink>& path, std::vector<int>* hops) const {
    const Switch root = root_switch(dest);
    int top = root.level;  // where the climb turns: the root switch, or above it
    while (block(source, top + 1) != block(dest.lo, top + 1)) ++top;
    const auto push = [&](FatLink link) {
        if (hops) hops->push_back(static_cast<int>(path.size()));
        path.push_back(link);
    };
    push(node_up(source));
    Switch s = leaf_of(source);
    std::array<FatLink, 64> candidates{};
    for (int level = 0; level < top; ++level) {
        int u = 0;  // below the root's level: the broadcast tree's own link
        if (level >= root.level) {
            for (int p = 0; p < k_; ++p) candidates[static_cast<std::size_t>(p)] = switch_up(s, p);
            u = choose(s,
                       std::span<const FatLink>(candidates.data(), static_cast<std::size_t>(k_)));
        }
        push(switch_up(s, u));
        s = up(s, u);
    }
    // From the turn down to the root switch: the replica keeps its low digits, which are 0.
    while (s.level > root.level) {
        const int j = static_cast<int>(block(static_cast<Rank>(dest.lo), s.level) % k_);
        const Switch child{s.level - 1, s.block * k_ + j, s.replica % power(s.level - 1)};
        push(switch_down(child, static_cast<int>(s.replica / power(s.level - 1))));
        s = child;
    }
    descend(s, dest, static_cast<int>(path.size()), path, hops);
}

std::string FatTree::link_name(FatLink link) const {
    const auto sw = [](Switch s) {
        return "sw(" + std::to_string(s.level) + "," + std::to_string(s.block) + "," +
               std::to_string(s.replica) + ")";
    };
    if (link < 2 * power(n_)) {
        const std::string node = "node" + std::to_string(link / 2);
        const std::string leaf = sw(leaf_of(static_cast<Rank>(link / 2)));
        return link % 2 == 0 ? node + ">" + leaf : leaf + ">" + node;
    }
    const std::int64_t i = (static_cast<std::int64_t>(link) - 2 * power(n_)) / 2;
    const std::int64_t index = i / k_;
    const int port = static_cast<int>(i % k_);
    const int level = static_cast<int>(index / power(n_ - 1));
    const std::int64_t within = index % power(n_ - 1);
    const Switch s{level, within / power(level), within % power(level)};
    return link % 2 == 0 ? sw(s) + ">" + sw(up(s, port)) : sw(up(s, port)) + ">" + sw(s);
}

}  // namespace nicsim::plan
