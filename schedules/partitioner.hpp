#pragma once
// The layer partitioner: which contiguous run of a model's layers each pipeline stage holds when
// the stages sit on GPUs of different speeds and memory sizes. Exact dynamic programming over
// (stage, layers so far): the partition with the smallest bottleneck stage time among those that
// fit every stage's memory.
#include <string>
#include <vector>

namespace hetsim {

// One pipeline stage as the partitioner sees it. A stage holding n layers takes
// fixed_s + n * layer_s and needs fixed_bytes + n * layer_bytes, which must not exceed
// capacity_bytes. Times may be in any unit used consistently across stages.
struct PartitionStage {
  std::string name;            // used in errors, e.g. "stage 2 (a100-80gb)"; empty: "stage <i>"
  double layer_s = 0;          // one layer's forward + backward for one microbatch on this GPU, >= 0
  double fixed_s = 0;          // what the stage costs besides its layers: the embedding on the
                               // first stage, the LM head and loss on the last; >= 0
  double layer_bytes = 0;      // memory one more layer needs here (its static memory and the
                               // activations of the microbatches in flight on this stage), >= 0
  double fixed_bytes = 0;      // memory the stage needs besides its layers, >= 0
  double capacity_bytes = 0;   // the GPU's memory, > 0
};

struct LayerPartition {
  std::vector<int> layers_per_stage;  // contiguous: stage 0 holds the first layers
  std::vector<double> stage_s;        // fixed_s + n * layer_s, per stage
  std::vector<double> stage_bytes;    // fixed_bytes + n * layer_bytes, per stage
  double max_stage_s = 0;             // the bottleneck
  double total_stage_s = 0;           // sum of stage_s, added stage by stage from stage 0
};

// Time and memory of a given partition (no memory check). Throws PlanError when the counts and
// stages differ in number.
LayerPartition evaluate_partition(const std::vector<PartitionStage>& stages,
                                  const std::vector<int>& layers_per_stage);

// The contiguous partition of `layers` layers over the stages, every stage holding at least one
// layer and fitting its memory, with the smallest max_stage_s; among those, the smallest
// total_stage_s (the pipeline's fill and drain); among those, the one that puts the fewest layers
// on the last stage, then on the one before, and so on. O(S L^2) time, O(S L) memory.
// Throws PlanError for fewer layers than stages, a negative, non-finite or zero-capacity figure,
// a stage whose memory cannot hold even one layer (naming the stage, its need and capacity) and
// stages whose memory together holds fewer layers than the model has.
LayerPartition partition_layers_balanced(int layers, const std::vector<PartitionStage>& stages);

}  // namespace hetsim
