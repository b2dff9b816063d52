{
  "targets": [
    {
      "target_name": "ssi_sched",
      "sources": ["native/sched.cc"],
      "cflags_cc": ["-std=c++17", "-O2", "-Wall", "-Wextra"],
      "defines": ["NAPI_VERSION=8"]
    }
  ]
}
