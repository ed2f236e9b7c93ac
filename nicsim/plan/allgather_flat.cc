// Flat allgather: every rank sends its own block straight to every other rank. Step d - 1 names
// the block that goes d ranks on and the one that comes from d ranks back; the blocks hop
// (nic/allgather_op.h), so a rank sends its N - 1 packets at once and waits for nothing between.
#include "plan/allgather.h"

namespace nicsim::plan {

AllgatherSchedule allgather_flat(Rank rank, Rank size) {
    AllgatherSchedule steps(size > 1 ? static_cast<std::size_t>(size - 1) : 0);
    for (Rank d = 1; d < size; ++d) {
        const Rank to = (rank + d) % size, from = (rank - d + size) % size;
        steps[d - 1].sends = {{to, {{rank, 1}}}};
        steps[d - 1].recvs = {{from, {{from, 1}}}};
    }
    return steps;
}

}  // namespace nicsim::plan
