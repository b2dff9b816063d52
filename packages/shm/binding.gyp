{
  "targets": [
    {
      "target_name": "ssi_shm",
      "sources": ["native/shm.cc"],
      "cflags_cc": ["-std=c++17", "-O2", "-Wall", "-Wextra", "-Wno-unused-parameter"],
      "cflags_cc!": ["-fno-exceptions"],
      "libraries": ["-lrt", "-lpthread"],
      "defines": ["NAPI_VERSION=8"]
    }
  ]
}
