#pragma once

namespace hetsim {

// From `time_s` on (until the next point) a link carries `bytes_per_s` per direction: a WAN
// link's bandwidth trace, and the steps the network follows on it.
struct BandwidthPoint {
  double time_s = 0;
  double bytes_per_s = 0;
};

}  // namespace hetsim
