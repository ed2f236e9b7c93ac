// Recursive-doubling allgather (Yu et al.'s rd and host-rd; Thakur and Gropp 2003).
//
// N = 2^m: at step k every rank exchanges with rank XOR 2^k everything it holds, so after step k
// it holds the blocks of its aligned group of 2^(k+1) ranks and after m steps all N; each step's
// blocks go to one peer in as few packets as fit (Yu et al.: message combining, log N packets
// for small blocks).
//
// Other N: let p be the largest power of two below N and e = N - p. The extra ranks p .. N - 1
// fold in and out, as in barrier_recursive_doubling.h:
//
//   step 0           extra rank p + j sends its block to core rank j          (j < e)
//   steps 1 .. m     core ranks 0 .. p - 1 exchange as above, core rank j carrying block p + j
//                    with its own
//   step m + 1       core rank j sends every block but p + j to extra rank p + j
//
//   N = 6, p = 4:    step 0   4 -> 0 {4}        5 -> 1 {5}
//                    step 1   0 <-> 1 {0,4} {1,5}          2 <-> 3 {2} {3}
//                    step 2   0 <-> 2 {0,1,4,5} {2,3}      1 <-> 3 likewise
//                    step 3   0 -> 4 {0..3,5}   1 -> 5 {0..4}
//
// floor(log2 N) + 2 steps, every exchange pairwise: a NIC talks to one peer per step and to
// log N peers in all, all in its binomial group (up[m] and down[m] are the fold partners), which
// is what lets Yu et al. keep a record per peer. The price over ceil(log2 N) is one step, and the
// extra ranks receive N - 1 blocks at once at the end. Powers of two have no fold steps.
#include <algorithm>
#include <bit>

#include "plan/allgather.h"
#include "plan/group.h"

namespace nicsim::plan {

AllgatherSchedule allgather_recursive_doubling(Rank rank, Rank size) {
    const Group group = binomial_group(rank, size);
    const int rounds = std::bit_width(static_cast<unsigned>(size)) - 1;
    const Rank core = Rank{1} << rounds;
    const Rank extra = size - core;
    const int fold = extra > 0 ? 1 : 0;
    AllgatherSchedule steps(rounds + 2 * fold);
    const auto all_but = [size](Rank origin) { return cyclic_blocks(origin + 1, size - 1, size); };
    if (rank >= core) {
        const Rank partner = group.down[rounds];
        steps.front().sends = {{partner, {{rank, 1}}}};
        steps.back().recvs = {{partner, all_but(rank)}};
        return steps;
    }
    if (rank < extra) {
        const Rank partner = group.up[rounds];
        steps.front().recvs = {{partner, {{partner, 1}}}};
        steps.back().sends = {{partner, all_but(partner)}};
    }
    // What a core rank from `base` holds after the rounds that gathered `width` core ranks:
    // their blocks and those their extra partners folded in.
    const auto gathered = [core, extra](Rank base, Rank width) {
        std::vector<BlockRange> blocks{{base, width}};
        const Rank folded = std::min(base + width, extra) - base;
        if (folded > 0) blocks.push_back({core + base, folded});
        return blocks;
    };
    for (int k = 0; k < rounds; ++k) {
        const Rank width = Rank{1} << k;
        const bool upper = (rank & width) != 0;
        const Rank base = rank & -width;
        AllgatherStep& step = steps[fold + k];
        step.sends = {{upper ? group.down[k] : group.up[k], gathered(base, width)}};
        step.recvs = {{step.sends[0].peer, gathered(base ^ width, width)}};
    }
    return steps;
}

}  // namespace nicsim::plan
