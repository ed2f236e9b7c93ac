// The nicsim command's hardware-multicast parts (Coll et al.): `nicsim hwtree`, and `nicsim bcast`
// and `nicsim barrier` on a fattree network (--preset quadrics-elan3).
#pragma once

#include <span>
#include <string_view>

#include "sim/model.h"
#include "tools/options.h"

namespace nicsim::tools {

// The options `nicsim hwtree` takes, and those bcast and barrier add for a fattree network.
std::span<const OptionSpec> hwtree_options();
// clang-format off
inline constexpr OptionSpec kFaultyOpt{"--faulty", "LIST", "faulty nodes, comma-separated (e.g. 1,6); they take no part"};
inline constexpr OptionSpec kFaultyPercentOpt{"--faulty-percent", "P", "that percentage of the nodes faulty (rounded), drawn with the seed, never the source"};
inline constexpr OptionSpec kHwTreeOpt{"--tree", "T", "on a fattree network: hwtree|software|hardware (default hwtree)"};
inline constexpr OptionSpec kPlannerOpt{"--planner", "P", "greedy|optimal: Algorithm 2 or 1 of Coll et al. (default greedy)"};
inline constexpr OptionSpec kDotOpt{"--dot", "FILE", "write the tree as a Graphviz digraph"};
// clang-format on

int run_hwtree(const Options& opts);

// bcast (barrier = false) or barrier on the fattree network `model`.
int run_hw_collective(std::string_view command, const Options& opts, const sim::Model& model,
                      bool barrier);

}  // namespace nicsim::tools
