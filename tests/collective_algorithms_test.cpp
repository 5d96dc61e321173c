// All-reduce algorithms as SimGrid flows against their closed forms
// (sim/pipeline/collective.hpp). Each simulation runs in a forked child (one
// SimGrid engine per process), so the tests also run together in one process.
#include "sim/core/base/engine.hpp"
#include "sim/core/run/scenario.hpp"
#include "sim/hardware/platform.hpp"
#include "sim/pipeline/collective.hpp"
#include "test_support.hpp"

#include <simgrid/s4u.hpp>

#include <gtest/gtest.h>

#include <set>

using namespace mlsim;
namespace sg4 = simgrid::s4u;

namespace {

// Link figures of fixtures::base_scenario: NVLink 3 (300 GB/s, 2 us per GPU link), PCIe gen4 x16 at
// 0.8 (16 x 16e9 x 128/130 / 8 x 0.8 B/s, 1 us), NIC 100 Gb/s (5 us), network switch 1 us, RAM 1000 GB/s.
constexpr double kNvlink = 300e9, kNvlinkHop = 2e-6;
const double kPcie = 16 * (16e9 * 128.0 / 130.0 / 8.0) * 0.8;
constexpr double kPcieLat = 1e-6, kNic = 100e9 / 8, kNicLat = 5e-6, kSwitchLat = 1e-6, kRam = 1000e9;
constexpr double kBytes = 100e6;

struct Result {
  std::vector<double> finish; // per rank: when its all-reduce returned
  double closed_form = 0;
};

// Builds the platform of `nodes` x `gpus`, runs one all-reduce of `bytes` on every rank with `algorithm`.
Result all_reduce(const std::string& algorithm, int nodes, int gpus, double bytes = kBytes) {
  std::string out = run_in_child([&] {
    ConfigNode root = ConfigNode::load_string(fixtures::base_scenario(gpus), "test.yaml");
    root = ConfigNode::with_overrides(root, {"hardware.nodes.0.count=" + std::to_string(nodes),
                                             "distribution.algorithm=" + algorithm});
    Scenario s = load_scenario(root);
    auto engine = make_engine();
    Platform platform(s.platform_spec());
    CollectiveGroup group;
    group.platform = &platform;
    Recorder rec;
    group.recorder = &rec;
    group.algorithm = s.distribution.algorithm;
    for (auto& node : platform.trainers())
      for (auto* g : node.accelerators)
        group.ranks.push_back(g);
    group.finalize();
    size_t n = group.ranks.size();
    std::vector<std::unique_ptr<Communicator>> comms;
    std::vector<double> finish(n, -1);
    for (size_t r = 0; r < n; ++r) {
      comms.push_back(std::make_unique<Communicator>(&group, static_cast<int>(r)));
      comms.back()->start();
      sg4::Actor::create("rank" + std::to_string(r), group.ranks[r], [&, r] {
        comms[r]->submit(bytes);
        comms[r]->wait_all();
        finish[r] = sg4::Engine::get_clock();
      });
    }
    engine->run();
    nlohmann::json j;
    j["finish"] = finish;
    j["closed_form"] = group.closed_form_time(bytes);
    return j.dump();
  });
  auto j = nlohmann::json::parse(out);
  return {j["finish"].get<std::vector<double>>(), j["closed_form"].get<double>()};
}

void expect_all(const Result& r, double expected, double tol = 1e-9) {
  for (double f : r.finish)
    EXPECT_NEAR(f, expected, tol);
  EXPECT_NEAR(r.closed_form, expected, tol);
}

} // namespace

TEST(CollectiveAlgorithms, DoubleBinaryTreesAreTreesWithEveryRankALeafOnce) {
  for (int n : {2, 3, 5, 8, 12, 16}) {
    auto trees = double_binary_tree(n);
    for (const auto& tree : trees) {
      int roots = 0;
      for (int r = 0; r < n; ++r) {
        const TreeNode& t = tree[static_cast<size_t>(r)];
        roots += t.parent < 0;
        for (int c : t.children)
          if (c >= 0)
            EXPECT_EQ(tree[static_cast<size_t>(c)].parent, r) << "n=" << n << " rank " << r;
        // Every rank reaches the root within ceil(log2 n) hops.
        int hops = 0;
        for (int x = r; tree[static_cast<size_t>(x)].parent >= 0 && hops <= n; x = tree[static_cast<size_t>(x)].parent)
          ++hops;
        EXPECT_LE(hops, static_cast<int>(std::ceil(std::log2(n))));
      }
      EXPECT_EQ(roots, 1);
    }
    if (n % 2 == 0) // mirrored: a rank interior in one tree is a leaf in the other
      for (int r = 0; r < n; ++r) {
        auto interior = [&](int t) {
          const auto& c = trees[static_cast<size_t>(t)][static_cast<size_t>(r)].children;
          return c[0] >= 0 || c[1] >= 0;
        };
        EXPECT_FALSE(interior(0) && interior(1)) << "n=" << n << " rank " << r;
      }
  }
}

// Ring on one node of 8: 2(n-1) alpha + 2(n-1)/n S / beta, alpha = two NVLink hops.
TEST(CollectiveAlgorithms, RingMatchesFormula) {
  double n = 8, alpha = 2 * kNvlinkHop;
  expect_all(all_reduce("ring", 1, 8), 2 * (n - 1) * alpha + 2 * (n - 1) / n * kBytes / kNvlink);
}

