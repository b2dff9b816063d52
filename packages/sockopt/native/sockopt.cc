// SO_SNDBUF / SO_RCVBUF of a socket by file descriptor: the socket options Node does not expose
// for TCP. N-API only (no node-addon-api), so it builds with a C++ compiler and Node's headers.
#include <errno.h>
#include <node_api.h>
#include <string.h>
#include <sys/socket.h>

#include <string>

namespace {

void ThrowErrno(napi_env env, const char* what, int err) {
  std::string msg = std::string(what) + ": " + strerror(err);
  napi_throw_error(env, "ERR_SOCKOPT", msg.c_str());
}

bool Int32Arg(napi_env env, napi_value v, const char* name, int32_t* out) {
  napi_valuetype t;
  napi_typeof(env, v, &t);
  double d = 0;
  if (t == napi_number) napi_get_value_double(env, v, &d);
  if (t != napi_number || d != static_cast<int32_t>(d) || d < 0) {
    std::string msg = std::string(name) + " must be a non-negative 32-bit integer";
    napi_throw_type_error(env, "ERR_INVALID_ARG", msg.c_str());
    return false;
  }
  *out = static_cast<int32_t>(d);
  return true;
}

bool GetSize(napi_env env, int fd, int opt, const char* what, int32_t* out) {
  int v = 0;
  socklen_t len = sizeof v;
  if (getsockopt(fd, SOL_SOCKET, opt, &v, &len) != 0) {
    ThrowErrno(env, what, errno);
    return false;
  }
  *out = v;
  return true;
}

// getBufferSizes(fd) -> { sndbuf, rcvbuf }: what the kernel reports (Linux: twice what was set).
napi_value Sizes(napi_env env, int fd) {
  int32_t snd = 0, rcv = 0;
  if (!GetSize(env, fd, SO_SNDBUF, "getsockopt(SO_SNDBUF)", &snd)) return nullptr;
  if (!GetSize(env, fd, SO_RCVBUF, "getsockopt(SO_RCVBUF)", &rcv)) return nullptr;
  napi_value obj, a, b;
  napi_create_object(env, &obj);
  napi_create_int32(env, snd, &a);
  napi_create_int32(env, rcv, &b);
  napi_set_named_property(env, obj, "sndbuf", a);
  napi_set_named_property(env, obj, "rcvbuf", b);
  return obj;
}

napi_value GetBufferSizes(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  napi_get_cb_info(env, info, &argc, argv, nullptr, nullptr);
  int32_t fd;
  if (argc < 1 || !Int32Arg(env, argv[0], "fd", &fd)) return nullptr;
  return Sizes(env, fd);
}

// setBufferSizes(fd, sndbuf, rcvbuf) -> { sndbuf, rcvbuf }; 0 leaves that buffer alone.
napi_value SetBufferSizes(napi_env env, napi_callback_info info) {
  size_t argc = 3;
  napi_value argv[3];
  napi_get_cb_info(env, info, &argc, argv, nullptr, nullptr);
  int32_t fd, snd, rcv;
  if (argc < 3) {
    napi_throw_type_error(env, "ERR_INVALID_ARG", "setBufferSizes(fd, sndbuf, rcvbuf)");
    return nullptr;
  }
  if (!Int32Arg(env, argv[0], "fd", &fd) || !Int32Arg(env, argv[1], "sndbuf", &snd) ||
      !Int32Arg(env, argv[2], "rcvbuf", &rcv)) {
    return nullptr;
  }
  if (snd > 0 && setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &snd, sizeof snd) != 0) {
    ThrowErrno(env, "setsockopt(SO_SNDBUF)", errno);
    return nullptr;
  }
  if (rcv > 0 && setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcv, sizeof rcv) != 0) {
    ThrowErrno(env, "setsockopt(SO_RCVBUF)", errno);
    return nullptr;
  }
  return Sizes(env, fd);
}

napi_value Init(napi_env env, napi_value exports) {
  napi_property_descriptor props[] = {
      {"setBufferSizes", nullptr, SetBufferSizes, nullptr, nullptr, nullptr, napi_default,
       nullptr},
      {"getBufferSizes", nullptr, GetBufferSizes, nullptr, nullptr, nullptr, napi_default,
       nullptr},
  };
  napi_define_properties(env, exports, 2, props);
  return exports;
}

}  // namespace

NAPI_MODULE(NODE_GYP_MODULE_NAME, Init)
