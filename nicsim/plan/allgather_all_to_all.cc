// All-to-all broadcast allgather with hopping packets (Yu et al.'s ab).
//
// Every block is broadcast over the binomial tree of its origin, in ranks counted after the
// origin modulo N; in Yu et al. a packet names its tree by its flag (i, j), so a NIC forwards it
// on arrival with nothing but the flag and its own rank (our NIC reads the same hops off this
// schedule's sends, nic/allgather_op.h). A block d ranks after its origin
// arrived by a hop of 2^j with 2^j the highest bit of d, and goes on to d + 2^(j+1),
// d + 2^(j+2), ... while that is less than N; the origin sends to 1, 2, 4, ... Origin i, N = 6:
//
//   step 0   i -> i+1                       flag (i, 0)
//   step 1   i -> i+2   i+1 -> i+3          flag (i, 1)
//   step 2   i -> i+4   i+1 -> i+5          flag (i, 2)   (i+2 and i+3 stop: 6 and 7 >= N)
//
// Every d < N is reached exactly once, along its bits from the lowest, and at step
// highest_bit(d); nothing depends on N being a power of two. Summed over the N trees, at step k
// every rank sends to rank + 2^k the blocks of the origins less than 2^k behind it whose next
// hop stays in the group, min(2^k, N - 2^k) of them, and receives as many from rank - 2^k:
// ceil(log2 N) steps, N - 1 blocks received, each packet carrying one origin (Yu et al.: no
// combining, N - 1 packets, a bit per origin to track them). The NIC need not wait for a step
// to end: a packet can go on as soon as it has arrived.
#include <algorithm>

#include "plan/allgather.h"
#include "plan/group.h"

namespace nicsim::plan {

AllgatherSchedule allgather_all_to_all(Rank rank, Rank size) {
    const Group group = binomial_group(rank, size);
    AllgatherSchedule steps(group.up.size());
    for (std::size_t k = 0; k < steps.size(); ++k) {
        const Rank distance = Rank{1} << k;
        const Rank count = std::min(distance, size - distance);
        const Rank from = group.down[k];
        steps[k].sends = {{group.up[k], cyclic_blocks(rank - count + 1, count, size)}};
        steps[k].recvs = {{from, cyclic_blocks(from - count + 1, count, size)}};
    }
    return steps;
}

}  // namespace nicsim::plan
