// Ring allgather (host-ring, the baseline Yu et al. measured against recursive doubling).
//
// At step s every rank passes the block it received at step s - 1 (its own at step 0) to
// rank + 1 and receives the next one from rank - 1: N - 1 steps of one block each, for any N.
// Few bytes per step and only neighbours, but linear in N.
#include "plan/allgather.h"
#include "plan/group.h"

namespace nicsim::plan {

AllgatherSchedule allgather_ring(Rank rank, Rank size) {
    const Group group = binomial_group(rank, size);
    AllgatherSchedule steps(size - 1);
    for (Rank s = 0; s < size - 1; ++s) {
        steps[s].sends = {{group.up[0], cyclic_blocks(rank - s, 1, size)}};
        steps[s].recvs = {{group.down[0], cyclic_blocks(rank - s - 1, 1, size)}};
    }
    return steps;
}

}  // namespace nicsim::plan
