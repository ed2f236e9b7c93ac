#include "plan/barrier.h"

#include <array>

#include "plan/barrier_dissemination.h"
#include "plan/barrier_flat.h"
#include "plan/barrier_recursive_doubling.h"
#include "plan/barrier_tree.h"

namespace nicsim::plan {

std::span<const BarrierAlgorithm> barrier_algorithms() {
    static constexpr std::array<BarrierAlgorithm, 4> table{{
        {"dissemination", "ceil(log2 P) rounds; in round r rank i signals i+2^r (mod P)",
         barrier_dissemination},
        {"recursive_doubling",
         "pairwise exchange with rank XOR 2^r; ranks beyond the largest power of two fold in "
         "and out",
         barrier_recursive_doubling},
        {"tree",
         "the ranks report to rank 0, which releases them (a star up to 65 ranks; above, 64 "
         "children per rank)",
         barrier_tree},
        {"flat",
         "every rank signals every other and leaves once it has heard from all (one step up to 65 "
         "ranks; above, rounds of up to 64 signals)",
         barrier_flat},
    }};
    return table;
}

int ceil_log2(Rank size) {
    int rounds = 0;
    while ((Rank{1} << rounds) < size) ++rounds;
    return rounds;
}

}  // namespace nicsim::plan
