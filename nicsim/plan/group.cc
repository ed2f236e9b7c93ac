#include "plan/group.h"

#include "plan/barrier.h"

namespace nicsim::plan {

Group binomial_group(Rank rank, Rank size) {
    Group group;
    for (int k = 0; k < ceil_log2(size); ++k) {
        const Rank distance = Rank{1} << k;
        group.up.push_back((rank + distance) % size);
        group.down.push_back((rank - distance + size) % size);
    }
    return group;
}

}  // namespace nicsim::plan
