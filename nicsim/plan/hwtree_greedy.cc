// Algorithm 2 of Coll et al. (§5.3): the greedy hardware-based multicast tree.
//
// Each step takes, out of the pending groups in the planners' order (largest, then highest root
// switch, first), as many as there are nodes with the message. While the overlap checks object,
// it takes the first way out only: for a backward overlap the split of the right group, for a
// forward overlap the split of the smallest group at or above the level it was found. The pieces
// take their place in the order, and a piece that falls beyond the number of sources waits for
// a later step. The cost grows with the depth of the tree and the number of splits, not with the
// number of combinations.
//
// A split changes one group, so the step keeps its combination in indexes that a split updates
// in O(levels log groups) instead of sorting and checking the whole combination again (which made
// 65,536 nodes with 1 % faulty take a second): the combination in the planners' order and per
// root level (for truncation and for the group a forward overlap splits), the needs (Eq. 2), and
// per level and block the spanning group that ends in the block and the one that starts in it:
// a backward overlap (Eq. 1) is a block with both, and the first one first_backward_overlap()
// meets is the one whose right group starts leftmost, at its highest level. The capabilities
// depend only on the sources, which change between steps, not within one. The trees are those
// of check_combination() applied after every split (test_hwtree.cc compares them).
#include <algorithm>
#include <set>
#include <tuple>
#include <unordered_map>

#include "plan/hwtree.h"
#include "plan/hwtree_search.h"

namespace nicsim::plan {

namespace {

struct Group {
    NodeRange range;
    int level = 0;  // its root switch's
};

// sort_groups()'s order.
struct PlannersOrder {
    bool operator()(const Group& a, const Group& b) const {
        if (a.range.size() != b.range.size()) return a.range.size() > b.range.size();
        if (a.level != b.level) return a.level > b.level;
        return a.range.lo < b.range.lo;
    }
};

class Combination {
public:
    Combination(const FatTree& net, std::size_t senders)
        : net_(net),
          senders_(senders),
          by_level_(static_cast<std::size_t>(net.levels())),
          needs_(static_cast<std::size_t>(net.levels()), 0),
          ends_(static_cast<std::size_t>(net.levels())),
          starts_(static_cast<std::size_t>(net.levels())) {}

    // Adds the groups, then keeps the first `senders` of them in the planners' order.
    void add(std::span<const NodeRange> groups) {
        for (const NodeRange& g : groups) insert({g, net_.root_level(g)});
        truncate();
    }

    // The first backward overlap: the right group and the level.
    std::optional<std::pair<Group, int>> backward() const {
        if (overlaps_.empty()) return std::nullopt;
        const auto [lo, minus_level] = *overlaps_.begin();
        const int level = -minus_level;
        const std::int64_t b = net_.block(lo, level);
        const NodeRange right = starts_[static_cast<std::size_t>(level)].at(b);
        return std::pair{Group{right, net_.root_level(right)}, level};
    }

    const LevelCounts& needs() const { return needs_; }

    // The group a forward overlap at `level` splits: the last in the planners' order with its
    // root switch at or above `level` (forward_splits().front()).
    Group last_at_or_above(int level) const {
        std::optional<Group> last;
        for (int l = level; l < net_.levels(); ++l) {
            const auto& set = by_level_[static_cast<std::size_t>(l)];
            if (!set.empty() && (!last || PlannersOrder{}(*last, *set.rbegin())))
                last = *set.rbegin();
        }
        return *last;
    }

    int top_level() const {
        for (int l = net_.levels(); l-- > 0;) {
            if (!by_level_[static_cast<std::size_t>(l)].empty()) return l;
        }
        return 0;
    }

    // `g` replaced by `pieces`, then truncated as add() does.
    void replace(const Group& g, const std::vector<NodeRange>& pieces) {
        erase(g);
        add(pieces);
    }

    std::vector<NodeRange> by_position() const {
        std::vector<NodeRange> out;
        out.reserve(order_.size());
        for (const Group& g : order_) out.push_back(g.range);
        std::sort(out.begin(), out.end(), [](NodeRange a, NodeRange b) { return a.lo < b.lo; });
        return out;
    }

private:
    using Blocks = std::unordered_map<std::int64_t, NodeRange>;

