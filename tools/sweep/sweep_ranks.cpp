// The ranks of a sweep, with Open MPI when built with it (HETSIM_MPI) and on one process otherwise.
#include "tools/sweep/sweep_ranks.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "base/error.hpp"

#if HETSIM_MPI
#include <mpi.h>
#endif

namespace hetsim::sweep {

namespace {

// Open MPI's launcher tells each process the job's size; without it this is no MPI job.
int launched_ranks(const char* variable) {
  const char* value = std::getenv(variable);
  return value ? std::atoi(value) : 0;
}

#if HETSIM_MPI
constexpr int kLineTag = 1;
constexpr int kFinishedTag = 2;
#endif

}  // namespace

SweepRanks::SweepRanks() {
  const int ranks = launched_ranks("OMPI_COMM_WORLD_SIZE");
  if (ranks == 0) return;
#if HETSIM_MPI
  int provided = 0;
  MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
  initialized_ = true;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
  local_size_ = std::max(1, launched_ranks("OMPI_COMM_WORLD_LOCAL_SIZE"));
#else
  if (ranks > 1)
    throw Error(
        fmt::format("started by mpirun as one of {} ranks, but this hetsim was built without MPI "
                    "(configure with -DHETSIM_MPI=ON and Open MPI installed); every rank would run "
                    "the whole sweep",
                    ranks));
#endif
}

SweepRanks::~SweepRanks() {
#if HETSIM_MPI
  if (initialized_) MPI_Finalize();
#endif
}

bool SweepRanks::broadcast_points(std::vector<std::size_t>& points, bool ok) {
#if HETSIM_MPI
  if (size_ > 1) {
    // The count first (-1: stop), then the points as 64-bit integers.
    long long count = ok ? static_cast<long long>(points.size()) : -1;
    MPI_Bcast(&count, 1, MPI_LONG_LONG, 0, MPI_COMM_WORLD);
    if (count < 0) return false;
    std::vector<unsigned long long> wire(points.begin(), points.end());
    wire.resize(static_cast<std::size_t>(count));
    MPI_Bcast(wire.data(), static_cast<int>(count), MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD);
    points.assign(wire.begin(), wire.end());
    return true;
  }
#endif
  return ok;
}

#if HETSIM_MPI
struct SweepRanks::Outgoing {
  std::string text;
  MPI_Request request = MPI_REQUEST_NULL;
};
#else
struct SweepRanks::Outgoing {};
#endif

void SweepRanks::send_lines([[maybe_unused]] const std::vector<std::string>& lines) {
#if HETSIM_MPI
  if (!lines.empty()) {
    // One message per batch, lines separated by newlines (a JSON line holds none).
    auto message = std::make_unique<Outgoing>();
    for (const std::string& line : lines) message->text += line + "\n";
    message->text.pop_back();
    MPI_Isend(message->text.data(), static_cast<int>(message->text.size()), MPI_CHAR, 0, kLineTag,
              MPI_COMM_WORLD, &message->request);
    outgoing_.push_back(std::move(message));
  }
  for (int sent = 1; sent && !outgoing_.empty();) {
    MPI_Test(&outgoing_.front()->request, &sent, MPI_STATUS_IGNORE);
    if (sent) outgoing_.pop_front();
  }
#endif
}

void SweepRanks::send_finished() {
#if HETSIM_MPI
  for (const auto& message : outgoing_) MPI_Wait(&message->request, MPI_STATUS_IGNORE);
  outgoing_.clear();
  MPI_Send(nullptr, 0, MPI_CHAR, 0, kFinishedTag, MPI_COMM_WORLD);
#endif
}

bool SweepRanks::receive_lines([[maybe_unused]] std::vector<std::string>& lines) {
#if HETSIM_MPI
  while (finished_ranks_ < size_ - 1) {
    int waiting = 0;
    MPI_Status status;
    MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &waiting, &status);
    if (!waiting) return true;
    int length = 0;
    MPI_Get_count(&status, MPI_CHAR, &length);
    std::string line(static_cast<std::size_t>(length), '\0');
    MPI_Recv(line.data(), length, MPI_CHAR, status.MPI_SOURCE, status.MPI_TAG, MPI_COMM_WORLD,
             MPI_STATUS_IGNORE);
    if (status.MPI_TAG == kFinishedTag) {
      ++finished_ranks_;
      continue;
    }
    for (std::size_t start = 0; start <= line.size();) {
      const std::size_t end = std::min(line.find('\n', start), line.size());
      lines.push_back(line.substr(start, end - start));
      start = end + 1;
    }
  }
#endif
  return false;
}

void SweepRanks::abort_all(const std::string& message) {
#if HETSIM_MPI
  if (initialized_) {
    std::fflush(stdout);
    fmt::print(stderr, "hetsim: error: {}\n", message);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
#endif
  throw Error(message);  // one process: main() reports it
}

}  // namespace hetsim::sweep
