// @ssi/shm native addon: POSIX shared memory segments and cross-process futex wait/wake.
//
// What lives here, and nothing else (everything with a policy is in TypeScript):
//   create(name, size, kind, populate) / open(name, kind)  shm_open + ftruncate + mmap(MAP_SHARED)
//   close(handle)                                           detach the JS buffer, drop the mapping
//   unlink(name)                                            shm_unlink
//   wake(handle, byteOffset, count)                         FUTEX_WAKE (shared, not PRIVATE)
//   waitSync(handle, byteOffset, expected, timeoutMs, spinNs)  spin, then FUTEX_WAIT on this thread
//   new Waiter(); waiter.wait(handle, byteOffset, expected, timeoutMs, spinNs) -> Promise<string>
//       the same wait on a helper thread; the result comes back to JavaScript through a
//       thread-safe function, so the event loop never blocks.
//   addressOf(view)                                         the address of a typed array's first byte
//   readFrom(pid, address, into)                            process_vm_readv (cross-memory attach):
//       copies another process's bytes straight into `into`, one copy, no shared memory between
//   writeTo(pid, address, from)                             process_vm_writev: the other direction
//
// Buffer kinds. `kind` selects how the mapping is handed to JavaScript:
//   "ab"  an ArrayBuffer over the mapping (makeUncountedArrayBuffer: V8 does not count it as
//         external memory).  Atomics.load/store/add/compareExchange work on an
//         Int32Array over it (they compile to the same lock-prefixed / fenced instructions as on a
//         SharedArrayBuffer); Atomics.wait does not (non-shared), which we never use anyway.  It can
//         be *detached* on close, so the mapping can be unmapped deterministically without leaving a
//         JS view that would fault.
//   "sab" a SharedArrayBuffer whose backing store is the mapping (needs the V8 API, see
//         makeSharedArrayBuffer).  Cannot be detached: the mapping lives until the GC drops it.
// The default ("ab") was chosen by measurement (tools/bench: `node tools/bench/dist/cli.js shm`,
// section "Buffer choice"; numbers in packages/shm/README.md): Atomics cost the same on both
// (~11-19 ns), but V8 copies into/out of a SharedArrayBuffer with relaxed word-by-word atomics at
// about half the speed of the memmove it uses for an ArrayBuffer (19-29 vs 37-54 GB/s), which
// gives 1.3-2.3x the 1 MiB ping-pong bandwidth with "ab"; small-message latency is the same.
// And only an ArrayBuffer can be detached, which makes close() safe.
//
// Futexes are the non-private kind (no FUTEX_PRIVATE_FLAG): the kernel keys them by (inode, offset)
// of the shared mapping, so a waiter in one process is woken by FUTEX_WAKE in another.  V8's own
// Atomics.wait/notify are an in-process emulation and do NOT work across processes.

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <node_api.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <v8.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>

namespace {

// ---------------------------------------------------------------------------------------------
// helpers

#define CHECK_NAPI(env, call)                                                  \
  do {                                                                         \
    napi_status status_ = (call);                                              \
    if (status_ != napi_ok) {                                                  \
      const napi_extended_error_info* info_ = nullptr;                         \
      napi_get_last_error_info((env), &info_);                                 \
      bool pending_ = false;                                                   \
      napi_is_exception_pending((env), &pending_);                             \
      if (!pending_)                                                           \
        napi_throw_error((env), "EINTERNAL",                                   \
                         info_ && info_->error_message ? info_->error_message  \
                                                       : "N-API call failed"); \
      return nullptr;                                                          \
    }                                                                          \
  } while (0)

napi_value throwErrno(napi_env env, int err, const std::string& what) {
  const char* code = "EUNKNOWN";
  switch (err) {
    case ENOENT: code = "ENOENT"; break;
    case EEXIST: code = "EEXIST"; break;
    case EACCES: code = "EACCES"; break;
    case EINVAL: code = "EINVAL"; break;
    case ENOMEM: code = "ENOMEM"; break;
    case ENOSPC: code = "ENOSPC"; break;
    case EMFILE: code = "EMFILE"; break;
    case ENFILE: code = "ENFILE"; break;
    case ENAMETOOLONG: code = "ENAMETOOLONG"; break;
    case EPERM: code = "EPERM"; break;
    case EFBIG: code = "EFBIG"; break;
    case ESRCH: code = "ESRCH"; break;
    case EFAULT: code = "EFAULT"; break;
    case ENOSYS: code = "ENOSYS"; break;
    default: break;
  }
  std::string msg = what + ": " + strerror(err);
  napi_throw_error(env, code, msg.c_str());
  return nullptr;
}

napi_value throwType(napi_env env, const char* msg) {
  napi_throw_type_error(env, "EARG", msg);
  return nullptr;
}

bool getString(napi_env env, napi_value v, std::string* out) {
  size_t len = 0;
  if (napi_get_value_string_utf8(env, v, nullptr, 0, &len) != napi_ok) return false;
  out->resize(len);
  size_t got = 0;
  if (napi_get_value_string_utf8(env, v, &(*out)[0], len + 1, &got) != napi_ok) return false;
  out->resize(got);
  return true;
}

int64_t nowNs() {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000LL + ts.tv_nsec;
}

inline void cpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield" ::: "memory");
#endif
}

