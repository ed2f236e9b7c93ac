// Planner: how many steps a k-binomial multicast takes, and the best k (Kesavan and Panda §4).
//
// Steps are Kesavan and Panda's NIC-level time unit: a NIC sends one packet per step, and a packet
// received at one step can be forwarded from the next. Forwarding first-packet-first-served, an
// m-packet multicast is m one-packet multicasts, each following the previous one by the largest
// number of children a node has. A k-binomial tree caps that at k; the fewer children, the more
// steps the first packet needs, so short messages want a large k (k = ceil(log2 n) is the
// binomial tree) and long ones a small k (k = 1 is the chain). optimal_k() trades the two off.
#pragma once

#include <cstdint>

#include "core/status.h"

namespace nicsim::plan {

// Coverage counts saturate here instead of overflowing; no group comes near it.
constexpr std::uint64_t kCoverageMax = std::uint64_t{1} << 62;

// N(s, k), Lemma 1: the most nodes a k-binomial tree reaches in s steps, the root included:
// 2^s for s <= k, else 1 + N(s-1, k) + ... + N(s-k, k). k >= 1.
std::uint64_t kbinomial_coverage(int s, int k);

// L1: the fewest steps s with N(s, k) >= n (0 for n == 1); one packet over kbinomial_tree(n, k)
// takes exactly this many.
int kbinomial_steps(Rank n, int k);

// L1 + (m - 1) k: Theorem 2 with the root's fanout delta_r = k, for m >= 1 packets (0 for n == 1,
// where nothing is sent). Exact for kbinomial_tree(n, k) when k < L1 or n is a power of two. When
// k >= L1 = ceil(log2 n) and n is not a power of two, no node needs more than L1 - 1 children:
// the tree is the (L1 - 1)-binomial one, which this gives exactly, and is m - 1 steps faster than
// this says for k. The minimum over k, which optimal_k() takes, is therefore exact.
std::int64_t kbinomial_total_steps(Rank n, std::int64_t m, int k);

// Theorem 3: the k in 1..max(1, ceil(log2 n)) with the fewest total steps for m >= 1 packets; ties
// go to the larger k (the smaller L1), so m == 1 gives ceil(log2 n).
int optimal_k(Rank n, std::int64_t m);

// Theorem 3 when a step is not one fixed time: a packet takes `hop` to go from one NIC to the next
// (send, wire, receive), while a NIC is busy only `send` per copy it sends, so the first packet
// arrives after L1 hops and each further one a fanout's worth of sends later. Minimises
// L1 * hop + (m - 1) * fanout * send; with hop == send this is optimal_k(). Ties go to the larger
// k. Used where real costs are known (the simulator's "optimal" tree).
int optimal_k_timed(Rank n, std::int64_t m, double hop, double send);

}  // namespace nicsim::plan
