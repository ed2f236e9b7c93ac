#include "plan/barrier_tree.h"

namespace nicsim::plan {

BarrierSchedule barrier_tree(Rank rank, Rank size) {
    constexpr Rank radix = kMaxBarrierSenders + 1;
    std::size_t levels = 0;
    for (Rank span = 1; span < size; span *= radix) ++levels;
    BarrierSchedule steps(2 * levels);
    Rank span = 1;  // radix^l
    for (std::size_t l = 0; l < levels && rank % span == 0; ++l, span *= radix) {
        BarrierStep& arrive = steps[l];
        BarrierStep& release = steps[2 * levels - 1 - l];
        const Rank digit = rank / span % radix;
        if (digit != 0) {  // digit l is rank's lowest non-zero one: report to the parent, done
            arrive.send_to = {rank - digit * span};
            release.recv_from = {rank - digit * span};
            break;
        }
        for (Rank child = rank + span; child < size && child < rank + radix * span; child += span) {
            arrive.recv_from.push_back(child);
            release.send_to.push_back(child);
        }
    }
    return steps;
}

}  // namespace nicsim::plan