long futexWait(uint32_t* addr, uint32_t expected, const struct timespec* rel) {
  // Shared (non-private) futex: works across processes on a MAP_SHARED mapping.
  return syscall(SYS_futex, addr, FUTEX_WAIT, expected, rel, nullptr, 0);
}

long futexWake(uint32_t* addr, int count) {
  return syscall(SYS_futex, addr, FUTEX_WAKE, count, nullptr, nullptr, 0);
}

// ---------------------------------------------------------------------------------------------
// mappings: reference counted so that a helper thread spinning on a word keeps the pages mapped
// even when JavaScript closes the segment meanwhile.

struct Mapping {
  void* base;
  size_t size;
  std::atomic<int> refs;
};

void mappingRelease(Mapping* m) {
  if (m->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) {
    munmap(m->base, m->size);
    delete m;
  }
}

struct AbRef {  // the reference held by an external ArrayBuffer
  Mapping* m;
  bool released;
};

struct Handle {  // the object JavaScript holds (wrapped)
  Mapping* m;
  AbRef* ab;  // null for a SharedArrayBuffer
  napi_ref bufferRef;
  bool closed;
};

// The ArrayBuffer object was collected (it was not detached by close): its reference goes.
void abFinalize(napi_env, void* data, void*) {
  AbRef* r = static_cast<AbRef*>(data);
  if (!r->released) mappingRelease(r->m);
  delete r;
}

void handleFinalize(napi_env env, void* data, void*) {
  Handle* h = static_cast<Handle*>(data);
  if (h->bufferRef) napi_delete_reference(env, h->bufferRef);
  if (!h->closed) mappingRelease(h->m);
  delete h;
}

// A SharedArrayBuffer over external memory needs the V8 API (N-API on Node 20 has no such call).
// The napi_value <-> v8::Local conversion below is exactly what Node's own N-API implementation
// does (v8impl::JsValueFromV8LocalValue); it is valid inside an N-API callback, whose HandleScope
// is open.
napi_value makeSharedArrayBuffer(Mapping* m) {
  v8::Isolate* isolate = v8::Isolate::GetCurrent();
  m->refs.fetch_add(1);
  std::unique_ptr<v8::BackingStore> store = v8::SharedArrayBuffer::NewBackingStore(
      m->base, m->size,
      [](void*, size_t, void* data) { mappingRelease(static_cast<Mapping*>(data)); }, m);
  v8::Local<v8::SharedArrayBuffer> sab =
      v8::SharedArrayBuffer::New(isolate, std::shared_ptr<v8::BackingStore>(std::move(store)));
  v8::Local<v8::Value> value = sab;
  return reinterpret_cast<napi_value>(*value);
}

// An ArrayBuffer over the mapping that V8 does not count as this process's external memory.
// Node's napi_create_external_arraybuffer makes one whose whole length V8 adds to the isolate's
// external memory, which drives its GC heuristics as if the process had allocated it: an sm
// segment is N² postboxes (40 MiB at 64 ranks), shared with every process of the node and
// committed a page at a time only where used, and a rank started from a start-up snapshot then
// ran incremental marking and a full GC during its first collective (issue #21; none with it
// uncounted). A backing store with V8's empty deleter is not counted (V8 leaves
// memory it never frees out of the accounting); the mapping's reference is dropped instead when
// the ArrayBuffer object is collected (a finalizer on it), or at once by close(), which detaches
// the buffer first, as V8 asks of manually managed memory. Typed arrays and Buffers over the
// mapping hold the ArrayBuffer object, so it outlives every view.
napi_value makeUncountedArrayBuffer(napi_env env, Mapping* m, AbRef* r) {
  v8::Isolate* isolate = v8::Isolate::GetCurrent();
  std::unique_ptr<v8::BackingStore> store =
      v8::ArrayBuffer::NewBackingStore(m->base, m->size, v8::BackingStore::EmptyDeleter, nullptr);
  v8::Local<v8::ArrayBuffer> ab = v8::ArrayBuffer::New(isolate, std::move(store));
  v8::Local<v8::Value> value = ab;
  napi_value buffer = reinterpret_cast<napi_value>(*value);
  if (napi_add_finalizer(env, buffer, r, abFinalize, nullptr, nullptr) != napi_ok) return nullptr;
  return buffer;
}

