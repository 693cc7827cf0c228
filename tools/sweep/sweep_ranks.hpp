#pragma once
// The processes of one sweep. Started by `mpirun -n N hetsim sweep ...` (and built with
// HETSIM_MPI), every rank runs its share of the points and sends each finished line to rank 0,
// which alone writes the output; otherwise there is one rank and nothing to send. Only the
// thread that made the SweepRanks calls it (MPI_THREAD_FUNNELED).
#include <cstddef>
#include <deque>
#include <memory>
#include <string>
#include <vector>

namespace hetsim::sweep {

class SweepRanks {
 public:
  SweepRanks();   // joins the MPI job when mpirun started this process
  ~SweepRanks();  // leaves it
  SweepRanks(const SweepRanks&) = delete;
  SweepRanks& operator=(const SweepRanks&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  // Ranks of this job on this machine: local threads default to the cores divided among them.
  int local_size() const { return local_size_; }

  // Rank 0's `points` on every rank. Rank 0's `ok` (false: it could not start, and will say why)
  // is returned on every rank; the others pass true.
  bool broadcast_points(std::vector<std::size_t>& points, bool ok);

  // Ranks other than 0: hand finished lines to rank 0 without waiting for it to take them (a
  // blocking send would spin a core in Open MPI until rank 0 next looks), and let earlier sends
  // progress; call it every few milliseconds, with no lines if need be. Then, once every line
  // has been taken, say this rank has finished.
  void send_lines(const std::vector<std::string>& lines);
  void send_finished();

  // Rank 0: appends the lines other ranks have sent since the last call; false once every
  // other rank has finished and all their lines have been received.
  bool receive_lines(std::vector<std::string>& lines);

  // An error after the points were shared out. In an MPI job: prints it as main() would and
  // ends every rank with exit status 1, since the others would otherwise wait for this one
  // forever. Alone: throws it as an Error.
  [[noreturn]] void abort_all(const std::string& message);

 private:
  int rank_ = 0;
  int size_ = 1;
  int local_size_ = 1;
  int finished_ranks_ = 0;
  bool initialized_ = false;
  struct Outgoing;  // a message on its way to rank 0, kept until sent
  std::deque<std::unique_ptr<Outgoing>> outgoing_;
};

}  // namespace hetsim::sweep
