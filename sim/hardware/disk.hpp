// Storage device: sequential bandwidth plus random-access operations.
//
// A read of s bytes costs one access (seek / flash lookup) and s bytes of
// transfer. Accesses are served by an operations resource of `random_read_iops`
// per second, transfers by the `sequential_read` bandwidth; each is shared
// equally among concurrent readers (disk_server.hpp); the accesses and transfers of a batch
// of requests overlap (queued requests, NCQ). With enough readers in flight
// as the device pipelines, files of size s are delivered at
// min(IOPS * s, sequential_read) — many small files on an HDD are seek-bound.
// `latency` is per-request time that does not occupy the device (protocol,
// flash read pipelined behind other requests): a lone reader waits it per file.
// Ignores: write traffic, read-ahead across files, the OS I/O scheduler.
#pragma once

#include "sim/core/base/named_enum.hpp"
#include "sim/core/base/units.hpp"

#include <string>

namespace mlsim {

enum class DiskKind { hdd, sata_ssd, nvme, network };
template <> struct EnumNames<DiskKind> {
  static constexpr std::array<std::pair<DiskKind, std::string_view>, 4> table{{
      {DiskKind::hdd, "hdd"}, {DiskKind::sata_ssd, "sata-ssd"}, {DiskKind::nvme, "nvme"},
      {DiskKind::network, "network"}}};
};

struct DiskSpec {
  std::string name = "disk";
  DiskKind kind = DiskKind::sata_ssd;
  BytesPerSec sequential_read{0.0};
  double random_read_iops = 0.0;
  Seconds latency{0.0};

  // Closed form for many concurrent readers of files of size s.
  BytesPerSec throughput_for_files(Bytes s) const {
    return min(sequential_read, BytesPerSec(random_read_iops * s.value()));
  }
};

} // namespace mlsim