napi_value wrapMapping(napi_env env, Mapping* m, bool sab) {
  Handle* h = new Handle{m, nullptr, nullptr, false};
  napi_value buffer;
  if (sab) {
    buffer = makeSharedArrayBuffer(m);
  } else {
    AbRef* r = new AbRef{m, false};
    m->refs.fetch_add(1);
    buffer = makeUncountedArrayBuffer(env, m, r);
    if (buffer == nullptr) {
      mappingRelease(m);
      delete r;
      mappingRelease(m);
      delete h;
      napi_throw_error(env, "EINTERNAL", "cannot make an ArrayBuffer over the mapping");
      return nullptr;
    }
    h->ab = r;
  }
  napi_value obj;
  CHECK_NAPI(env, napi_create_object(env, &obj));
  CHECK_NAPI(env, napi_create_reference(env, buffer, 1, &h->bufferRef));
  CHECK_NAPI(env, napi_set_named_property(env, obj, "buffer", buffer));
  napi_value size;
  CHECK_NAPI(env, napi_create_double(env, static_cast<double>(m->size), &size));
  CHECK_NAPI(env, napi_set_named_property(env, obj, "size", size));
  CHECK_NAPI(env, napi_wrap(env, obj, h, handleFinalize, nullptr, nullptr));
  return obj;
}

bool parseKind(napi_env env, napi_value v, bool* sab) {
  std::string kind;
  if (!getString(env, v, &kind)) return false;
  if (kind == "sab") {
    *sab = true;
    return true;
  }
  if (kind == "ab") {
    *sab = false;
    return true;
  }
  return false;
}

Handle* unwrapHandle(napi_env env, napi_value v) {
  void* data = nullptr;
  if (napi_unwrap(env, v, &data) != napi_ok || data == nullptr) return nullptr;
  return static_cast<Handle*>(data);
}

// Resolve (handle, byteOffset) to an aligned 32-bit word inside a live mapping.
uint32_t* wordAt(napi_env env, napi_value hv, napi_value ov, Mapping** mOut) {
  Handle* h = unwrapHandle(env, hv);
  if (h == nullptr) {
    throwType(env, "expected a segment handle");
    return nullptr;
  }
  if (h->closed) {
    napi_throw_error(env, "ECLOSED", "the segment is closed");
    return nullptr;
  }
  double off = -1;
  if (napi_get_value_double(env, ov, &off) != napi_ok || off < 0 ||
      off + 4 > static_cast<double>(h->m->size) || static_cast<int64_t>(off) % 4 != 0) {
    throwType(env, "byteOffset must be a multiple of 4 inside the segment");
    return nullptr;
  }
  if (mOut) *mOut = h->m;
  return reinterpret_cast<uint32_t*>(static_cast<char*>(h->m->base) + static_cast<size_t>(off));
}

// ---------------------------------------------------------------------------------------------
// segments

napi_value Create(napi_env env, napi_callback_info info) {
  size_t argc = 4;
  napi_value argv[4];
  CHECK_NAPI(env, napi_get_cb_info(env, info, &argc, argv, nullptr, nullptr));
  std::string name;
  double size = 0;
  bool sab = false, populate = false;
  if (argc < 4 || !getString(env, argv[0], &name)) return throwType(env, "create(name, size, kind, populate)");
  if (napi_get_value_double(env, argv[1], &size) != napi_ok || size < 1 || size > 1099511627776.0)
    return throwType(env, "size must be a positive number of bytes");
  if (!parseKind(env, argv[2], &sab)) return throwType(env, "kind must be 'ab' or 'sab'");
  napi_get_value_bool(env, argv[3], &populate);

  int fd = shm_open(name.c_str(), O_CREAT | O_EXCL | O_RDWR, 0600);
  if (fd < 0) return throwErrno(env, errno, "shm_open(" + name + ", O_CREAT|O_EXCL)");
  size_t len = static_cast<size_t>(size);
  if (ftruncate(fd, static_cast<off_t>(len)) != 0) {
    int e = errno;
    close(fd);
    shm_unlink(name.c_str());
    return throwErrno(env, e, "ftruncate(" + name + ")");
  }
  void* base = mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_SHARED | (populate ? MAP_POPULATE : 0), fd, 0);
  int e = errno;
  close(fd);
  if (base == MAP_FAILED) {
    shm_unlink(name.c_str());
    return throwErrno(env, e, "mmap(" + name + ")");
  }
  Mapping* m = new Mapping{base, len, {1}};
  return wrapMapping(env, m, sab);
}

