// The model's declarations: every default and every preset value is valid, presets name only
// declared parameters, and bad values are refused with a line that names them.
#include <gtest/gtest.h>

#include <set>

#include "sim/model.h"

namespace nicsim::sim {
namespace {

TEST(Model, EveryDefaultAndPresetValueIsValid) {
    Model m = default_model();
    std::set<std::string_view> names;
    for (const ModelParam& p : model_params()) {
        std::string why;
        EXPECT_TRUE(set_model_param(m, p.name, p.default_value, &why)) << why;
        EXPECT_TRUE(names.insert(p.name).second) << "declared twice: " << p.name;
        EXPECT_FALSE(p.help.empty()) << p.name;
    }
    for (const Preset& preset : presets()) {
        std::set<std::string_view> seen;
        for (const PresetValue& v : preset.values) {
            std::string why;
            EXPECT_TRUE(set_model_param(m, v.param, v.value, &why)) << preset.name << ": " << why;
            EXPECT_FALSE(v.source.empty()) << preset.name << " " << v.param;
            EXPECT_TRUE(seen.insert(v.param).second) << preset.name << " sets " << v.param << " twice";
        }
    }
}

TEST(Model, PresetsCarryThePapersValues) {
    const Model lfc = preset_model(*find_preset("lfc-myrinet"));
    EXPECT_EQ(lfc.topology, "hypercube");
    EXPECT_EQ(lfc.nodes, 64);
    EXPECT_EQ(lfc.mtu, 1024);
    EXPECT_EQ(lfc.credits, 8);
    EXPECT_DOUBLE_EQ(lfc.link_bw, 160.0);  // 1.28 Gbit/s
    const Model k97 = preset_model(*find_preset("kesavan97"));
    EXPECT_EQ(k97.topology, "irregular");
    EXPECT_EQ(k97.nodes, 64);
    EXPECT_EQ(k97.mtu, 64);
    EXPECT_DOUBLE_EQ(k97.ts, 12.5);
    EXPECT_DOUBLE_EQ(k97.tr, 12.5);
    EXPECT_DOUBLE_EQ(k97.tns, 3.0);
    EXPECT_DOUBLE_EQ(k97.tnr, 2.0);
    const Model gm = preset_model(*find_preset("gm-lanai9"));
    EXPECT_EQ(gm.topology, "crossbar");
    EXPECT_EQ(gm.nodes, 16);
    EXPECT_EQ(gm.mtu, 4096);
    EXPECT_DOUBLE_EQ(gm.link_bw, 250.0);  // 2 Gbit/s
    EXPECT_EQ(gm.host_send, "dma");
    EXPECT_EQ(gm.p2p_flow, "gm");  // Yu et al. §4.3.1: the host-based baseline has no flow control
    EXPECT_EQ(gm.gm_recv_buffers, 2);
    EXPECT_EQ(gm.gm_send_buffers, 2);
    EXPECT_EQ(default_model().p2p_flow, "credits");
    EXPECT_EQ(find_preset("nope"), nullptr);
}

TEST(Model, BadValuesAreRefusedWithTheReason) {
    Model m = default_model();
    std::string why;
    EXPECT_FALSE(set_model_param(m, "tns", "-1", &why));
    EXPECT_EQ(why, "tns=-1: out of range 0..1000000000");
    EXPECT_FALSE(set_model_param(m, "tns", "fast", &why));
    EXPECT_EQ(why, "tns=fast: not a number");
    EXPECT_FALSE(set_model_param(m, "seed", "-1", &why));  // a whole number below an unsigned's 0
    EXPECT_EQ(why, "seed=-1: out of range 0..1.8e+19");
    EXPECT_FALSE(set_model_param(m, "nodes", "99999999999999999999", &why));
    EXPECT_EQ(why, "nodes=99999999999999999999: out of range 1..1048576");
    EXPECT_FALSE(set_model_param(m, "nodes", "1.5", &why));
    EXPECT_EQ(why, "nodes=1.5: not an integer");
    EXPECT_FALSE(set_model_param(m, "topology", "torus", &why));
    EXPECT_EQ(why, "topology=torus: not one of crossbar|hypercube|irregular|fattree");
    EXPECT_FALSE(set_model_param(m, "p2p_flow", "window", &why));
    EXPECT_EQ(why, "p2p_flow=window: not one of credits|gm");
    EXPECT_FALSE(set_model_param(m, "gm_recv_buffers", "0", &why));
    EXPECT_EQ(why, "gm_recv_buffers=0: out of range 1..65535");
    EXPECT_FALSE(set_model_param(m, "speed", "1", &why));
    EXPECT_EQ(why, "speed=1: unknown model parameter 'speed' (see nicsim params)");
    EXPECT_FALSE(set_model_param(m, "nodes", "0", &why));
    EXPECT_FALSE(set_model_param(m, "tns", "nan", &why));
    EXPECT_TRUE(set_model_param(m, "tns", "2.5", &why));
    EXPECT_DOUBLE_EQ(m.tns, 2.5);
    EXPECT_EQ(model_param_value(m, *find_model_param("tns")), "2.5");
    // The same from NAME=VALUE, as --set gives it.
    EXPECT_TRUE(set_model_param(m, "tns=3", &why));
    EXPECT_DOUBLE_EQ(m.tns, 3.0);
    EXPECT_FALSE(set_model_param(m, "tns", &why));
    EXPECT_EQ(why, "tns: expected NAME=VALUE");
    EXPECT_FALSE(set_model_param(m, "tns=fast", &why));
    EXPECT_EQ(why, "tns=fast: not a number");
}

}  // namespace
}  // namespace nicsim::sim
