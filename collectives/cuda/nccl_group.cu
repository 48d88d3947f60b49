#include "collectives/cuda/nccl_group.hpp"

#include <dlfcn.h>

#if __has_include(<nccl.h>)
#include <cuda_runtime_api.h>
#include <nccl.h>
#define TROUPE_HAVE_NCCL_HEADER 1
#endif

#include <cstring>
#include <optional>
#include <string>
#include <vector>

namespace troupe::collectives {

#ifdef TROUPE_HAVE_NCCL_HEADER

namespace {

// The entry points we use, resolved at run time (no link-time dependency on NCCL).
struct nccl_api {
  void* nccl = nullptr;
  void* cudart = nullptr;
  ncclResult_t (*get_unique_id)(ncclUniqueId*) = nullptr;
  ncclResult_t (*comm_init_rank)(ncclComm_t*, int, ncclUniqueId, int) = nullptr;
  ncclResult_t (*all_reduce)(const void*, void*, size_t, ncclDataType_t, ncclRedOp_t, ncclComm_t,
                             cudaStream_t) = nullptr;
  ncclResult_t (*comm_abort)(ncclComm_t) = nullptr;
  ncclResult_t (*comm_destroy)(ncclComm_t) = nullptr;
  ncclResult_t (*comm_get_async_error)(ncclComm_t, ncclResult_t*) = nullptr;
  const char* (*get_error_string)(ncclResult_t) = nullptr;
  cudaError_t (*set_device)(int) = nullptr;
  cudaError_t (*get_device_count)(int*) = nullptr;
  cudaError_t (*stream_create)(cudaStream_t*) = nullptr;
  cudaError_t (*stream_destroy)(cudaStream_t) = nullptr;
  cudaError_t (*stream_query)(cudaStream_t) = nullptr;
  cudaError_t (*malloc_device)(void**, size_t) = nullptr;
  cudaError_t (*free_device)(void*) = nullptr;
  cudaError_t (*copy)(void*, const void*, size_t, cudaMemcpyKind) = nullptr;
  std::string missing;

  template <class F>
  void bind(void* lib, F& f, const char* name) {
    f = reinterpret_cast<F>(lib ? ::dlsym(lib, name) : nullptr);
    if (!f) missing += std::string{missing.empty() ? "" : ", "} + name;
  }