napi_value Open(napi_env env, napi_callback_info info) {
  size_t argc = 3;
  napi_value argv[3];
  CHECK_NAPI(env, napi_get_cb_info(env, info, &argc, argv, nullptr, nullptr));
  std::string name;
  bool sab = false, populate = false;
  if (argc < 3 || !getString(env, argv[0], &name)) return throwType(env, "open(name, kind, populate)");
  if (!parseKind(env, argv[1], &sab)) return throwType(env, "kind must be 'ab' or 'sab'");
  napi_get_value_bool(env, argv[2], &populate);
  int fd = shm_open(name.c_str(), O_RDWR, 0);
  if (fd < 0) return throwErrno(env, errno, "shm_open(" + name + ")");
  struct stat st;
  if (fstat(fd, &st) != 0) {
    int e = errno;
    close(fd);
    return throwErrno(env, e, "fstat(" + name + ")");
  }
  if (st.st_size <= 0) {
    close(fd);
    napi_throw_error(env, "EEMPTY", ("shared segment " + name + " has size 0 (still being created?)").c_str());
    return nullptr;
  }
  size_t len = static_cast<size_t>(st.st_size);
  void* base = mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_SHARED | (populate ? MAP_POPULATE : 0), fd, 0);
  int e = errno;
  close(fd);
  if (base == MAP_FAILED) return throwErrno(env, e, "mmap(" + name + ")");
  Mapping* m = new Mapping{base, len, {1}};
  return wrapMapping(env, m, sab);
}

napi_value Close(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  CHECK_NAPI(env, napi_get_cb_info(env, info, &argc, argv, nullptr, nullptr));
  Handle* h = argc >= 1 ? unwrapHandle(env, argv[0]) : nullptr;
  if (h == nullptr) return throwType(env, "close(handle)");
  if (!h->closed) {
    h->closed = true;
    if (h->ab != nullptr && h->bufferRef != nullptr) {
      napi_value buffer;
      if (napi_get_reference_value(env, h->bufferRef, &buffer) == napi_ok && buffer != nullptr) {
        // Every view on it becomes length 0: JavaScript can no longer touch the pages.
        if (napi_detach_arraybuffer(env, buffer) == napi_ok && !h->ab->released) {
          h->ab->released = true;
          mappingRelease(h->m);
        }
      }
    }
    if (h->bufferRef) {
      napi_delete_reference(env, h->bufferRef);
      h->bufferRef = nullptr;
    }
    mappingRelease(h->m);
  }
  napi_value undef;
  napi_get_undefined(env, &undef);
  return undef;
}

napi_value Unlink(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  CHECK_NAPI(env, napi_get_cb_info(env, info, &argc, argv, nullptr, nullptr));
  std::string name;
  if (argc < 1 || !getString(env, argv[0], &name)) return throwType(env, "unlink(name)");
  napi_value result;
  if (shm_unlink(name.c_str()) != 0) {
    if (errno == ENOENT) {
      napi_get_boolean(env, false, &result);
      return result;
    }
    return throwErrno(env, errno, "shm_unlink(" + name + ")");
  }
  napi_get_boolean(env, true, &result);
  return result;
}

// ---------------------------------------------------------------------------------------------
// wait / wake

enum WaitResult { kOk = 0, kNotEqual = 1, kTimedOut = 2, kCancelled = 3 };
const char* kResultNames[] = {"ok", "not-equal", "timed-out", "cancelled"};

// Spin for up to spinNs, then block in FUTEX_WAIT until woken, the value differs or the deadline
// passes (timeoutNs < 0: no deadline).  `cancel` (may be null) is polled by the spin and after
// every wake-up.
int doWait(uint32_t* addr, uint32_t expected, int64_t timeoutNs, int64_t spinNs,
           const std::atomic<bool>* cancel) {
  if (__atomic_load_n(addr, __ATOMIC_SEQ_CST) != expected) return kNotEqual;
  int64_t start = nowNs();
  int64_t deadline = timeoutNs < 0 ? INT64_MAX : start + timeoutNs;
  if (spinNs > 0) {
    int64_t spinEnd = start + spinNs;
    if (spinEnd > deadline) spinEnd = deadline;
    unsigned n = 0;
    for (;;) {
      if (__atomic_load_n(addr, __ATOMIC_ACQUIRE) != expected) return kOk;
      if (cancel && cancel->load(std::memory_order_relaxed)) return kCancelled;
      cpuRelax();
      if ((++n & 63) == 0 && nowNs() >= spinEnd) break;
    }
  }
  for (;;) {
    if (cancel && cancel->load(std::memory_order_acquire)) return kCancelled;
    struct timespec rel;
    struct timespec* relp = nullptr;
    if (deadline != INT64_MAX) {
      int64_t left = deadline - nowNs();
      if (left <= 0) return kTimedOut;
      rel.tv_sec = left / 1000000000LL;
      rel.tv_nsec = left % 1000000000LL;
      relp = &rel;
    }
    long r = futexWait(addr, expected, relp);
    if (r == 0) {
      if (cancel && cancel->load(std::memory_order_acquire)) return kCancelled;
      return kOk;
    }
    if (errno == EAGAIN) return kNotEqual;
    if (errno == ETIMEDOUT) return kTimedOut;
    // EINTR: go round again with the remaining time.
  }
}

