#pragma once
// Replays one training iteration of a timetable over dp replicas x p pipeline ranks ("workers",
// each a tensor-parallel group in lockstep): compute ops run in timetable order on each worker's
// compute stream once their inputs are there; outputs crossing ranks become transfers on the
// worker's send channels (one FIFO stream per destination and direction), carried by the Network
// as one flow per tensor-parallel GPU pair (the channel is busy while they drain; delivery comes
// the route latency later, so messages in flight pipeline), or taking a fixed time in abstract
// mode; each rank's
// replicas reduce their gradients in buckets (sim/gradient_sync.hpp), during the backward or after
// it, and step the optimizer; with ZeRO-3 or --overlap-param-gather an op computes unit by unit on
// weights gathered one unit ahead, stalling where they are late. Metrics are collected while
// replaying. A replay that cannot finish throws SimulationError naming what waits for what;
// broken end-of-run invariants throw too.
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "models/chunk_cost.hpp"
#include "schedules/timetable.hpp"
#include "sim/engine.hpp"
#include "sim/rank_sync.hpp"
#include "sim/network.hpp"
#include "sim/optimizer_sync.hpp"
#include "sim/replay_observer.hpp"

namespace hetsim {

// How transfers between two workers travel. The replay asks once per send channel (worker pair
// and direction) and keeps the answer, so the routes pointed to must outlive the replay.
class TransferRoutes {
 public:
  virtual ~TransferRoutes() = default;
  // Routes of the flows of one transfer, one per tensor-parallel GPU pair.
  virtual const std::vector<std::span<const int>>& routes(int src_worker, int dst_worker) = 0;
  // The share of a transfer's bytes that goes on the wire (1 / compression ratio), e.g. when the
  // route crosses a compressed wide-area link.
  virtual double wire_share(int /*src_worker*/, int /*dst_worker*/) { return 1.0; }
};

// What a rank waits for around its pipeline sends and receives.
enum class P2pSync {
  // A send leaves when its op is done and the sender goes on: an isend waited for only when its
  // buffer is reused, as with Megatron-LM's --overlap-p2p-comm.
  kAsync,
  // Megatron-LM's p2p_communication._communicate without --overlap-p2p-comm: after an op the
  // rank posts its sends and the receive of its next op as one batch_isend_irecv and waits for
  // all of it before computing again. A send completes only once the receiver has posted the
  // matching receive: NCCL moves a message through the connection's buffer (NCCL_BUFFSIZE,
  // 4 MiB by default), so a tensor larger than that cannot finish before the peer's recv runs.
  kBatched,
  // kBatched where forward and backward alternate (send_forward_recv_backward); where two ops of
  // one kind follow each other (1F1B's warmup and cooldown) Megatron-LM's 1F1B calls
  // send_forward and then recv_forward, so the next receive is posted once the sends are done.
  kSeparateWithinPhase,
};

struct ReplayInputs {
  const Timetable* timetable = nullptr;
  int replicas = 1;
  // [worker][chunk], worker = replica * ranks + rank. Times per op as ChunkCost defines them;
  // activation bytes per GPU; output_bytes is what each flow of a transfer carries.
  std::vector<std::vector<ChunkCost>> costs;
  // Data-parallel synchronisation of each pipeline rank; empty: none (each worker only steps its
  // optimizer). Its collectives run as flows in network mode, on the alpha-beta path otherwise
  // or when alpha_beta_collectives is set.
  std::vector<RankSync> sync;
  // Gradient all-reduces between pairs of pipeline ranks holding the same weights (tied
  // embeddings, DualPipe's two parameter copies), each active.
  std::vector<RankPairAllReduce> rank_pairs;
  // The optimizer step's wait for every rank and its gradient-norm all-reduces.
  OptimizerSync optimizer_sync;
  bool alpha_beta_collectives = false;
  // Static bytes (weights, gradients, optimizer state) on one GPU of each worker; reported to
  // the observer with the activations, not simulated.
  std::vector<double> static_bytes;
  // Network mode: routes and a network to carry flows. Abstract mode (routes == nullptr): every
  // transfer takes abstract_transfer_s.
  TransferRoutes* routes = nullptr;
  std::vector<LinkCapacity> links;  // network_links: its bandwidth steps view the cluster's traces
  // Bytes one connection (a pipeline send's GPU pair, a ring hop) keeps in flight where its
  // route has a round trip (LinkCapacity::round_trip_s): its flows run at most this much per
  // round trip (Network::window_rate_cap). 0: unbounded.
  double connection_window_bytes = 0;
  double abstract_transfer_s = 0;
  // PipeOffload: the fraction of activations sent to host memory between F and B, and each
  // worker's host copy bandwidth per GPU (bytes/s, each direction).
  double offload_fraction = 0;
  std::vector<double> host_copy_bytes_per_s;
  ReplayObserver* observer = nullptr;
  P2pSync p2p = P2pSync::kAsync;
};

struct ReplayStats {
  double pipeline_end_s = 0;   // last compute op end: the pipeline's flush
  double iteration_s = 0;      // after every optimizer step
  std::vector<double> busy_s;                  // [worker] compute time
  std::vector<double> first_op_start_s;        // [worker]
  std::vector<double> last_op_end_s;           // [worker]
  std::vector<double> peak_activation_bytes;   // [worker] per GPU
  // [link] bytes carried: flows in network mode, plus what alpha-beta collectives would carry
  std::vector<double> link_bytes;
  std::vector<double> sync_busy_s;             // [rank] time its data-parallel collectives ran
  std::vector<double> sync_exposed_s;          // [rank] last op end to optimizer start
  std::vector<double> rank_pair_s;             // [pair] each rank-pair all-reduce's time
  std::vector<double> parameter_gather_s;      // [rank] time its ZeRO-3 parameter gathers ran
  double offloaded_bytes = 0;                  // per GPU, summed over workers
  std::uint64_t transfers = 0;
  std::uint64_t flows = 0;
  std::uint64_t events = 0;
};

ReplayStats replay_iteration(const ReplayInputs& inputs);

}  // namespace hetsim
