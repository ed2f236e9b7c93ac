// The nicsim command's point-to-point part (Pakin et al.): `nicsim pt2pt`, one-way latency and
// bandwidth per packet size and the t0, r-inf and n-half of Pakin et al. Table 2, through the
// Fast Messages layer or LFC's unicast path.
#pragma once

#include "sim/model.h"
#include "tools/options.h"

namespace nicsim::tools {

// clang-format off
inline constexpr OptionSpec kLayerOpt{"--layer", "L", "fm|lfc: Fast Messages 1.0 (Pakin et al.) or the engine's LFC unicast path (default fm)"};
inline constexpr OptionSpec kIoOpt{"--io", "M", "FM: hybrid|dma|none: host PIO to the NI and DMA to the host, DMA both ways, or LANai to LANai without hosts (default hybrid)"};
inline constexpr OptionSpec kLoopOpt{"--loop", "S", "FM: streamed|baseline LANai main loop (Pakin et al. Fig. 2; default streamed)"};
inline constexpr OptionSpec kBuffersOpt{"--buffers", "on|off", "FM: the four bounded queues and their bookkeeping, or infinite buffers (default on; off with --io none)"};
inline constexpr OptionSpec kFlowOpt{"--flow", "on|off", "FM: return-to-sender flow control with a reject queue (default on; needs --buffers on and hosts)"};
inline constexpr OptionSpec kInterpretOpt{"--interpret", "on|off", "FM: a switch() on each packet in the LANai's receive loop (default off)"};
inline constexpr OptionSpec kSizesOpt{"--sizes", "LIST", "packet payload sizes in bytes, comma-separated (default 16,32,64,128,256,512,1024,2048; with lfc those up to the mtu)"};
inline constexpr OptionSpec kPacketsOpt{"--packets", "K", "packets in each bandwidth run (default 65535, Pakin et al. §4.1)"};
inline constexpr OptionSpec kRoundTripsOpt{"--round-trips", "R", "ping-pong round trips for the latency (default 50, Pakin et al. §4.1)"};
// clang-format on

// `nicsim pt2pt` on `model` (from --preset and --set).
int run_pt2pt(const Options& opts, const sim::Model& model);

}  // namespace nicsim::tools
