// Simulator: GM's point-to-point protocol, the host-based baseline's network on seed 001's
// cluster (Model::p2p_flow == "gm"; sim/cluster.cc runs it).
//
// GM has reliability but no flow control (seed 001 §3, §4.3.1):
//
//   sender NIC    fetches each packet from host memory (DMA) into a send buffer and sends it at
//                 once, numbered per connection (destination); keeps a send record until a
//                 cumulative ACK covers it. On a NACK, or when its oldest record has waited
//                 gm_resend_timeout, it goes back to that packet and sends it and every later one
//                 again, each fetched from host memory again (go-back-N).
//   receiver NIC  gm_recv_buffers receive buffers shared by every sender. A packet that finds
//                 none free is dropped unseen; one out of sequence is dropped once the NIC has
//                 looked at it (tnr), with one NACK per gap; one in sequence holds its buffer
//                 until its DMA to the host is over, then is acknowledged.
//
// ACKs and NACKs are header-only packets that cost tns to send and tnr to receive, and never
// need a receive buffer (GM's control packets "need not wait on the DMA engine").
#pragma once

#include <cstdint>

namespace nicsim::sim {

struct GmStats {
    std::uint64_t data_sent = 0;  // data packets put on the wire, resends included
    std::uint64_t resent = 0;     // of which sent again after a go-back
    std::uint64_t acks = 0;
    std::uint64_t nacks = 0;
    std::uint64_t dropped_full = 0;   // arrived with every receive buffer busy
    std::uint64_t dropped_order = 0;  // arrived out of sequence, or again
    std::uint64_t nack_go_backs = 0;  // go-backs a NACK started
    std::uint64_t timeout_go_backs = 0;

    GmStats& operator+=(const GmStats& o) {
        data_sent += o.data_sent;
        resent += o.resent;
        acks += o.acks;
        nacks += o.nacks;
        dropped_full += o.dropped_full;
        dropped_order += o.dropped_order;
        nack_go_backs += o.nack_go_backs;
        timeout_go_backs += o.timeout_go_backs;
        return *this;
    }
};

}  // namespace nicsim::sim