    void insert(const Group& g) {
        order_.insert(g);
        by_level_[static_cast<std::size_t>(g.level)].insert(g);
        ++needs_[static_cast<std::size_t>(g.level)];
        for (int l = 1; l <= g.level; ++l) {  // g spans two or more blocks of k^l
            const auto at = static_cast<std::size_t>(l);
            const std::int64_t end = net_.block(g.range.hi, l);
            const std::int64_t start = net_.block(g.range.lo, l);
            ends_[at].emplace(end, g.range);
            if (const auto s = starts_[at].find(end); s != starts_[at].end())
                overlaps_.insert({s->second.lo, -l});
            starts_[at].emplace(start, g.range);
            if (ends_[at].count(start)) overlaps_.insert({g.range.lo, -l});
        }
    }

    void erase(const Group& g) {
        order_.erase(g);
        by_level_[static_cast<std::size_t>(g.level)].erase(g);
        --needs_[static_cast<std::size_t>(g.level)];
        for (int l = 1; l <= g.level; ++l) {
            const auto at = static_cast<std::size_t>(l);
            const std::int64_t end = net_.block(g.range.hi, l);
            const std::int64_t start = net_.block(g.range.lo, l);
            ends_[at].erase(end);
            if (const auto s = starts_[at].find(end); s != starts_[at].end())
                overlaps_.erase({s->second.lo, -l});
            starts_[at].erase(start);
            if (ends_[at].count(start)) overlaps_.erase({g.range.lo, -l});
        }
    }

    void truncate() {
        while (order_.size() > senders_) {
            const Group last = *order_.rbegin();  // erase() outlives the set's element
            erase(last);
        }
    }

    const FatTree& net_;
    std::size_t senders_;
    std::set<Group, PlannersOrder> order_;
    std::vector<std::set<Group, PlannersOrder>> by_level_;
    LevelCounts needs_;
    // Per level l >= 1 and block of k^l: the group spanning two or more blocks that ends in it,
    // and the one that starts in it (groups are disjoint: at most one each).
    std::vector<Blocks> ends_;
    std::vector<Blocks> starts_;
    // The backward overlaps: (the right group's first node, -level), the first one first.
    std::set<std::pair<Rank, int>> overlaps_;
};

}  // namespace

HwTree greedy_hw_tree(const FatTree& net, Rank source, std::span<const NodeRange> groups) {
    HwTree tree{source, {}};
    std::vector<NodeRange> sources{{source, source}};
    // Assigned rather than made from the span: GCC 12 at -O3 warns, wrongly, that the latter
    // frees memory it did not allocate (-Wfree-nonheap-object).
    std::vector<NodeRange> pending;
    pending.assign(groups.begin(), groups.end());
    std::sort(pending.begin(), pending.end(), [](NodeRange a, NodeRange b) { return a.lo < b.lo; });
    while (!pending.empty()) {
        const LevelCounts capabilities = plan::capabilities(net, sources);
        Combination combination(net, static_cast<std::size_t>(node_count(sources)));
        combination.add(pending);
        for (;;) {
            if (const auto overlap = combination.backward()) {
                const auto& [right, level] = *overlap;
                // split_right(): the right group cut where it leaves the block it shares.
                const auto last = static_cast<Rank>(
                    (net.block(right.range.lo, level) + 1) * net.power(level) - 1);
                combination.replace(right, {{right.range.lo, last}, {last + 1, right.range.hi}});
                continue;
            }
            int level = forward_overlap_level(differences(capabilities, combination.needs()));
            std::optional<HwStep> step;
            if (level < 0) {
                const std::vector<NodeRange> by_position = combination.by_position();
                step = assign_sources(net, sources, by_position);
                if (step) {
                    tree.steps.push_back(*step);
                    pending = subtract(pending, by_position);
                    sources = merge(sources, by_position);
                    break;
                }
                level = combination.top_level();  // as check_combination() does
            }
            const Group g = combination.last_at_or_above(level);
            combination.replace(g, split_lower(net, g.range));
        }
    }
    return tree;
}

}  // namespace nicsim::plan
