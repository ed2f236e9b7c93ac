// Tree barrier: arrivals combine up a tree rooted at rank 0, and rank 0 releases the ranks down
// the same tree (Mellor-Crummey and Scott's tree barrier), each parent hearing from up to
// kMaxBarrierSenders children in one step.
//
// The tree is the radix-(kMaxBarrierSenders + 1) one: with r the position of rank i's lowest
// non-zero digit in that radix, its parent is i less that digit's value. Up to 65 ranks it is
// flat: every rank reports to rank 0, which releases them all. L levels, L = 1 up to 65 ranks:
//
//   steps 0 .. L-1      step l: the ranks whose lowest non-zero digit is digit l signal their
//                       parent, which waits for all of them (arrival)
//   steps L .. 2L-1     step 2L-1-l: the parents signal them back (release)
//
// Rank 0 leaves first and every other rank one hop after its parent, the order in which a
// broadcast from rank 0 reaches them. A broadcast from rank 0 right after the barrier, as in
// OSU's loop, then finds each rank arriving about when its data does, where a symmetric barrier
// such as dissemination lets the ranks farthest from the root leave as early and wait.
#pragma once

#include "plan/barrier.h"

namespace nicsim::plan {

BarrierSchedule barrier_tree(Rank rank, Rank size);

}  // namespace nicsim::plan
