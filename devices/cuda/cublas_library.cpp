#include "devices/cuda/cublas_library.hpp"

#include <dlfcn.h>

#include <string>
#include <type_traits>

#include "core/error.hpp"

namespace troupe::devices::gpu {
namespace {

std::string loader_error() {
  const char* e = dlerror();
  return e ? e : "unknown reason";
}

// The soname the headers were built against, found the way the loader finds libcudart (this
// executable's run path, LD_LIBRARY_PATH, the system's), else in the toolkit this was built with.
void* open_cublas(const std::string& soname) {
  if (void* h = dlopen(soname.c_str(), RTLD_NOW | RTLD_LOCAL)) return h;
  const std::string first = loader_error();
#ifdef TROUPE_CUDA_LIBDIR
  const std::string path = std::string(TROUPE_CUDA_LIBDIR) + "/" + soname;
  if (void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL)) return h;
#endif
  throw runtime_failure("CUDA error: cannot load cuBLAS (" + soname + "): " + first);
}

cublas_library load() {
  const std::string soname = "libcublas.so." + std::to_string(CUBLAS_VER_MAJOR);
  void* h = open_cublas(soname);
  auto sym = [&](auto& fn, const char* name) {
    void* p = dlsym(h, name);
    if (!p) throw runtime_failure("CUDA error: " + soname + " has no " + name);
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(p);
  };
  cublas_library lib;
  sym(lib.create, "cublasCreate_v2");
  sym(lib.destroy, "cublasDestroy_v2");
  sym(lib.set_math_mode, "cublasSetMathMode");
  sym(lib.set_stream, "cublasSetStream_v2");
  sym(lib.set_workspace, "cublasSetWorkspace_v2");
  sym(lib.sgemm, "cublasSgemm_v2");
  sym(lib.sgemv, "cublasSgemv_v2");
  return lib;  // the handle stays open for the process: the pointers live as long
}

}  // namespace

const cublas_library& cublas() {
  static const cublas_library lib = load();
  return lib;
}

}  // namespace troupe::devices::gpu
