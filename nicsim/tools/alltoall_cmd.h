// The nicsim command's all-to-all multicast (Bhoedjang et al. §5.2-5.3): `nicsim alltoall`.
#pragma once

#include <span>

#include "sim/model.h"
#include "tools/options.h"

namespace nicsim::tools {

std::span<const OptionSpec> alltoall_options();

// Exit status when the run deadlocked (recovery off): the NICs and queues are printed.
inline constexpr int kDeadlocked = 3;

// `nicsim alltoall` on `model` (from --preset, --nodes and --set).
int run_alltoall_command(const Options& opts, sim::Model model);

}  // namespace nicsim::tools