bool getInt64(napi_env env, napi_value v, int64_t* out) {
  double d;
  if (napi_get_value_double(env, v, &d) != napi_ok) return false;
  if (d != d) return false;
  if (d > 9.0e18) d = 9.0e18;
  if (d < -1) d = -1;
  *out = static_cast<int64_t>(d);
  return true;
}

napi_value Wake(napi_env env, napi_callback_info info) {
  size_t argc = 3;
  napi_value argv[3];
  CHECK_NAPI(env, napi_get_cb_info(env, info, &argc, argv, nullptr, nullptr));
  if (argc < 3) return throwType(env, "wake(handle, byteOffset, count)");
  uint32_t* addr = wordAt(env, argv[0], argv[1], nullptr);
  if (addr == nullptr) return nullptr;
  int32_t count = 0;
  if (napi_get_value_int32(env, argv[2], &count) != napi_ok || count < 0) return throwType(env, "count must be >= 0");
  if (count == 0) count = INT32_MAX;
  long r = futexWake(addr, count);
  if (r < 0) return throwErrno(env, errno, "futex(FUTEX_WAKE)");
  napi_value out;
  napi_create_int32(env, static_cast<int32_t>(r), &out);
  return out;
}

napi_value WaitSync(napi_env env, napi_callback_info info) {
  size_t argc = 5;
  napi_value argv[5];
  CHECK_NAPI(env, napi_get_cb_info(env, info, &argc, argv, nullptr, nullptr));
  if (argc < 5) return throwType(env, "waitSync(handle, byteOffset, expected, timeoutMs, spinNs)");
  Mapping* m = nullptr;
  uint32_t* addr = wordAt(env, argv[0], argv[1], &m);
  if (addr == nullptr) return nullptr;
  int64_t expected = 0, timeoutMs = -1, spinNs = 0;
  double e;
  if (napi_get_value_double(env, argv[2], &e) != napi_ok) return throwType(env, "expected must be a number");
  expected = static_cast<int64_t>(e);
  if (!getInt64(env, argv[3], &timeoutMs) || !getInt64(env, argv[4], &spinNs))
    return throwType(env, "timeoutMs and spinNs must be numbers");
  int r = doWait(addr, static_cast<uint32_t>(expected), timeoutMs < 0 ? -1 : timeoutMs * 1000000LL, spinNs, nullptr);
  napi_value out;
  napi_create_string_utf8(env, kResultNames[r], NAPI_AUTO_LENGTH, &out);
  return out;
}

// A Waiter owns one helper thread that performs one wait at a time and reports through a
// thread-safe function.  The TypeScript layer keeps a small pool of them.
struct Waiter {
  std::thread thread;
  std::mutex mu;
  std::condition_variable cv;
  bool stop = false;
  bool hasRequest = false;
  bool busy = false;  // main thread only
  bool closed = false;
  std::atomic<bool> cancel{false};
  // the request
  Mapping* mapping = nullptr;
  uint32_t* addr = nullptr;
  uint32_t expected = 0;
  int64_t timeoutNs = -1;
  int64_t spinNs = 0;
  int cpu = -1;  // the CPU the main thread was on when it asked
  // main-thread state
  napi_deferred deferred = nullptr;
  napi_ref self = nullptr;
  napi_threadsafe_function tsfn = nullptr;
  napi_env env = nullptr;
  int owners = 2;  // the JS object and the thread-safe function; freed when both are gone
};

