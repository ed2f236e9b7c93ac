#include "sim/model.h"

#include <array>
#include <charconv>
#include <cmath>
#include <cstdio>

namespace nicsim::sim {

namespace {

// clang-format off
const std::array kParams = {
    ModelParam{"topology", "", "crossbar", "network shape: crossbar (one switch), hypercube (Bhoedjang et al.: 8-port switches in a d-cube, e-cube routing), irregular (Kesavan and Panda: random switch graph, up*/down* routing) or fattree (Coll et al.: Quadrics, a fat tree with hardware multicast; switch_ports / 2 links down per switch)", &Model::topology, 0, 0, "crossbar|hypercube|irregular|fattree"},
    ModelParam{"nodes", "", "64", "nodes in the cluster (the --nodes option sets it too)", &Model::nodes, 1, 1 << 20, ""},
    ModelParam{"switch_ports", "", "8", "ports per switch (hypercube, irregular and fattree)", &Model::switch_ports, 2, 256, ""},
    ModelParam{"hosts_per_switch", "", "4", "nodes on each switch of an irregular network", &Model::hosts_per_switch, 1, 255, ""},
    ModelParam{"link_bw", "MB/s", "160", "link bandwidth, each direction", &Model::link_bw, 1e-3, 1e9, ""},
    ModelParam{"switch_latency", "us", "0.55", "time for a packet's head to cross a switch", &Model::switch_latency, 0, 1e6, ""},
    ModelParam{"mtu", "bytes", "1024", "largest payload of one packet; messages are cut into packets of this size", &Model::mtu, 1, 1 << 24, ""},
    ModelParam{"header_bytes", "bytes", "16", "bytes a packet carries on the wire besides its payload", &Model::header_bytes, 0, 1 << 16, ""},
    ModelParam{"ts", "us", "5", "host send overhead per message", &Model::ts, 0, 1e9, ""},
    ModelParam{"tr", "us", "5", "host receive overhead per message", &Model::tr, 0, 1e9, ""},
    ModelParam{"host_send", "", "pio", "how the host moves a packet to the NIC: pio (the host CPU writes it, busy for its length) or dma (the NIC fetches it)", &Model::host_send, 0, 0, "pio|dma"},
    ModelParam{"pio_bw", "MB/s", "0", "programmed-I/O bandwidth from host to NIC (0: not modeled)", &Model::pio_bw, 0, 1e9, ""},
    ModelParam{"dma_bw", "MB/s", "0", "DMA bandwidth across the I/O bus, either way (0: not modeled)", &Model::dma_bw, 0, 1e9, ""},
    ModelParam{"copy_bw", "MB/s", "0", "host memory copy bandwidth, for data the host copies out of a staging area (0: not modeled)", &Model::copy_bw, 0, 1e9, ""},
    ModelParam{"tns", "us", "3", "NIC processor time to send one packet", &Model::tns, 0, 1e9, ""},
    ModelParam{"tnr", "us", "2", "NIC processor time to receive one packet", &Model::tnr, 0, 1e9, ""},
    ModelParam{"nic_timing", "", "serial", "serial: one NIC processor spends tns per packet sent and tnr per packet received, one after the other; steps: Kesavan and Panda §4.1's pipelined model, where a NIC sends one packet per step, a step lasting until the packet is in the next NIC (tns, the wire, its tnr), and receives while it sends", &Model::nic_timing, 0, 0, "serial|steps"},
    ModelParam{"credits", "packets", "8", "receive buffers a NIC keeps for each sender: each sender's window", &Model::credits, 1, 65535, ""},
    ModelParam{"low_water", "packets", "4", "a sender down to this many credits is sent an explicit credit update", &Model::low_water, 0, 65534, ""},
    ModelParam{"send_buffers", "packets", "16", "NIC buffers the host fills with packets to send", &Model::send_buffers, 1, 1 << 20, ""},
    ModelParam{"host_buffers", "packets", "1024", "receive buffers each host keeps posted to its NIC", &Model::host_buffers, 1, 1 << 24, ""},
    ModelParam{"p2p_flow", "", "credits", "how host-to-host messages (host-based allgathers and barriers; a broadcast with host forwarding refuses gm) cross the NICs: credits (LFC, Bhoedjang et al. §3: a window of `credits` per pair, nothing lost) or gm (GM, Yu et al. §3, §4.3.1: no window; gm_recv_buffers shared by all senders, a packet arriving when none is free or out of sequence is dropped; sequence numbers, cumulative ACKs, go-back-N after a NACK or gm_resend_timeout, resent packets fetched from host memory again; one DMA at a time, fetches and receives alternating)", &Model::p2p_flow, 0, 0, "credits|gm"},
    ModelParam{"gm_send_buffers", "packets", "2", "p2p_flow=gm: NIC send buffers the DMA engine fetches packets into from host memory, the next ones to send; a packet holds one until it has left", &Model::gm_send_buffers, 1, 65535, ""},
    ModelParam{"gm_recv_buffers", "packets", "2", "p2p_flow=gm: NIC receive buffers shared by every sender; a packet holds one from its arrival until its DMA to the host is over", &Model::gm_recv_buffers, 1, 65535, ""},
    ModelParam{"gm_resend_timeout", "us", "1000", "p2p_flow=gm: a sender whose oldest unacknowledged packet has waited this long since it left sends it and every later one again (go-back-N)", &Model::gm_resend_timeout, 1e-3, 1e9, ""},
    ModelParam{"nack_timeout", "us", "1000", "a collective that hears nothing for this long asks its peers for the packets it misses (Yu et al. §4.3.1)", &Model::nack_timeout, 1e-3, 1e9, ""},
    ModelParam{"deadlock_recovery", "", "0", "1: LFC's deadlock channels and recovery (Bhoedjang et al. §4), so any multicast tree is safe (FPFS forwarding, at most 65536 nodes); 0: the basic protocol", &Model::deadlock_recovery, 0, 1, ""},
    ModelParam{"recovery_timeout", "us", "0", "with deadlock_recovery: 0 suspects deadlock as soon as a blocked-sends queue is non-empty (Bhoedjang et al. §4.1); T > 0 only once a queue has stayed blocked, no packet leaving it on a credit, over ticks T apart (between T and 2T; the refinement of Bhoedjang et al. §5.2)", &Model::recovery_timeout, 0, 1e9, ""},
    ModelParam{"fm_host_send", "us", "1.0", "FM: host time per FM_send besides moving the packet (Pakin et al. §4.3)", &Model::fm_host_send, 0, 1e9, ""},
    ModelParam{"fm_host_extract", "us", "1.0", "FM: host time per packet FM_extract takes from the host receive queue, empty handler included", &Model::fm_host_extract, 0, 1e9, ""},
    ModelParam{"fm_host_buffer", "us", "0.1", "FM: host time per packet for queue bookkeeping, each side (Pakin et al. §4.4)", &Model::fm_host_buffer, 0, 1e9, ""},
    ModelParam{"fm_host_flow", "us", "0.1", "FM: host time per packet for return-to-sender bookkeeping, each side (Pakin et al. §4.5)", &Model::fm_host_flow, 0, 1e9, ""},
    ModelParam{"fm_sync", "us", "0.3", "FM: one host access to a word of LANai memory across the I/O bus", &Model::fm_sync, 0, 1e9, ""},
    ModelParam{"fm_lanai_send", "us", "3.0", "FM: LCP time per packet sent besides its DMA setup", &Model::fm_lanai_send, 0, 1e9, ""},
    ModelParam{"fm_lanai_recv", "us", "3.0", "FM: LCP time per packet received besides its DMA setup", &Model::fm_lanai_recv, 0, 1e9, ""},
    ModelParam{"fm_lanai_dma", "us", "0.32", "FM: LCP time to set up one DMA (channel or host)", &Model::fm_lanai_dma, 0, 1e9, ""},
    ModelParam{"fm_lanai_loop", "us", "0.7", "FM: one more pass of the LCP main loop: per packet with --loop baseline, per change between sending and receiving with streamed", &Model::fm_lanai_loop, 0, 1e9, ""},
    ModelParam{"fm_lanai_buffer", "us", "0.28", "FM: LCP time per packet for queue bookkeeping", &Model::fm_lanai_buffer, 0, 1e9, ""},
    ModelParam{"fm_lanai_switch", "us", "3.0", "FM: LCP time per packet received to interpret it (--interpret on)", &Model::fm_lanai_switch, 0, 1e9, ""},
    ModelParam{"fm_sendq", "packets", "64", "FM: slots of the LANai send queue", &Model::fm_sendq, 1, 1 << 20, ""},
    ModelParam{"fm_recvq", "packets", "256", "FM: slots of the host receive queue (DMA region)", &Model::fm_recvq, 1, 1 << 20, ""},
    ModelParam{"fm_rejectq", "packets", "64", "FM: slots of the reject queue: packets a sender may have unacknowledged", &Model::fm_rejectq, 1, 1 << 20, ""},
    ModelParam{"fm_ack_every", "packets", "16", "FM: a receiver sends an acknowledgement packet once this many from one sender are unacknowledged", &Model::fm_ack_every, 1, 1 << 20, ""},
    ModelParam{"fm_ack_delay", "us", "20", "FM: a receiver that has taken no packet for this long acknowledges what it holds unacknowledged", &Model::fm_ack_delay, 0, 1e9, ""},
    ModelParam{"seed", "", "1", "seed of every random choice (irregular topology, random trees)", &Model::seed, 0, 1.8e19, ""},
};

const std::array kLfcMyrinet = {
    PresetValue{"topology", "hypercube", "Bhoedjang et al. §5: NIs in a hypercube of sixteen 8-port switches"},
    PresetValue{"nodes", "64", "Bhoedjang et al. §5: 64-node cluster"},
    PresetValue{"switch_ports", "8", "Bhoedjang et al. §5: 8-port switches"},
    PresetValue{"link_bw", "160", "Bhoedjang et al. §5: 1.28 Gbit/s links"},
    PresetValue{"switch_latency", "0.55", "Pakin et al. App. A: 550 ns per Myrinet switch"},
    PresetValue{"mtu", "1024", "Bhoedjang et al. §5.1: 1 KB packets"},
    PresetValue{"header_bytes", "16", "assumed: route, type and CRC bytes of a Myrinet packet"},
    PresetValue{"host_send", "pio", "Bhoedjang et al. §5: the host moves data to the NI with programmed I/O"},
    PresetValue{"pio_bw", "60", "assumed: programmed-I/O writes over 33 MHz/32-bit PCI (133 MB/s peak)"},
    PresetValue{"dma_bw", "110", "assumed: NI DMA into host memory over 33 MHz/32-bit PCI"},
    PresetValue{"ts", "1.5", "calibrated: host send path so that one hop costs about 10 us (Bhoedjang et al. §3.1)"},
    PresetValue{"tr", "1.5", "calibrated: polling and one copy per packet (Bhoedjang et al. §5)"},
    PresetValue{"tns", "5.5", "calibrated: LANai 4.1 send per packet; with link time it gives the 42.9 MB/s of Fig. 4 on 4 nodes"},
    PresetValue{"tnr", "3.0", "calibrated: LANai 4.1 receive per packet; gives the 22 us of Fig. 4 on 4 nodes"},
    PresetValue{"credits", "8", "Bhoedjang et al. §3.3, §5.1: 8 receive buffers (credits) per sender"},
    PresetValue{"low_water", "4", "assumed: half the window (Bhoedjang et al. gives no value)"},
    PresetValue{"send_buffers", "16", "assumed (Bhoedjang et al. gives no value)"},
};

const std::array kKesavan97 = {
    PresetValue{"topology", "irregular", "Kesavan and Panda §5.2: irregular switch-based network, up*/down* routing"},
    PresetValue{"nodes", "64", "Kesavan and Panda §5.2: 64 processors"},
    PresetValue{"switch_ports", "8", "Kesavan and Panda §5.2: eight-port switches"},
    PresetValue{"hosts_per_switch", "4", "Kesavan and Panda §5.2: 64 nodes on 16 switches"},
    PresetValue{"link_bw", "160", "assumed: Myrinet links of 1997 (Kesavan and Panda gives no value)"},
    PresetValue{"switch_latency", "0.55", "Pakin et al. App. A: 550 ns per Myrinet switch"},
    PresetValue{"mtu", "64", "Kesavan and Panda §5.2: 64-byte packets"},
    PresetValue{"header_bytes", "0", "Kesavan and Panda §5.2: the 64 bytes are the whole packet"},
    PresetValue{"ts", "12.5", "Kesavan and Panda §5.2: t_s = 12.5 us"},
    PresetValue{"tr", "12.5", "Kesavan and Panda §5.2: t_r = 12.5 us"},
    PresetValue{"host_send", "dma", "Kesavan and Panda §2.2: the coprocessor DMAs packets from host memory"},
    PresetValue{"pio_bw", "0", "Kesavan and Panda §2.5: t_s covers moving the message to the NIC"},
    PresetValue{"dma_bw", "0", "Kesavan and Panda §2.5: t_s and t_r cover the host-NIC transfers"},
    PresetValue{"tns", "3.0", "Kesavan and Panda §5.2: t_ns = 3.0 us"},
    PresetValue{"tnr", "2.0", "Kesavan and Panda §5.2: t_nr = 2.0 us"},
    PresetValue{"credits", "65535", "Kesavan and Panda has no flow control: the largest window, which no message here fills"},
    PresetValue{"low_water", "32767", "half the window: no credit packet before 32768 packets"},
    PresetValue{"send_buffers", "64", "assumed: 4 KB of NIC memory for the host's packets (Kesavan and Panda gives no value)"},
};

// Yu et al.'s cluster. The paper gives the hardware, not the costs: the NIC, host and I/O-bus
// costs are assumptions, said so beside each (README: what the allgather reproductions show).
const std::array kGmLanai9 = {
    PresetValue{"topology", "crossbar", "Yu et al. §6: 16 nodes on one Myrinet 2000 switch (a 16-port crossbar)"},
    PresetValue{"nodes", "16", "Yu et al. §6: 16-node cluster"},
    PresetValue{"link_bw", "250", "Yu et al. §6: Myrinet 2000, 2 Gbit/s links"},
    PresetValue{"switch_latency", "0.5", "assumed: a Myrinet 2000 crossbar (Pakin et al. App. A: 550 ns for 1995's switch)"},
    PresetValue{"mtu", "4096", "Yu et al. §6.1: messages over 4 KB take several packets"},
    PresetValue{"header_bytes", "16", "assumed: route, type and CRC bytes of a Myrinet packet"},
    PresetValue{"host_send", "dma", "Yu et al. §3: GM DMAs the data from the host buffer into a send packet"},
    PresetValue{"pio_bw", "0", "Yu et al. §3: the host does not write packets itself"},
    PresetValue{"dma_bw", "220", "assumed: LANai 9.1 DMA in a 64-bit/33 MHz PCI slot (264 MB/s peak), both directions sharing the bus"},
    PresetValue{"copy_bw", "300", "assumed: memcpy of a 1 GHz Pentium-III with PC133 memory"},
    PresetValue{"ts", "1.0", "assumed: GM send event from a 1 GHz Pentium-III (Yu et al. §6)"},
    PresetValue{"tr", "1.0", "assumed: GM receive event polled by a 1 GHz Pentium-III (Yu et al. §6)"},
    PresetValue{"tns", "1.4", "assumed: lfc-myrinet's LANai 4.1 cost scaled by clock, 33 to 133 MHz (LANai 9.1, Yu et al. §6)"},
    PresetValue{"tnr", "0.75", "assumed: lfc-myrinet's LANai 4.1 cost scaled by clock, 33 to 133 MHz (LANai 9.1, Yu et al. §6)"},
    PresetValue{"credits", "16", "unused by host messages (p2p_flow=gm); LFC's window for NIC multicast: assumed, one that 2 MB of NIC SRAM holds for 16 senders"},
    PresetValue{"low_water", "8", "half the window"},
    PresetValue{"send_buffers", "32", "unused by host messages (p2p_flow=gm: gm_send_buffers); LFC's, for NIC multicast: assumed, send packets in 2 MB of NIC SRAM (Yu et al. §6)"},
    PresetValue{"p2p_flow", "gm", "Yu et al. §3, §4.3.1: the host-based baseline runs over GM, which has no flow control: a congested receiver drops packets, which are sent again"},
    PresetValue{"gm_send_buffers", "2", "GM-1 source (gm_lanai_dump.h, a copy of the MCP's globals): send_chunk[2], two send staging buffers; assumed unchanged in GM 2.0.3 on LANai 9"},
    PresetValue{"gm_recv_buffers", "2", "GM-1 source (gm_lanai_dump.h, a copy of the MCP's globals): recv_chunk[2], two receive staging buffers; assumed unchanged in GM 2.0.3 on LANai 9"},
    PresetValue{"gm_resend_timeout", "1000", "assumed: GM's resend interval is not in the sources found (its send record keeps a resend_time)"},
};

// Coll et al.'s cluster. The paper measures the collectives, not the parts: the link, switch and
// packet figures come from its reference [12] (Petrini et al., IEEE Micro 2002), the host and
// NIC costs are calibrated to its Fig. 8 and 10, as each value says.
const std::array kQuadricsElan3 = {
    PresetValue{"topology", "fattree", "Coll et al. §2: QsNet, a quaternary fat tree of Elite switches"},
    PresetValue{"nodes", "32", "Coll et al. §6: 32-node cluster"},
    PresetValue{"switch_ports", "8", "Coll et al. §2: 4 x 4 Elite switches (4 links down, 4 up)"},
    PresetValue{"link_bw", "400", "assumed: QsNet links carry 400 MB/s each way (Coll et al. ref. [12])"},
    PresetValue{"switch_latency", "0.035", "assumed: about 35 ns through an Elite switch (Coll et al. ref. [12])"},
    PresetValue{"mtu", "320", "assumed: an Elan3 packet carries up to 320 bytes (Coll et al. ref. [12])"},
    PresetValue{"header_bytes", "16", "assumed: route tags, header and CRC of a QsNet packet"},
    PresetValue{"dma_bw", "315", "calibrated: Elan3 DMA over 66 MHz/64-bit PCI (Coll et al. §6) so that a 256 KB hardware multicast peaks near Fig. 10's 306 MB/s"},
    PresetValue{"ts", "0.5", "calibrated: posting an Elan3 transaction from a 1.13 GHz Pentium-III, with tr so that the software barrier is near Fig. 8's 17 us on 32 nodes (ours 19)"},
    PresetValue{"tr", "0.5", "calibrated: the host polling an Elan3 event, with ts (Fig. 8)"},
    PresetValue{"tns", "0.6", "calibrated: Elan3 per packet sent, so that the one-step hardware barrier is near Fig. 8's 4 us"},
    PresetValue{"tnr", "0.6", "calibrated: Elan3 per packet received, with tns (Fig. 8)"},
};

// Pakin et al.'s pair of workstations. Costs the paper gives are taken as given (MB there is 2^20
// bytes: 23.9 MB/s is 25.06 here); the per-packet software costs it does not give are either
// calibrated on a row of Table 4 other than the full FM layer's, or assumed from the machine's
// speed, as each value says. The full layer's row (t0 4.1 us, r-inf 21.4 MB/s, n-half 54) is
// not used for any value.
const std::array kFmSparc = {
    PresetValue{"topology", "crossbar", "Pakin et al. §4.1: the hosts on one 8-port Myrinet switch"},
    PresetValue{"nodes", "2", "Pakin et al. §4.1: a pair of workstations"},
    PresetValue{"link_bw", "80", "Pakin et al. App. A: 12.5 ns per byte (76.3 MB/s of 2^20 bytes, §2)"},
    PresetValue{"switch_latency", "0.55", "Pakin et al. App. A: t_switch = 550 ns"},
    PresetValue{"mtu", "2048", "assumed: the largest size Pakin et al. measures is not given; every size pt2pt measures (16..2048) is one packet, as in §4.1"},
    PresetValue{"header_bytes", "16", "assumed: Myrinet route and type, FM handler and length, CRC (Pakin et al. gives no size)"},
    PresetValue{"host_send", "pio", "Pakin et al. §4.3: hybrid, the host writes packets into LANai memory"},
    PresetValue{"pio_bw", "25.06", "Pakin et al. §2: processor-mediated SBus writes reach 23.9 MB/s (2^20)"},
    PresetValue{"dma_bw", "41.94", "Pakin et al. §2: SBus burst DMA 40-54 MB/s (2^20); the low end, a LANai DMA of one packet"},
    PresetValue{"copy_bw", "35.96", "Pakin et al. §2: SPARCstation 20 memory 80 MB/s reads, 60 MB/s writes (2^20); a copy reads and writes each byte"},
    PresetValue{"ts", "1.0", "assumed: LFC's send overhead on this host as FM's (fm_host_send)"},
    PresetValue{"tr", "1.0", "assumed: LFC's receive overhead on this host as FM's (fm_host_extract)"},
    PresetValue{"tns", "3.32", "assumed: the LANai's send work as FM's (fm_lanai_send + fm_lanai_dma)"},
    PresetValue{"tnr", "3.32", "assumed: the LANai's receive work as FM's (fm_lanai_recv + fm_lanai_dma)"},
    PresetValue{"credits", "8", "Bhoedjang et al. §5.1: LFC's 8 credits per sender"},
    PresetValue{"low_water", "4", "assumed: half the window"},
    PresetValue{"send_buffers", "64", "assumed: as FM's LANai send queue (fm_sendq)"},
    PresetValue{"fm_host_send", "1.0", "assumed: about 50 cycles of a 50 MHz SuperSPARC (§2), as fm_host_extract; bounded by Table 4 row 3: its t0 (3.5 us) is row 2's, so the LCP, not the host, sets the small-packet time, and its n-half (44 bytes at 21.2 MB/s) needs the host's time per 44-byte packet, fm_host_send + fm_sync + 60 bytes at pio_bw, within 2 x 44 / 22.2 = 3.96 us: fm_host_send <= 1.27 us"},
    PresetValue{"fm_host_extract", "1.0", "assumed: about 50 cycles of a 50 MHz SuperSPARC (§2) to poll the queue and call an empty handler"},
    PresetValue{"fm_host_buffer", "0.1", "assumed: a ring index update and bound check, about 5 cycles of a 50 MHz SuperSPARC (§2)"},
    PresetValue{"fm_host_flow", "0.1", "assumed: reserving or counting a reject queue slot, about 5 cycles of a 50 MHz SuperSPARC (§2)"},
    PresetValue{"fm_sync", "0.3", "Pakin et al. §2: reading a LANai status word takes about 15 processor cycles (50 MHz)"},
    PresetValue{"fm_lanai_send", "3.0", "calibrated: Table 4 row 2 (streamed, LANai to LANai): t0 = 3.5 us"},
    PresetValue{"fm_lanai_recv", "3.0", "assumed: as fm_lanai_send (Fig. 2: the receive loop mirrors the send loop)"},
    PresetValue{"fm_lanai_dma", "0.32", "Pakin et al. App. A: DMA setup t_DMA = 8 cycles x 40 ns"},
    PresetValue{"fm_lanai_loop", "0.7", "calibrated: Table 4 rows 1-2, baseline t0 4.2 us less streamed 3.5 us"},
    PresetValue{"fm_lanai_buffer", "0.28", "assumed: two LANai instructions, one every 3-4 cycles of 40 ns (§2)"},
    PresetValue{"fm_lanai_switch", "3.0", "derived: Table 4 row 6's t0 less row 4's, 6.8 - 3.8 us (the switch() in the LCP's receive loop is the only change between them, paid once per packet received, §4.4)"},
    PresetValue{"fm_sendq", "64", "assumed: 8 KB of the LANai's 128 KB (§4.4 Fig. 5) in 128-byte frames"},
    PresetValue{"fm_recvq", "256", "assumed: 32 KB of pinned DMA region in 128-byte frames (Pakin et al. gives no size)"},
    PresetValue{"fm_rejectq", "64", "assumed: as many as the LANai send queue (Pakin et al. gives no size)"},
    PresetValue{"fm_ack_every", "16", "assumed: a quarter of the reject queue, so that a stream never waits for an acknowledgement"},
    PresetValue{"fm_ack_delay", "20", "assumed: several packet times, so that only a pause flushes acknowledgements (Pakin et al. gives no rule)"},
};

const std::array kPresets = {
    Preset{"lfc-myrinet", "Bhoedjang et al.: LFC on 64 Pentium Pros, LANai 4.1 NIs, 33 MHz/32-bit PCI, Myrinet hypercube", kLfcMyrinet},
    Preset{"kesavan97", "Kesavan and Panda §5.2: 64 nodes on 16 eight-port switches, irregular, 64-byte packets", kKesavan97},
    Preset{"gm-lanai9", "Yu et al. §6: 16 nodes, 1 GHz Pentium-III, LANai 9.1 at 133 MHz with 2 MB SRAM, Myrinet 2000, GM 2.0.3", kGmLanai9},
    Preset{"fm-sparc", "Pakin et al. §2, §4, App. A: two SPARCstation 20s, Myrinet LANai 2.3 on the SBus, one 8-port switch", kFmSparc},
    Preset{"quadrics-elan3", "Coll et al. §6: 32 nodes, 2 x 1.13 GHz Pentium-III, Elan3 QM-400 on 66 MHz/64-bit PCI, QsNet fat tree", kQuadricsElan3},
};
// clang-format on

template <typename T>
bool parse_number(std::string_view text, T* out) {
    const char* end = text.data() + text.size();
    const auto [ptr, ec] = std::from_chars(text.data(), end, *out);
    return ec == std::errc{} && ptr == end;
}

// Whole numbers below 10^15 in full (1048576, not 1.04858e+06); others as %g.
std::string format(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, v == std::floor(v) && std::fabs(v) < 1e15 ? "%.0f" : "%g", v);
    return buf;
}

}  // namespace

