// sched_yield(2) for Node: the running thread goes to the back of its CPU's run queue, so another
// runnable process on that CPU runs now (Node has no such call; a busy event loop keeps the CPU
// until the scheduler's time slice ends). N-API only, so it builds with a C++ compiler and Node's
// headers.
#include <errno.h>
#include <node_api.h>
#include <sched.h>
#include <string.h>

#include <string>

namespace {

// schedYield() -> undefined; throws if the kernel refuses (it never does on Linux).
napi_value Yield(napi_env env, napi_callback_info) {
  if (sched_yield() != 0) {
    std::string msg = std::string("sched_yield: ") + strerror(errno);
    napi_throw_error(env, "ERR_SCHED", msg.c_str());
  }
  return nullptr;
}

napi_value Init(napi_env env, napi_value exports) {
  napi_value fn;
  napi_create_function(env, "schedYield", NAPI_AUTO_LENGTH, Yield, nullptr, &fn);
  napi_set_named_property(env, exports, "schedYield", fn);
  return exports;
}

}  // namespace

NAPI_MODULE(NODE_GYP_MODULE_NAME, Init)