void waiterThread(Waiter* w) {
  int lastCpu = -1;
  for (;;) {
    uint32_t* addr;
    uint32_t expected;
    int64_t timeoutNs, spinNs;
    int cpu;
    {
      std::unique_lock<std::mutex> lock(w->mu);
      w->cv.wait(lock, [w] { return w->stop || w->hasRequest; });
      if (!w->hasRequest) return;  // stop with nothing to do
      addr = w->addr;
      expected = w->expected;
      timeoutNs = w->timeoutNs;
      spinNs = w->spinNs;
      cpu = w->cpu;
    }
    // Sleep on the CPU the event loop last ran on: the wake-up then lands where the loop thread
    // will run next, which is already awake when the thread-safe function signals it (on a VM,
    // waking a second, idle vCPU costs tens of microseconds). Measured in tools/bench.
    if (cpu >= 0 && cpu != lastCpu) {
      cpu_set_t set;
      CPU_ZERO(&set);
      CPU_SET(cpu, &set);
      if (pthread_setaffinity_np(pthread_self(), sizeof(set), &set) == 0) lastCpu = cpu;
    }
    int r = doWait(addr, expected, timeoutNs, spinNs, &w->cancel);
    {
      std::lock_guard<std::mutex> lock(w->mu);
      w->hasRequest = false;
    }
    napi_call_threadsafe_function(w->tsfn, reinterpret_cast<void*>(static_cast<intptr_t>(r)), napi_tsfn_nonblocking);
  }
}

// Runs on the main thread: settle the promise of the wait that just finished.
void waiterCallJs(napi_env env, napi_value, void* context, void* data) {
  Waiter* w = static_cast<Waiter*>(context);
  int r = static_cast<int>(reinterpret_cast<intptr_t>(data));
  napi_deferred d = w->deferred;
  w->deferred = nullptr;
  w->busy = false;
  if (w->mapping) {
    mappingRelease(w->mapping);
    w->mapping = nullptr;
  }
  if (env == nullptr) return;  // environment tearing down
  if (w->self) {
    napi_delete_reference(env, w->self);
    w->self = nullptr;
  }
  if (!w->closed) napi_unref_threadsafe_function(env, w->tsfn);
  if (d) {
    napi_value v;
    napi_create_string_utf8(env, kResultNames[r], NAPI_AUTO_LENGTH, &v);
    napi_resolve_deferred(env, d, v);
  }
}

void waiterStop(Waiter* w) {
  if (w->closed) return;
  w->closed = true;
  {
    std::lock_guard<std::mutex> lock(w->mu);
    w->stop = true;
    w->cancel.store(true);
  }
  w->cv.notify_all();
  // A thread asleep in FUTEX_WAIT: wake that word (the wait reports 'cancelled'; other sleepers on
  // the same word, in any process, see a spurious wake-up, which every protocol here tolerates).
  {
    std::lock_guard<std::mutex> lock(w->mu);
    if (w->hasRequest && w->addr != nullptr) futexWake(w->addr, INT32_MAX);
  }
  if (w->thread.joinable()) w->thread.join();
  // Queued results are still delivered (napi_tsfn_release drains the queue).
  napi_release_threadsafe_function(w->tsfn, napi_tsfn_release);
}

void waiterCleanupHook(void* arg) { waiterStop(static_cast<Waiter*>(arg)); }

void waiterTsfnFinalize(napi_env env, void* data, void*) {
  Waiter* w = static_cast<Waiter*>(data);
  napi_remove_env_cleanup_hook(env, waiterCleanupHook, w);
  if (--w->owners == 0) delete w;
}

void waiterObjectFinalize(napi_env, void* data, void*) {
  // The JS object is gone: stop the thread; whichever finalizer runs last frees the struct.
  Waiter* w = static_cast<Waiter*>(data);
  waiterStop(w);
  if (--w->owners == 0) delete w;
}

napi_value WaiterNew(napi_env env, napi_callback_info info) {
  napi_value self;
  CHECK_NAPI(env, napi_get_cb_info(env, info, nullptr, nullptr, &self, nullptr));
  Waiter* w = new Waiter();
  w->env = env;
  napi_value name;
  CHECK_NAPI(env, napi_create_string_utf8(env, "ssi-shm-waiter", NAPI_AUTO_LENGTH, &name));
  CHECK_NAPI(env, napi_create_threadsafe_function(env, nullptr, nullptr, name, 0, 1, w, waiterTsfnFinalize, w,
                                                  waiterCallJs, &w->tsfn));
  CHECK_NAPI(env, napi_unref_threadsafe_function(env, w->tsfn));
  CHECK_NAPI(env, napi_wrap(env, self, w, waiterObjectFinalize, nullptr, nullptr));
  napi_add_env_cleanup_hook(env, waiterCleanupHook, w);
  w->thread = std::thread(waiterThread, w);
  return self;
}