// Double binary tree on one node of 8 (NCCL 2.4): depth log2(8) = 3, each tree carries S/2 up and down;
// a rank interior in one tree (parent + 2 children) and a leaf in the other sends 4 x S/2 on its link:
// T = 2 log2(n) alpha + 2 S / beta.
TEST(CollectiveAlgorithms, TreeMatchesFormula) {
  double alpha = 2 * kNvlinkHop;
  expect_all(all_reduce("tree", 1, 8), 2 * 3 * alpha + 2 * kBytes / kNvlink);
}

// Tree vs ring: the tree's latency term is logarithmic, its bandwidth term ~2 S / beta vs 2(n-1)/n S / beta.
TEST(CollectiveAlgorithms, TreeWinsSmallBucketsRingWinsLargeOnes) {
  double small = 64e3;
  EXPECT_LT(all_reduce("tree", 1, 8, small).finish[0], all_reduce("ring", 1, 8, small).finish[0]);
  EXPECT_GT(all_reduce("tree", 1, 8).finish[0], all_reduce("ring", 1, 8).finish[0]);
}

// Hierarchical on m nodes x g GPUs: NVLink reduce-scatter and all-gather inside the node, a ring of
// S/g across the nodes per local index, the g rings of a node sharing its NIC (each flow at B_nic / g):
// T = 2(g-1) a_in + 2(g-1)/g S / b_in + 2(m-1) a_out + 2(m-1)/m S / B_nic.
TEST(CollectiveAlgorithms, HierarchicalMatchesFormula) {
  for (int m : {2, 3}) {
    double g = 4, a_in = 2 * kNvlinkHop;
    double a_out = kPcieLat + kNicLat + kSwitchLat + kNicLat + kPcieLat;
    double expected = 2 * (g - 1) * a_in + 2 * (g - 1) / g * kBytes / kNvlink + 2 * (m - 1) * a_out +
                      2.0 * (m - 1) / m * kBytes / kNic;
    SCOPED_TRACE("nodes=" + std::to_string(m));
    expect_all(all_reduce("hierarchical", m, 4), expected);
  }
  // One node: hierarchical is the ring.
  expect_all(all_reduce("hierarchical", 1, 8), all_reduce("ring", 1, 8).finish[0]);
}

// Across nodes the flat ring sends 2(n-1)/n S through each NIC; the hierarchical one 2(m-1)/m S.
TEST(CollectiveAlgorithms, HierarchicalBeatsTheFlatRingAcrossNodes) {
  double ring = all_reduce("ring", 3, 4).finish[0];
  double hier = all_reduce("hierarchical", 3, 4).finish[0];
  EXPECT_LT(hier, ring);
  // The NIC terms dominate: ring ~ 2(12-1)/12 S / B_nic, hierarchical ~ 2(3-1)/3 S / B_nic.
  EXPECT_NEAR(ring / hier, (2.0 * 11 / 12) / (2.0 * 2 / 3), 0.1);
}

// Parameter server on the node's CPU: every GPU pushes S over its own PCIe link, the server reads the
// n gradients and writes the sum at the RAM bandwidth, every GPU pulls S:
// T = 2 (a_pcie + S / B_pcie) + (n+1) S / B_ram.
TEST(CollectiveAlgorithms, ParameterServerMatchesFormula) {
  double n = 8;
  expect_all(all_reduce("parameter_server", 1, 8), 2 * (kPcieLat + kBytes / kPcie) + (n + 1) * kBytes / kRam);
}

// Jobs of up to 256 accelerators get a route between every pair of GPUs across nodes and from every GPU
// to node 0's CPU, so trees and a parameter server span nodes; their edges then cross the NICs
// (100 Gb/s) instead of NVLink (300 GB/s), so they take longer than on one node of the same size.
TEST(CollectiveAlgorithms, TreeAndParameterServerSpanNodesOverTheNics) {
  auto tree_4x2 = all_reduce("tree", 4, 2), tree_1x8 = all_reduce("tree", 1, 8);
  auto ps_2x2 = all_reduce("parameter_server", 2, 2), ps_1x4 = all_reduce("parameter_server", 1, 4);
  EXPECT_GT(tree_4x2.finish[0], tree_1x8.finish[0]);
  EXPECT_GT(ps_2x2.finish[0], ps_1x4.finish[0]);
}

// Through `mlsim run`: a roofline model's one bucket is all-reduced after the step's compute, so the
// exposed communication per step is the algorithm's closed form (one node of 8 A100s, 25.6 M fp32
// parameters = 102.4 MB).
TEST(CollectiveAlgorithms, ExposedCommunicationInARunIsTheClosedForm) {
  double bytes = 25.6e6 * 4, alpha = 2 * kNvlinkHop, n = 8;
  std::map<std::string, double> expected{
      {"ring", 2 * (n - 1) * alpha + 2 * (n - 1) / n * bytes / kNvlink},
      {"tree", 2 * 3 * alpha + 2 * bytes / kNvlink},
      {"hierarchical", 2 * (n - 1) * alpha + 2 * (n - 1) / n * bytes / kNvlink},
  };
  for (const auto& [algorithm, t] : expected) {
    auto j = fixtures::run(fixtures::base_scenario(8, 0.01, 10.0, 25.6e6), {"distribution.algorithm=" + algorithm});
    double exposed = j["breakdown"]["collective"].get<double>() * j["step_time_s"]["mean"].get<double>();
    EXPECT_NEAR(exposed, t, 0.01 * t) << algorithm;
  }
}