std::span<const ModelParam> model_params() { return kParams; }

const ModelParam* find_model_param(std::string_view name) {
    for (const ModelParam& p : kParams) {
        if (p.name == name) return &p;
    }
    return nullptr;
}

bool set_model_param(Model& model, std::string_view name, std::string_view value,
                     std::string* why) {
    const std::string quoted = std::string(name) + "=" + std::string(value);
    const ModelParam* param = find_model_param(name);
    if (param == nullptr) {
        *why = quoted + ": unknown model parameter '" + std::string(name) + "' (see nicsim params)";
        return false;
    }
    const auto range_error = [&] {
        *why = quoted + ": out of range " + format(param->min) + ".." + format(param->max);
        return false;
    };
    return std::visit(
        [&](auto field) {
            using T = std::remove_cvref_t<decltype(model.*field)>;
            if constexpr (std::is_same_v<T, std::string>) {
                std::string_view rest = param->choices;
                for (;;) {
                    const auto bar = rest.find('|');
                    if (rest.substr(0, bar) == value) {
                        model.*field = std::string(value);
                        return true;
                    }
                    if (bar == std::string_view::npos) break;
                    rest.remove_prefix(bar + 1);
                }
                *why = quoted + ": not one of " + std::string(param->choices);
                return false;
            } else {
                T v{};
                if (!parse_number(value, &v) ||
                    (std::is_floating_point_v<T> && !std::isfinite(v))) {
                    // A whole number all the same (below 0 for an unsigned one, or too large for
                    // its type) is out of range; anything else is not what the parameter takes.
                    double d{};
                    if (std::is_integral_v<T> && parse_number(value, &d) && std::isfinite(d) &&
                        d == std::floor(d)) {
                        return range_error();
                    }
                    *why = quoted + (std::is_integral_v<T> ? ": not an integer" : ": not a number");
                    return false;
                }
                if (static_cast<double>(v) < param->min || static_cast<double>(v) > param->max) {
                    return range_error();
                }
                model.*field = v;
                return true;
            }
        },
        param->field);
}