Waiter* unwrapWaiter(napi_env env, napi_value self) {
  void* data = nullptr;
  if (napi_unwrap(env, self, &data) != napi_ok) return nullptr;
  return static_cast<Waiter*>(data);
}

napi_value WaiterWait(napi_env env, napi_callback_info info) {
  size_t argc = 5;
  napi_value argv[5];
  napi_value self;
  CHECK_NAPI(env, napi_get_cb_info(env, info, &argc, argv, &self, nullptr));
  Waiter* w = unwrapWaiter(env, self);
  if (w == nullptr) return throwType(env, "not a Waiter");
  if (w->closed) {
    napi_throw_error(env, "ECLOSED", "the waiter is closed");
    return nullptr;
  }
  if (w->busy) {
    napi_throw_error(env, "EBUSY", "this waiter already has a wait in progress");
    return nullptr;
  }
  if (argc < 5) return throwType(env, "wait(handle, byteOffset, expected, timeoutMs, spinNs)");
  Mapping* m = nullptr;
  uint32_t* addr = wordAt(env, argv[0], argv[1], &m);
  if (addr == nullptr) return nullptr;
  double e;
  int64_t timeoutMs = -1, spinNs = 0;
  if (napi_get_value_double(env, argv[2], &e) != napi_ok) return throwType(env, "expected must be a number");
  if (!getInt64(env, argv[3], &timeoutMs) || !getInt64(env, argv[4], &spinNs))
    return throwType(env, "timeoutMs and spinNs must be numbers");
  napi_value promise;
  CHECK_NAPI(env, napi_create_promise(env, &w->deferred, &promise));
  CHECK_NAPI(env, napi_create_reference(env, self, 1, &w->self));
  CHECK_NAPI(env, napi_ref_threadsafe_function(env, w->tsfn));
  m->refs.fetch_add(1);
  w->busy = true;
  {
    std::lock_guard<std::mutex> lock(w->mu);
    w->mapping = m;
    w->addr = addr;
    w->expected = static_cast<uint32_t>(static_cast<int64_t>(e));
    w->timeoutNs = timeoutMs < 0 ? -1 : timeoutMs * 1000000LL;
    w->spinNs = spinNs;
    w->cpu = sched_getcpu();
    w->hasRequest = true;
  }
  w->cv.notify_one();
  return promise;
}

napi_value WaiterClose(napi_env env, napi_callback_info info) {
  napi_value self;
  CHECK_NAPI(env, napi_get_cb_info(env, info, nullptr, nullptr, &self, nullptr));
  Waiter* w = unwrapWaiter(env, self);
  if (w != nullptr) waiterStop(w);
  napi_value undef;
  napi_get_undefined(env, &undef);
  return undef;
}

napi_value Info(napi_env env, napi_callback_info) {
  napi_value obj, v;
  CHECK_NAPI(env, napi_create_object(env, &obj));
  long line = sysconf(_SC_LEVEL1_DCACHE_LINESIZE);
  if (line <= 0) line = 64;
  napi_create_int32(env, static_cast<int32_t>(line), &v);
  napi_set_named_property(env, obj, "cacheLine", v);
  napi_create_int32(env, static_cast<int32_t>(sysconf(_SC_PAGESIZE)), &v);
  napi_set_named_property(env, obj, "pageSize", v);
  return obj;
}

// ---------------------------------------------------------------------------------------------
// cross-memory attach (single copy of a large message, as Open MPI's vader does)

bool typedArrayData(napi_env env, napi_value v, uint8_t** data, size_t* bytes) {
  bool is = false;
  napi_is_typedarray(env, v, &is);
  if (!is) return false;
  napi_typedarray_type type;
  size_t length = 0, offset = 0;
  void* p = nullptr;
  napi_value ab;
  if (napi_get_typedarray_info(env, v, &type, &length, &p, &ab, &offset) != napi_ok) return false;
  size_t elem = 1;
  switch (type) {
    case napi_int16_array: case napi_uint16_array: elem = 2; break;
    case napi_int32_array: case napi_uint32_array: case napi_float32_array: elem = 4; break;
    case napi_float64_array: case napi_bigint64_array: case napi_biguint64_array: elem = 8; break;
    default: break;
  }
  *data = static_cast<uint8_t*>(p);  // already adjusted by the view's byte offset
  *bytes = length * elem;
  return true;
}

