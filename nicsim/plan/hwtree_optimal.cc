// Algorithm 1 of Coll et al. (§5.2): the optimal hardware-based multicast tree by backtracking.
//
// At each step every combination of as many pending groups as there are nodes with the message
// is tried, in the planners' order. A combination with a backward overlap is explored twice,
// with the right group split and with the left one; one with a forward overlap once for each
// group at or above the level where it was found, that group split. A combination that passes
// both checks is a step, and the search goes on from what is still pending. Only partial trees
// that could still beat the best one so far are explored (tag 9), and the greedy tree, which is
// the search's first branch, is the best one to start from.
#include <algorithm>

#include "plan/hwtree.h"
#include "plan/hwtree_search.h"

namespace nicsim::plan {

namespace {

class Search {
public:
    Search(const FatTree& net, std::uint64_t max_calls) : net_(net), max_calls_(max_calls) {}

    OptimalSearch run(Rank source, std::span<const NodeRange> groups) {
        best_ = greedy_hw_tree(net_, source, groups);
        partial_ = {source, {}};
        std::vector<NodeRange> pending(groups.begin(), groups.end());
        std::sort(pending.begin(), pending.end(),
                  [](NodeRange a, NodeRange b) { return a.lo < b.lo; });
        std::vector<NodeRange> candidates = pending;
        sort_groups(net_, candidates);
        explore({{source, source}}, pending, candidates);
        return {best_, calls_ <= max_calls_, calls_};
    }

private:
    // Tries every combination of `candidates` (in the planners' order) for the next step.
    void explore(const std::vector<NodeRange>& sources, const std::vector<NodeRange>& pending,
                 const std::vector<NodeRange>& candidates) {
        if (++calls_ > max_calls_) return;
        const std::int64_t senders = node_count(sources);
        // A step that must be the last to beat the best tree has to take every candidate, and
        // splits only add candidates: with more candidates than senders no branch below can
        // improve on the best (tag 9).
        if (partial_.depth() == best_.depth() - 2 &&
            static_cast<std::int64_t>(candidates.size()) > senders) {
            return;
        }
        const auto take = static_cast<std::size_t>(
            std::min<std::int64_t>(senders, static_cast<std::int64_t>(candidates.size())));
        // The combination as increasing indexes into `candidates`, first to last.
        std::vector<std::size_t> pick(take);
        for (std::size_t i = 0; i < take; ++i) pick[i] = i;
        while (partial_.depth() < best_.depth() - 1 && calls_ <= max_calls_) {
            std::vector<NodeRange> combination;
            for (const std::size_t i : pick) combination.push_back(candidates[i]);
            try_combination(sources, pending, combination);
            if (!next_combination(pick, candidates.size())) break;
        }
    }

    void try_combination(const std::vector<NodeRange>& sources,
                         const std::vector<NodeRange>& pending,
                         const std::vector<NodeRange>& combination) {
        const Check check = check_combination(net_, sources, combination);
        if (check.backward) {
            explore_split(sources, pending, split_right(net_, check.by_position, *check.backward));
            explore_split(sources, pending, split_left(net_, check.by_position, *check.backward));
            return;
        }
        if (check.forward_level >= 0) {
            for (const std::size_t at : forward_splits(net_, combination, check.forward_level)) {
                explore_split(sources, pending, split_forward(net_, combination, at));
            }
            return;
        }
        partial_.steps.push_back(*check.step);
        const std::vector<NodeRange> left = subtract(pending, check.by_position);
        if (left.empty()) {
            if (partial_.depth() < best_.depth()) best_ = partial_;
        } else {
            std::vector<NodeRange> candidates = left;
            sort_groups(net_, candidates);
            explore(merge(sources, check.by_position), left, candidates);
        }
        partial_.steps.pop_back();
    }

    void explore_split(const std::vector<NodeRange>& sources, const std::vector<NodeRange>& pending,
                       std::vector<NodeRange> candidates) {
        sort_groups(net_, candidates);
        explore(sources, pending, candidates);
    }

    // The next k-combination of 0..n-1 in lexicographic order; false after the last.
    static bool next_combination(std::vector<std::size_t>& pick, std::size_t n) {
        const std::size_t k = pick.size();
        for (std::size_t i = k; i-- > 0;) {
            if (pick[i] < n - k + i) {
                ++pick[i];
                for (std::size_t j = i + 1; j < k; ++j) pick[j] = pick[j - 1] + 1;
                return true;
            }
        }
        return false;
    }

    const FatTree& net_;
    std::uint64_t max_calls_;
    std::uint64_t calls_ = 0;
    HwTree best_;
    HwTree partial_;
};

}  // namespace

OptimalSearch optimal_hw_tree(const FatTree& net, Rank source, std::span<const NodeRange> groups,
                              std::uint64_t max_calls) {
    return Search(net, max_calls).run(source, groups);
}

}  // namespace nicsim::plan