bool set_model_param(Model& model, std::string_view assignment, std::string* why) {
    const auto eq = assignment.find('=');
    if (eq == std::string_view::npos) {
        *why = std::string(assignment) + ": expected NAME=VALUE";
        return false;
    }
    return set_model_param(model, assignment.substr(0, eq), assignment.substr(eq + 1), why);
}

bool check_model(const Model& model, std::string* why) {
    if (model.low_water >= model.credits) {
        *why = "low_water " + std::to_string(model.low_water) + " must be below credits " +
               std::to_string(model.credits);
        return false;
    }
    return true;
}

std::string model_param_value(const Model& model, const ModelParam& param) {
    return std::visit(
        [&](auto field) -> std::string {
            using T = std::remove_cvref_t<decltype(model.*field)>;
            if constexpr (std::is_same_v<T, std::string>) {
                return model.*field;
            } else if constexpr (std::is_same_v<T, double>) {
                return format(model.*field);
            } else {
                return std::to_string(model.*field);
            }
        },
        param.field);
}

std::span<const Preset> presets() { return kPresets; }

const Preset* find_preset(std::string_view name) {
    for (const Preset& p : kPresets) {
        if (p.name == name) return &p;
    }
    return nullptr;
}

Model default_model() {
    Model model{};
    std::string why;
    for (const ModelParam& p : kParams) set_model_param(model, p.name, p.default_value, &why);
    return model;
}

Model preset_model(const Preset& preset) {
    Model model = default_model();
    std::string why;
    for (const PresetValue& v : preset.values) set_model_param(model, v.param, v.value, &why);
    return model;
}

}  // namespace nicsim::sim