  nccl_api() {
    nccl = ::dlopen("libnccl.so.2", RTLD_NOW | RTLD_GLOBAL);
    if (!nccl) nccl = ::dlopen("libnccl.so", RTLD_NOW | RTLD_GLOBAL);
    cudart = ::dlopen("libcudart.so", RTLD_NOW | RTLD_GLOBAL);
    if (!cudart) cudart = ::dlopen("libcudart.so.13", RTLD_NOW | RTLD_GLOBAL);
    if (!cudart) cudart = ::dlopen("libcudart.so.12", RTLD_NOW | RTLD_GLOBAL);
    bind(nccl, get_unique_id, "ncclGetUniqueId");
    bind(nccl, comm_init_rank, "ncclCommInitRank");
    bind(nccl, all_reduce, "ncclAllReduce");
    bind(nccl, comm_abort, "ncclCommAbort");
    bind(nccl, comm_destroy, "ncclCommDestroy");
    bind(nccl, comm_get_async_error, "ncclCommGetAsyncError");
    bind(nccl, get_error_string, "ncclGetErrorString");
    bind(cudart, set_device, "cudaSetDevice");
    bind(cudart, get_device_count, "cudaGetDeviceCount");
    bind(cudart, stream_create, "cudaStreamCreate");
    bind(cudart, stream_destroy, "cudaStreamDestroy");
    bind(cudart, stream_query, "cudaStreamQuery");
    bind(cudart, malloc_device, "cudaMalloc");
    bind(cudart, free_device, "cudaFree");
    bind(cudart, copy, "cudaMemcpy");
  }
};

nccl_api& api() {
  static nccl_api loaded;
  return loaded;
}

}  // namespace

// NCCLCHECK-style: turns an ncclResult_t into our error with the call and file:line.
#define TROUPE_NCCL_CHECK(call, what)                                                           \
  do {                                                                                          \
    ncclResult_t result_ = (call);                                                              \
    if (result_ != ncclSuccess)                                                                 \
      throw runtime_failure(std::string{what} + ": " + api().get_error_string(result_) + " (" + \
                            __FILE__ + ":" + std::to_string(__LINE__) + ")");                   \
  } while (0)

struct nccl_group::impl {
  ncclComm_t comm = nullptr;
  cudaStream_t stream = nullptr;
  int rank = 0;
  std::string name;  // "nccl group PREFIX rank R of N (device D)"
};

bool nccl_group::available(std::string* why) {
  auto& a = api();
  if (!a.missing.empty()) {
    if (why) *why = "NCCL/CUDA runtime symbols not found: " + a.missing;
    return false;
  }
  int devices = 0;
  if (a.get_device_count(&devices) != cudaSuccess || devices == 0) {
    if (why) *why = "no CUDA device";
    return false;
  }
  return true;
}

nccl_group::nccl_group(const nccl_group_options& options) : impl_(std::make_unique<impl>()) {
  std::string why;
  if (!available(&why)) throw runtime_failure("nccl group: " + why);
  if (!options.rendezvous) throw input_error("nccl group: no rendezvous store");
  auto& a = api();
  impl_->rank = options.rank;
  impl_->name = "nccl group " + options.prefix + " rank " + std::to_string(options.rank) + " of " +
                std::to_string(options.size) + " (device " + std::to_string(options.device) + ")";
  if (a.set_device(options.device) != cudaSuccess)
    throw runtime_failure(impl_->name + ": cannot select the device");
  ncclUniqueId id;
  const std::string key = options.prefix + "/nccl-id";
  if (options.rank == 0) {
    TROUPE_NCCL_CHECK(a.get_unique_id(&id), impl_->name + ": ncclGetUniqueId");
    options.rendezvous->set(key, std::string{id.internal, sizeof id.internal});
  } else {
    const std::string bytes = options.rendezvous->wait_get(key, options.deadline);
    if (bytes.size() != sizeof id.internal)
      throw runtime_failure(impl_->name + ": malformed NCCL id in the store at " + key);
    std::memcpy(id.internal, bytes.data(), sizeof id.internal);
  }
  TROUPE_NCCL_CHECK(a.comm_init_rank(&impl_->comm, options.size, id, options.rank),
                    impl_->name + ": ncclCommInitRank");
  if (a.stream_create(&impl_->stream) != cudaSuccess)
    throw runtime_failure(impl_->name + ": cannot create a stream");
}

nccl_group::~nccl_group() {
  auto& a = api();
  if (impl_->comm) a.comm_destroy(impl_->comm);
  if (impl_->stream) a.stream_destroy(impl_->stream);
}

void nccl_group::allreduce(const nccl_allreduce_options& options) {
  auto& a = api();
  TROUPE_NCCL_CHECK(a.all_reduce(options.device_data, options.device_data, options.count,
                                 ncclFloat32, ncclSum, impl_->comm, impl_->stream),
                    impl_->name + ": ncclAllReduce");
  // Poll instead of cudaStreamSynchronize, so that a dead peer (NCCL would wait forever), an
  // abort or the deadline end the wait: then ncclCommAbort frees the stream.
  const peer_info group{impl_->rank, impl_->name};
  op_context ctx;
  ctx.op_name = "nccl allreduce (job " + std::to_string(options.job) + ", generation " +
                std::to_string(options.generation) + ")";
  ctx.deadline = options.deadline;
  ctx.abort = options.abort;
  for (;;) {
    const cudaError_t state = a.stream_query(impl_->stream);
    if (state == cudaSuccess) return;
    if (state != cudaErrorNotReady)
      throw runtime_failure(impl_->name + ": CUDA error " + std::to_string(state));
    ncclResult_t async = ncclSuccess;
    a.comm_get_async_error(impl_->comm, &async);
    try {
      if (async != ncclSuccess && async != ncclInProgress)
        throw collective_error(
            failure_kind::peer_closed, group,
            ctx.op_name + ": " + a.get_error_string(async) + " in " + impl_->name);
      ctx.check(group, "the NCCL group");
    } catch (...) {
      a.comm_abort(impl_->comm);
      impl_->comm = nullptr;  // the group is unusable: the job rebuilds it for the next generation
      throw;
    }
  }
}

std::string nccl_group::smoke_test(int device, std::size_t count) {
  std::string why;
  if (!available(&why)) return why;
  auto& a = api();
  try {
    class one_key_store final : public store {  // a 1-rank group needs no peers
     public:
      void set(const std::string& k, const std::string& v) override { key = k, value = v; }
      std::optional<std::string> get(const std::string& k) override {
        if (k == key) return value;
        return std::nullopt;
      }
      void wait(const std::vector<std::string>&, steady::time_point) override {}
      std::string key, value;
    } rendezvous;
    nccl_group_options o;
    o.rendezvous = &rendezvous;
    o.device = device;
    nccl_group group{o};
    std::vector<float> host(count), back(count);
    for (std::size_t i = 0; i < count; ++i) host[i] = static_cast<float>(i % 97);
    void* data = nullptr;
    if (a.malloc_device(&data, count * sizeof(float)) != cudaSuccess) return "cudaMalloc failed";
    a.copy(data, host.data(), count * sizeof(float), cudaMemcpyHostToDevice);
    nccl_allreduce_options r;
    r.device_data = static_cast<float*>(data);
    r.count = count;
    r.deadline = steady::now() + std::chrono::seconds(30);
    group.allreduce(r);
    a.copy(back.data(), data, count * sizeof(float), cudaMemcpyDeviceToHost);
    a.free_device(data);
    if (back != host) return "1-rank allreduce changed the data";
    return "";
  } catch (const std::exception& e) {
    return e.what();
  }
}

#else  // no <nccl.h>: the same API, failing clearly at run time.

struct nccl_group::impl {};
bool nccl_group::available(std::string* why) {
  if (why) *why = "built without nccl.h";
  return false;
}
nccl_group::nccl_group(const nccl_group_options&) {
  throw runtime_failure("nccl group: Troupe was built without nccl.h");
}
nccl_group::~nccl_group() = default;
void nccl_group::allreduce(const nccl_allreduce_options&) {}
std::string nccl_group::smoke_test(int, std::size_t) {
  return "built without nccl.h";
}

#endif

}  // namespace troupe::collectives
