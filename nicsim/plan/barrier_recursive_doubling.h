// Recursive-doubling (pairwise exchange) barrier.
//
// Let p be the largest power of two <= P and e = P - p the "extra" ranks. Steps:
//
//   step 0          extra rank p+j signals core rank j      (fold in; j < e)
//   steps 1..log p  core ranks exchange with rank XOR 2^(s-1)
//   step log p + 1  core rank j releases extra rank p+j     (fold out)
//
// With P a power of two steps 0 and log p + 1 are empty, leaving log2 P exchanges.
#pragma once

#include "plan/barrier.h"

namespace nicsim::plan {

BarrierSchedule barrier_recursive_doubling(Rank rank, Rank size);

}  // namespace nicsim::plan
