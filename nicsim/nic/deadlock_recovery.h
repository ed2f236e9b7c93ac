// LFC's deadlock recovery (Bhoedjang et al. §4): the state a NIC keeps for it. The protocol itself
// is a part of nic::Nic, in nic/deadlock_recovery.cc.
//
// With arbitrary multicast trees, NICs that forward for each other can wait on each other's
// credits for good. Every NIC therefore keeps P-1 extra receive buffers, one owned by each other
// NIC: the buffers an NIC owns form its deadlock channel, on which only it may start a transfer.
//
//   R  blocked-sends queue non-empty: suspects deadlock (no recovery of its own in progress; the
//      queues are taken round-robin). Takes the packet p at the head of that queue, on tree T,
//      and sends it with the deadlock flag into its channel buffer at D, the queue's destination.
//   D  flag set: D is in R's deadlocked subtree. p goes to the blocked-sends queues of all of D's
//      children in T (a child with a credit simply gets it); to each child without a credit D
//      sends the *first* blocked packet of T for that child, flagged, into R's buffer there (so
//      per-tree FIFO order holds and the subtree grows only where credits lack).
//   ack  a subtree NIC answers its parent once its own channel buffer is free again and every
//      child it flagged has answered: the acknowledgements merge back to R, whose channel is
//      then free on every NIC, and R may start its next recovery.
//
//      R ··flag··▶ D ──credit──▶ F            (F had a credit: plain send, not in the subtree)
//                  └──flag──▶ E ··▶ ...       (E had none: E joins the subtree)
//      R ◀──ack── D ◀──ack── E
//
// Detection is §4.1's (a non-empty blocked-sends queue, at once) or, with a timeout, §5.2's
// proposed refinement (a queue blocked without progress across two ticks of the fabric).
//
// D's channel buffer frees when its packet has gone to every child and the host, or, earlier,
// when a receive buffer of the same sender's window frees (the recovery forwarded T's oldest
// packet at D, which frees one): p then moves into that buffer, whose credit the sender does not
// get back, so every window still adds up.
#pragma once

#include <cstdint>

namespace nicsim::nic {

struct DeadlockChannel {
    bool active = false;       // a packet of this owner's recovery came through; no ack sent yet
    bool holding = false;      // that packet still holds the owner's extra buffer here
    std::uint32_t parent = 0;  // the peer (by index) it came from, to be acknowledged
    int acks_pending = 0;      // children flagged in this recovery that have not answered
};

}  // namespace nicsim::nic
