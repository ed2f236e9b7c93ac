// Simulator: the model of a cluster, every parameter declared once.
//
// A parameter's declaration (name, unit, default, help, range) feeds `--set`, `--help`, the man
// page and the preset listing, so they cannot drift apart. A preset is a named set of values,
// each with the source it was taken from, applied over the defaults.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <variant>

#include "core/packet.h"

namespace nicsim::sim {

struct Model {
    // network
    std::string topology;
    int nodes;
    int switch_ports;
    int hosts_per_switch;
    double link_bw;         // MB/s
    double switch_latency;  // us
    int mtu;                // payload bytes per packet
    int header_bytes;       // wire bytes per packet besides the payload
    // host
    double ts;  // us per message sent
    double tr;  // us per message received
    std::string host_send;
    double pio_bw;  // MB/s, 0: not modeled
    double dma_bw;  // MB/s, 0: not modeled
    double copy_bw;  // MB/s, 0: not modeled
    // NIC
    double tns;  // us per packet sent
    double tnr;  // us per packet received
    std::string nic_timing;  // serial or steps
    int credits;
    int low_water;
    int send_buffers;
    int host_buffers;
    std::string p2p_flow;      // host-to-host messages: "credits" (LFC) or "gm" (sim/gm.h)
    int gm_send_buffers;       // packets
    int gm_recv_buffers;       // packets
    double gm_resend_timeout;  // us
    double nack_timeout;  // us
    int deadlock_recovery;  // 0 or 1: Bhoedjang et al. §4's deadlock channels and recovery
    double recovery_timeout;  // us; 0: detection at once
    // Fast Messages 1.0 (Pakin et al.; sim/fm_layer.h)
    double fm_host_send;     // us
    double fm_host_extract;  // us
    double fm_host_buffer;   // us
    double fm_host_flow;     // us
    double fm_sync;          // us
    double fm_lanai_send;    // us
    double fm_lanai_recv;    // us
    double fm_lanai_dma;     // us
    double fm_lanai_loop;    // us
    double fm_lanai_buffer;  // us
    double fm_lanai_switch;  // us
    int fm_sendq;            // packets
    int fm_recvq;            // packets
    int fm_rejectq;          // packets
    int fm_ack_every;        // packets
    double fm_ack_delay;     // us
    // run
    std::uint64_t seed;
};

struct ModelParam {
    std::string_view name;
    std::string_view unit;  // "us", "MB/s", "bytes", "packets", or empty
    std::string_view default_value;
    std::string_view help;
    std::variant<double Model::*, int Model::*, std::uint64_t Model::*, std::string Model::*> field;
    double min = 0;          // numbers: the accepted range
    double max = 1e18;
    std::string_view choices;  // strings: the accepted values, '|'-separated
};

std::span<const ModelParam> model_params();
const ModelParam* find_model_param(std::string_view name);

// Sets `name` from text. False, with one line in *why naming the value and the reason, when the
// parameter is unknown or the value does not parse or is out of range.
bool set_model_param(Model& model, std::string_view name, std::string_view value, std::string* why);
// The same from "NAME=VALUE", as --set gives it; *why also names an assignment without '='.
bool set_model_param(Model& model, std::string_view assignment, std::string* why);
// The value of a parameter as text, as --set would take it.
std::string model_param_value(const Model& model, const ModelParam& param);
// What each parameter's range cannot say: false, with one line in *why, when two parameters
// contradict each other (low_water must be below credits).
bool check_model(const Model& model, std::string* why);

struct PresetValue {
    std::string_view param;
    std::string_view value;
    std::string_view source;
};
struct Preset {
    std::string_view name;
    std::string_view description;
    std::span<const PresetValue> values;
};

std::span<const Preset> presets();
const Preset* find_preset(std::string_view name);

Model default_model();
Model preset_model(const Preset& preset);

}  // namespace nicsim::sim
