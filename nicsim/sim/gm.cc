// GM's point-to-point protocol on one node's NIC: sim/gm.h.
#include "sim/gm.h"

#include <algorithm>

namespace nicsim::sim {

GmNic::GmNic(const Model& model, Rank rank, GmNode& node)
    : model_(model),
      rank_(rank),
      node_(node),
      resend_(from_us(model.gm_resend_timeout)),
      send_free_(model.gm_send_buffers) {}

void GmNic::on_event(GmEvent event, std::uint32_t arg, Time now) {
    switch (event) {
        case GmEvent::dma:
            return dma(now);
        case GmEvent::dma_done:
            return dma_done(now);
        case GmEvent::rx_free:
            --rx_busy_;
            return;
        case GmEvent::timer:
            return timer(static_cast<Rank>(arg), now);
    }
}

// A message the host posted: its packets stay in host memory until the NIC fetches them.
void GmNic::post(Rank dst, Rank origin, Seq seq, std::uint64_t bytes, std::uint32_t packets) {
    GmOut& out = out_.get(dst);
    const std::uint64_t mtu = static_cast<std::uint64_t>(model_.mtu);
    for (std::uint32_t i = 0; i < packets; ++i) {
        GmRecord r;
        r.header.kind = PacketKind::unicast;
        r.header.seq = seq;
        r.header.step = i;
        r.header.origin = origin;
        r.header.payload_bytes =
            static_cast<std::uint32_t>(i + 1 < packets ? mtu : bytes - std::uint64_t{i} * mtu);
        if (i + 1 == packets) r.header.flags = kLastPacket;
        r.seq = out.next_seq++;
        out.records.push_back(r);
    }
    if (!out.listed) {
        out.listed = true;
        conns_.push_back(dst);
    }
    dma(node_.now());
    pump();
}

GmNic::GmRecord* GmNic::record(GmOut& out, std::uint32_t seq) {
    if (out.records.empty() || seq < out.records.front().seq) return nullptr;
    const std::size_t i = seq - out.records.front().seq;
    return i < out.records.size() ? &out.records[i] : nullptr;
}

std::optional<GmNic::Turn> GmNic::next_in_turn(std::size_t& turn, std::uint32_t GmOut::*next,
                                               GmRecord::State state) {
    for (std::size_t k = 0; k < conns_.size(); ++k) {
        const std::size_t at = (turn + k) % conns_.size();
        GmOut& out = *out_.find(conns_[at]);
        GmRecord* r = record(out, out.*next);
        if (r != nullptr && r->state == state) {
            turn = (at + 1) % conns_.size();
            return Turn{conns_[at], &out, r};
        }
    }
    return std::nullopt;
}

// The DMA engine between host memory and the NIC does one transfer at a time: it fetches the
// next packet of a connection into a free send buffer (the connections taken in turn, as Yu
// et al. §3 has the NIC take its send queues), or it moves a received packet to the host. When
// both wait, it alternates (GM's MCP dispatches "fair" send and receive DMA events), so a
// received packet never waits behind more than one fetch.
void GmNic::dma(Time now) {
    if (dma_.busy) return;
    const bool receive = !to_host_.empty() && to_host_.front().ready <= now;
    std::optional<Turn> fetch;
    if (send_free_ > 0 && !(receive && dma_.fetch)) {
        fetch = next_in_turn(fetch_turn_, &GmOut::fetch_next, GmRecord::in_host);
    }
    if (fetch) {
        GmRecord* r = fetch->record;
        r->state = GmRecord::fetching;
        r->fetch = ++fetch_count_;
        ++fetch->out->fetch_next;
        --send_free_;
        dma_.fetch = true;
        dma_.peer = fetch->peer;
        dma_.seq = r->seq;
        dma_.id = r->fetch;
        dma_.done = node_.fetch(now, r->header.payload_bytes);
    } else if (receive) {
        const GmToHost p = to_host_.front();
        to_host_.pop_front();
        dma_.fetch = false;
        dma_.peer = p.src;
        dma_.done = node_.store(p.header, now);
    } else {
        if (!to_host_.empty()) dma_at(to_host_.front().ready);
        return;
    }
    dma_.busy = true;
    node_.schedule(dma_.done, GmEvent::dma_done, 0);
}

void GmNic::dma_done(Time now) {
    dma_.busy = false;
    if (dma_.fetch) {
        GmOut* out = out_.find(dma_.peer);
        GmRecord* r = out ? record(*out, dma_.seq) : nullptr;
        if (r != nullptr && r->state == GmRecord::fetching && r->fetch == dma_.id) {
            r->state = GmRecord::ready;
        } else {
            ++send_free_;  // acknowledged or gone back over meanwhile: the buffer is free
        }
    } else {
        // In host memory (Yu et al. §3: the NIC DMAs the data, "and then acknowledges the
        // sender"): its receive buffer is free.
        --rx_busy_;
        GmIn& in = *in_.find(dma_.peer);
        ++in.dma_done;
        ack(dma_.peer, in);
    }
    dma(now);
    pump();
}

// The NIC sends ACKs and NACKs first, then the next packet of a connection whose next packet
// is in a send buffer, the connections taken in turn.
void GmNic::pump() {
    for (;;) {
        if (!control_.empty()) {
            GmControl& ctl = control_.front();
            GmTag tag;
            tag.kind = ctl.kind;
            if (ctl.kind == GmTag::ack) {
                tag.seq = in_.find(ctl.dst)->dma_done;
            } else {
                tag.seq = ctl.seq;
                tag.epoch = ctl.epoch;
            }
            PacketHeader h;
            h.kind = PacketKind::unicast;
            h.origin = rank_;
            if (node_.send_gm(ctl.dst, h, tag) == Status::again) return;
            if (ctl.kind == GmTag::ack) {
                in_.find(ctl.dst)->ack_queued = false;
                ++stats_.acks;
            } else {
                ++stats_.nacks;
            }
            control_.pop_front();
            continue;
        }
        const std::optional<Turn> turn = next_in_turn(send_turn_, &GmOut::next_tx, GmRecord::ready);
        if (!turn) return;
        const Rank dst = turn->peer;
        GmOut& out = *turn->out;
        GmRecord* next = turn->record;
        GmTag tag;
        tag.kind = GmTag::data;
        tag.seq = next->seq;
        tag.epoch = out.epoch;
        if (node_.send_gm(dst, next->header, tag) == Status::again) return;
        next->state = GmRecord::sent;
        next->left = node_.nic_free();
        ++out.next_tx;
        ++send_free_;
        ++stats_.data_sent;
        if (next->resend) ++stats_.resent;
        if (!out.timer) {
            out.timer = true;
            const GmRecord& oldest = out.records.front();
            const Time since = oldest.state == GmRecord::sent ? oldest.left : next->left;
            node_.schedule(since + resend_, GmEvent::timer, static_cast<std::uint32_t>(dst));
        }
        dma(node_.now());
    }
}

// Every packet before `seq` to `dst` has arrived: their send records go.
void GmNic::acked(GmOut& out, std::uint32_t seq) {
    while (!out.records.empty() && out.records.front().seq < seq) {
        if (out.records.front().state == GmRecord::ready) ++send_free_;
        out.records.pop_front();  // one being fetched frees its buffer when the fetch is over
    }
    out.next_tx = std::max(out.next_tx, seq);
    out.fetch_next = std::max(out.fetch_next, seq);
}

// Go-back-N: `seq` and every later packet to that destination are sent again, each fetched
// from host memory again; what was fetched and not yet sent is dropped from the NIC.
void GmNic::go_back(GmOut& out, std::uint32_t seq) {
    ++out.epoch;
    for (GmRecord& r : out.records) {
        if (r.seq < seq) continue;
        if (r.state == GmRecord::ready) ++send_free_;
        if (r.state == GmRecord::sent) r.resend = true;
        r.state = GmRecord::in_host;
    }
    out.next_tx = seq;
    out.fetch_next = seq;
}

void GmNic::timer(Rank dst, Time now) {
    GmOut& out = *out_.find(dst);
    out.timer = false;
    if (out.records.empty() || out.records.front().state != GmRecord::sent) return;
    const Time due = out.records.front().left + resend_;
    if (now < due) {
        out.timer = true;
        node_.schedule(due, GmEvent::timer, static_cast<std::uint32_t>(dst));
        return;
    }
    ++stats_.timeout_go_backs;
    go_back(out, out.records.front().seq);
    dma(node_.now());
    pump();
}

const char* packet_label(const PacketHeader& header, GmTag tag, const char* other) {
    return tag.kind == GmTag::ack              ? "ack"
           : tag.kind == GmTag::nack           ? "nack"
           : header.kind == PacketKind::credit ? "credit"
                                               : other;
}

void GmNic::arrival(Rank src, const PacketHeader& header, GmTag tag, Time now) {
    if (tag.kind == GmTag::data && rx_busy_ >= model_.gm_recv_buffers) {
        ++stats_.dropped_full;  // nowhere to put it: the NIC never sees it
        return;
    }
    const Time taken = node_.take_in(now, packet_label(header, tag, "receive"));
    if (tag.kind == GmTag::ack || tag.kind == GmTag::nack) {
        GmOut* out = out_.find(src);
        if (out == nullptr) {
            return node_.fail("node " + std::to_string(rank_) +
                              " got a GM control packet from node " + std::to_string(src) +
                              ", to which it never sent");
        }
        if (tag.kind == GmTag::ack) {
            acked(*out, tag.seq);
        } else if (tag.epoch == out->epoch) {  // a NACK from before the last go-back is stale
            acked(*out, tag.seq);
            if (tag.seq < out->next_tx) {
                ++stats_.nack_go_backs;
                go_back(*out, tag.seq);
            }
        }
        dma(now);
        pump();
        return;
    }
    GmIn& in = in_.get(src);
    ++rx_busy_;
    if (tag.seq != in.expected) {
        ++stats_.dropped_order;
        node_.schedule(taken, GmEvent::rx_free, 0);
        if (tag.seq < in.expected) {  // sent again needlessly: say again what arrived
            ack(src, in);
        } else if (!(in.nacked && in.nack_seq == in.expected && in.nack_epoch == tag.epoch)) {
            in.nacked = true;
            in.nack_seq = in.expected;
            in.nack_epoch = tag.epoch;
            control_.push_back({src, GmTag::nack, in.expected, tag.epoch});
        }
        pump();
        return;
    }
    ++in.expected;
    to_host_.push_back({src, header, taken});  // the NIC is done with it then
    if (!dma_.busy) dma_at(taken);
}

// The DMA engine looks again at `at` (once per time).
void GmNic::dma_at(Time at) {
    if (dma_.wake == at) return;
    dma_.wake = at;
    node_.schedule(at, GmEvent::dma, 0);
}

// One ACK waits per connection at most; it says what has arrived when it leaves.
void GmNic::ack(Rank src, GmIn& in) {
    if (in.ack_queued) return;
    in.ack_queued = true;
    control_.push_back({src, GmTag::ack, 0, 0});
}

bool GmNic::idle() const {
    if (!control_.empty() || rx_busy_ != 0 || dma_.busy || !to_host_.empty()) {
        return false;
    }
    for (std::size_t i = 0; i < out_.size(); ++i) {
        if (!out_[static_cast<std::uint32_t>(i)].records.empty()) return false;
    }
    return true;
}

}  // namespace nicsim::sim
