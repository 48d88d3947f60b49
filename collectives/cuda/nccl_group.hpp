#pragma once
// NCCL inside a GPU resource group. NCCL is a collective library, not a
// point-to-point transport our host-side algorithms could drive (they reduce in host memory),
// so it sits beside peer_link as a group backend with the same contract: the ncclUniqueId
// travels through the rendezvous store, every operation carries (job, generation), has a deadline
// and an abort signal, and a stuck or aborted operation ends with ncclCommAbort and a
// collective_error that names the group and this rank.
//
// libnccl and libcudart are loaded with dlopen when a group is created, so the library builds
// and links wherever nvcc is found and fails with a clear runtime_failure where NCCL or a GPU
// is missing. Built only with CUDA (files under cuda/).
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "collectives/op_control.hpp"
#include "collectives/store.hpp"

namespace troupe::collectives {

struct nccl_group_options : rendezvous_options {
  nccl_group_options() { prefix = "nccl"; }  // the id is at PREFIX/nccl-id
  int device = 0;                            // CUDA device ordinal of this rank
};

struct nccl_allreduce_options {
  float* device_data = nullptr;  // on this rank's device; in place
  std::size_t count = 0;
  std::uint64_t job = 0;
  std::uint64_t generation = 0;
  steady::time_point deadline = steady::time_point::max();
  std::shared_ptr<const abort_signal> abort;
};

class nccl_group {
 public:
  // Rank 0 creates the unique id and publishes it; the others wait for it; all init together.
  explicit nccl_group(const nccl_group_options& options);
  ~nccl_group();
  nccl_group(const nccl_group&) = delete;
  nccl_group& operator=(const nccl_group&) = delete;

  // Sum of float32 across the group, on the group's stream; returns when the result is ready.
  void allreduce(const nccl_allreduce_options& options);

  // True when libnccl and libcudart can be loaded and a CUDA device exists.
  static bool available(std::string* why = nullptr);

  // A 1-rank group on `device` allreduces `count` values in device memory and checks them;
  // returns "" on success or what went wrong. For tests, which do not see CUDA headers.
  static std::string smoke_test(int device, std::size_t count);

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

}  // namespace troupe::collectives
