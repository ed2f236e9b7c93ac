// The nicsim command's FM/MC comparator (Bhoedjang et al. §2.2, §5.3): `--protocol fmmc` on bcast,
// throughput and alltoall.
#pragma once

#include <string_view>

#include "sim/model.h"
#include "tools/options.h"

namespace nicsim::tools {

inline constexpr OptionSpec kProtocolOpt{
    "--protocol", "lfc|fmmc",
    "lfc (the engine's NIC agent, default) or fmmc: FM/MC's central credit manager, token and NI receive queue (Bhoedjang et al. §2.2), 256-byte packets, binary trees"};

// `command` (bcast, throughput or alltoall) under FM/MC on `model`: one sender (`root`) or all.
int run_fmmc_command(std::string_view command, const Options& opts, const sim::Model& model);

}  // namespace nicsim::tools
