// Backward and forward routing overlaps (Coll et al. §5.2.1-5.2.2) and the splits that remove them.
#include <algorithm>

#include "plan/hwtree.h"
#include "plan/hwtree_search.h"

namespace nicsim::plan {

namespace {

// The group's piece inside block b of size k^level, and the rest (one range, as b is at one end
// of the group), in node order.
std::vector<NodeRange> cut_block(const FatTree& net, NodeRange g, int level, std::int64_t b) {
    const auto first = static_cast<Rank>(b * net.power(level));
    const auto last = static_cast<Rank>((b + 1) * net.power(level) - 1);
    if (g.lo >= first) return {{g.lo, last}, {last + 1, g.hi}};  // b is the group's first block
    return {{g.lo, first - 1}, {first, g.hi}};                    // b is its last block
}

}  // namespace

bool backward_overlap(const FatTree& net, NodeRange a, NodeRange b, int level) {
    const auto blk = [&](Rank v) { return net.block(v, level); };
    return blk(a.lo) != blk(a.hi) && blk(b.lo) != blk(b.hi) &&
           (blk(a.hi) == blk(b.lo) || blk(a.lo) == blk(b.hi));
}

std::optional<BackwardOverlap> first_backward_overlap(const FatTree& net,
                                                      std::span<const NodeRange> by_position) {
    // Disjoint groups in node order can share a link at level l only where one ends in the block
    // the other starts in, with any groups between them inside that block. So per level it is
    // enough to remember the last group that spans two or more blocks: a linear walk instead of
    // every pair, which matters with hundreds of groups.
    std::vector<std::ptrdiff_t> last_spanning(static_cast<std::size_t>(net.levels()), -1);
    for (std::size_t j = 0; j < by_position.size(); ++j) {
        const NodeRange g = by_position[j];
        for (int level = net.levels() - 1; level >= 1; --level) {
            const std::ptrdiff_t i = last_spanning[static_cast<std::size_t>(level)];
            if (i >= 0 &&
                backward_overlap(net, by_position[static_cast<std::size_t>(i)], g, level)) {
                return BackwardOverlap{static_cast<std::size_t>(i), j, level};
            }
        }
        for (int level = 1; level < net.levels(); ++level) {
            if (net.block(g.lo, level) != net.block(g.hi, level)) {
                last_spanning[static_cast<std::size_t>(level)] = static_cast<std::ptrdiff_t>(j);
            }
        }
    }
    return std::nullopt;
}

std::vector<NodeRange> split_right(const FatTree& net, std::span<const NodeRange> by_position,
                                   const BackwardOverlap& o) {
    const NodeRange left = by_position[o.left];
    return replace_group(by_position, o.right,
                   cut_block(net, by_position[o.right], o.level, net.block(left.hi, o.level)));
}

std::vector<NodeRange> split_left(const FatTree& net, std::span<const NodeRange> by_position,
                                  const BackwardOverlap& o) {
    const NodeRange right = by_position[o.right];
    return replace_group(by_position, o.left,
                   cut_block(net, by_position[o.left], o.level, net.block(right.lo, o.level)));
}

LevelCounts capabilities(const FatTree& net, std::span<const NodeRange> sources) {
    const int top = net.levels() - 1;
    // blocks[m]: B_m, the blocks of k^m nodes holding a source; blocks[0] counts the nodes.
    LevelCounts blocks(static_cast<std::size_t>(net.levels()) + 1, 0);
    for (int m = 0; m <= top; ++m) {
        std::int64_t last = -1;  // sources are disjoint and in node order: blocks never go back
        for (const NodeRange& r : sources) {
            const std::int64_t first = std::max(net.block(r.lo, m), last + 1);
            const std::int64_t end = net.block(r.hi, m);
            if (end >= first) blocks[static_cast<std::size_t>(m)] += end - first + 1;
            last = std::max(last, end);
        }
    }
    LevelCounts c(static_cast<std::size_t>(net.levels()), 0);
    for (int l = 0; l <= top; ++l) {
        const std::int64_t above = l == top ? 0 : blocks[static_cast<std::size_t>(l) + 1];
        c[static_cast<std::size_t>(l)] = blocks[static_cast<std::size_t>(l)] - above;
    }
    return c;
}

LevelCounts needs(const FatTree& net, std::span<const NodeRange> groups) {
    LevelCounts n(static_cast<std::size_t>(net.levels()), 0);
    for (const NodeRange& g : groups) ++n[static_cast<std::size_t>(net.root_level(g))];
    return n;
}

LevelCounts differences(const LevelCounts& c, const LevelCounts& n) {
    LevelCounts d(c.size(), 0);
    std::int64_t carried = 0;
    for (std::size_t l = c.size(); l-- > 0;) {
        d[l] = c[l] - n[l] + carried;
        carried = std::max<std::int64_t>(d[l], 0);
    }
    return d;
}

int forward_overlap_level(const LevelCounts& d) {
    for (std::size_t l = d.size(); l-- > 0;) {
        if (d[l] < 0) return static_cast<int>(l);
    }
    return -1;
}

std::vector<NodeRange> split_lower(const FatTree& net, NodeRange group) {
    const int level = net.root_level(group);
    if (level == 0) return {group};
    const std::int64_t size = net.power(level);
    std::vector<NodeRange> pieces;
    for (Rank lo = group.lo; lo <= group.hi;) {
        const auto end = static_cast<Rank>((net.block(lo, level) + 1) * size - 1);
        pieces.push_back({lo, std::min(end, group.hi)});
        lo = pieces.back().hi + 1;
    }
    return pieces;
}

}  // namespace nicsim::plan