// addressOf(view) -> number: where the view's first byte lives in this process (user-space
// addresses fit the 53 bits of a double). The backing store of an ArrayBuffer never moves.
napi_value AddressOf(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  CHECK_NAPI(env, napi_get_cb_info(env, info, &argc, argv, nullptr, nullptr));
  uint8_t* data = nullptr;
  size_t bytes = 0;
  if (argc < 1 || !typedArrayData(env, argv[0], &data, &bytes)) return throwType(env, "addressOf(view): view must be a typed array");
  napi_value out;
  CHECK_NAPI(env, napi_create_double(env, static_cast<double>(reinterpret_cast<uintptr_t>(data)), &out));
  return out;
}

// Copies between a typed array of this process and `address` of process `pid`, in a loop (the
// kernel may move less than asked): process_vm_readv (into the view) or process_vm_writev (from
// it). Throws with the errno's code (EPERM: not allowed here, ESRCH: no such process, EFAULT:
// the address is not mapped there).
napi_value CrossCopy(napi_env env, napi_callback_info info, bool read) {
  const char* usage = read ? "readFrom(pid, address, into): a pid > 0, an address >= 0 and a typed array"
                           : "writeTo(pid, address, from): a pid > 0, an address >= 0 and a typed array";
  size_t argc = 3;
  napi_value argv[3];
  CHECK_NAPI(env, napi_get_cb_info(env, info, &argc, argv, nullptr, nullptr));
  int32_t pid = 0;
  double address = 0;
  uint8_t* data = nullptr;
  size_t bytes = 0;
  if (argc < 3 || napi_get_value_int32(env, argv[0], &pid) != napi_ok ||
      napi_get_value_double(env, argv[1], &address) != napi_ok ||
      !typedArrayData(env, argv[2], &data, &bytes) || pid <= 0 || address < 0) {
    return throwType(env, usage);
  }
  const std::string what = std::string(read ? "process_vm_readv from" : "process_vm_writev to") +
                           " process " + std::to_string(pid);
  uintptr_t remote = static_cast<uintptr_t>(address);
  size_t done = 0;
  while (done < bytes) {
    struct iovec local_iov = {data + done, bytes - done};
    struct iovec remote_iov = {reinterpret_cast<void*>(remote + done), bytes - done};
    ssize_t n = read ? process_vm_readv(pid, &local_iov, 1, &remote_iov, 1, 0)
                     : process_vm_writev(pid, &local_iov, 1, &remote_iov, 1, 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      return throwErrno(env, errno, what);
    }
    if (n == 0) return throwErrno(env, EFAULT, what);
    done += static_cast<size_t>(n);
  }
  napi_value out;
  CHECK_NAPI(env, napi_create_double(env, static_cast<double>(done), &out));
  return out;
}

napi_value ReadFrom(napi_env env, napi_callback_info info) { return CrossCopy(env, info, true); }
napi_value WriteTo(napi_env env, napi_callback_info info) { return CrossCopy(env, info, false); }

napi_value Init(napi_env env, napi_value exports) {
  napi_property_descriptor fns[] = {
      {"create", nullptr, Create, nullptr, nullptr, nullptr, napi_default, nullptr},
      {"open", nullptr, Open, nullptr, nullptr, nullptr, napi_default, nullptr},
      {"close", nullptr, Close, nullptr, nullptr, nullptr, napi_default, nullptr},
      {"unlink", nullptr, Unlink, nullptr, nullptr, nullptr, napi_default, nullptr},
      {"wake", nullptr, Wake, nullptr, nullptr, nullptr, napi_default, nullptr},
      {"waitSync", nullptr, WaitSync, nullptr, nullptr, nullptr, napi_default, nullptr},
      {"info", nullptr, Info, nullptr, nullptr, nullptr, napi_default, nullptr},
      {"addressOf", nullptr, AddressOf, nullptr, nullptr, nullptr, napi_default, nullptr},
      {"readFrom", nullptr, ReadFrom, nullptr, nullptr, nullptr, napi_default, nullptr},
      {"writeTo", nullptr, WriteTo, nullptr, nullptr, nullptr, napi_default, nullptr},
  };
  CHECK_NAPI(env, napi_define_properties(env, exports, sizeof(fns) / sizeof(fns[0]), fns));
  napi_property_descriptor methods[] = {
      {"wait", nullptr, WaiterWait, nullptr, nullptr, nullptr, napi_default, nullptr},
      {"close", nullptr, WaiterClose, nullptr, nullptr, nullptr, napi_default, nullptr},
  };
  napi_value cls;
  CHECK_NAPI(env, napi_define_class(env, "Waiter", NAPI_AUTO_LENGTH, WaiterNew, nullptr, 2, methods, &cls));
  CHECK_NAPI(env, napi_set_named_property(env, exports, "Waiter", cls));
  return exports;
}

}  // namespace

NAPI_MODULE(NODE_GYP_MODULE_NAME, Init)
