/*
 * The `Open MPI` column of `ssi-bench pingpong`: the same ping-pong as
 * programs/pingpong-mpi.mjs, in C, for 2 ranks of any MPI (the benchmark compiles it with `mpicc`
 * and runs it with Open MPI's mpirun over the TCP BTL on loopback).
 *
 *   pingpong <reps> <size>:<iters>...
 *
 * Rank 0 does MPI_Send then MPI_Recv into a preallocated buffer, rank 1 echoes. Rank 0 prints one
 * line per size, PINGPONG {"size":S,"iters":I,"oneWayNs":[...]}: one sample per repetition
 * (round trip / 2), after an unrecorded warm-up pass of a quarter of the iterations. Before the
 * first size, unrecorded round trips of 8 bytes for SSI_BENCH_WARMUP_MS warm up the connection, as
 * in the Node drivers.
 *
 * SSI_BENCH_PREPOST=1: each receive is posted (MPI_Irecv) before the send it answers, as in
 * programs/pingpong-mpi.mjs.
 *
 * SSI_BENCH_CPUS="A,B": rank 0 pins itself to CPU A and rank 1 to CPU B before MPI_Init (so that
 * every thread it starts inherits the mask), as the Node drivers do; run it with --bind-to none.
 */
#define _GNU_SOURCE
#include <mpi.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* Pins this process to its CPU of SSI_BENCH_CPUS; the rank comes from the launcher's environment. */
static void pin(void) {
  const char *cpus = getenv("SSI_BENCH_CPUS");
  const char *r = getenv("OMPI_COMM_WORLD_RANK");
  if (!r) r = getenv("PMI_RANK");
  if (!cpus || !*cpus || !r) return;
  int a = -1, b = -1;
  if (sscanf(cpus, "%d,%d", &a, &b) != 2 || a < 0 || b < 0) {
    fprintf(stderr, "pingpong: bad SSI_BENCH_CPUS \"%s\" (want A,B)\n", cpus);
    exit(2);
  }
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(atoi(r) == 0 ? a : b, &set);
  if (sched_setaffinity(0, sizeof set, &set) != 0) {
    perror("pingpong: sched_setaffinity");
    exit(2);
  }
}

int main(int argc, char **argv) {
  int rank, size_world;
  pin();
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size_world);
  if (size_world != 2 || argc < 3) {
    if (rank == 0)
      fprintf(stderr, "usage: mpirun -np 2 pingpong <reps> <size>:<iters>...\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  int reps = atoi(argv[1]);
  int npoints = argc - 2;
  long *sizes = calloc((size_t)npoints, sizeof(long));
  long *iters = calloc((size_t)npoints, sizeof(long));
  long max = 1;
  for (int p = 0; p < npoints; p++) {
    if (sscanf(argv[p + 2], "%ld:%ld", &sizes[p], &iters[p]) != 2 || sizes[p] < 0 ||
        iters[p] < 1) {
      if (rank == 0) fprintf(stderr, "pingpong: bad point \"%s\" (want size:iters)\n", argv[p + 2]);
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
    if (sizes[p] > max) max = sizes[p];
  }
  unsigned char *sbuf = malloc((size_t)max);
  unsigned char *rbuf = malloc((size_t)max);
  const char *pp = getenv("SSI_BENCH_PREPOST");
  int prepost = pp != NULL && strcmp(pp, "1") == 0;
  unsigned char *rbuf2 = malloc(prepost ? (size_t)max : 1);
  double *samples = calloc((size_t)reps + 1, sizeof(double));
  for (long i = 0; i < max; i++) sbuf[i] = (unsigned char)((i * 7 + 1) & 0xff);
  memset(rbuf, 0, (size_t)max);
  int peer = 1 - rank;
  int warm = max < 8 ? (int)max : 8;
  const char *wm = getenv("SSI_BENCH_WARMUP_MS");
  double warmup_ns = (wm != NULL ? atof(wm) : 2000.0) * 1e6;
  double warm_t0 = now_ns();
  /* Passes of 1000 round trips for at least SSI_BENCH_WARMUP_MS (and 4 passes), as the Node
     drivers do; rank 0 says after each pass whether another follows. */
  for (int pass = 1;; pass++) {
    for (int i = 0; i < 1000; i++) {
      if (rank == 0) {
        MPI_Send(sbuf, warm, MPI_BYTE, peer, 0, MPI_COMM_WORLD);
        MPI_Recv(rbuf, warm, MPI_BYTE, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      } else {
        MPI_Recv(rbuf, warm, MPI_BYTE, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(rbuf, warm, MPI_BYTE, peer, 0, MPI_COMM_WORLD);
      }
    }
    unsigned char more = 0;
    if (rank == 0) {
      more = pass < 4 || now_ns() - warm_t0 < warmup_ns;
      MPI_Send(&more, 1, MPI_BYTE, peer, 4, MPI_COMM_WORLD);
    } else {
      MPI_Recv(&more, 1, MPI_BYTE, peer, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    if (!more) break;
  }

  for (int p = 0; p < npoints; p++) {
    int n = (int)sizes[p];
    for (int r = 0; r <= reps; r++) {
      long it = r == 0 ? (iters[p] + 3) / 4 : iters[p]; /* r = 0: the warm-up pass */
      if (rank == 0) {
        if (n > 0) rbuf[0] = rbuf[n - 1] = 0;
        double t0 = now_ns();
        for (long i = 0; i < it; i++) {
          if (prepost) {
            MPI_Request reply;
            MPI_Irecv(rbuf, n, MPI_BYTE, peer, 0, MPI_COMM_WORLD, &reply);
            MPI_Send(sbuf, n, MPI_BYTE, peer, 0, MPI_COMM_WORLD);
            MPI_Wait(&reply, MPI_STATUS_IGNORE);
          } else {
            MPI_Send(sbuf, n, MPI_BYTE, peer, 0, MPI_COMM_WORLD);
            MPI_Recv(rbuf, n, MPI_BYTE, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
          }
        }
        samples[r] = (now_ns() - t0) / (double)it / 2.0;
        if (n > 0 && (rbuf[0] != sbuf[0] || rbuf[n - 1] != sbuf[n - 1])) {
          fprintf(stderr, "pingpong: size %d: the echo does not match what was sent\n", n);
          MPI_Abort(MPI_COMM_WORLD, 3);
        }
      } else if (prepost) {
        /* the receive of the next round goes into the other buffer before this one is echoed */
        unsigned char *bufs[2] = {rbuf, rbuf2};
        MPI_Request next;
        MPI_Irecv(bufs[0], n, MPI_BYTE, peer, 0, MPI_COMM_WORLD, &next);
        for (long i = 0; i < it; i++) {
          MPI_Wait(&next, MPI_STATUS_IGNORE);
          if (i + 1 < it) MPI_Irecv(bufs[(i + 1) % 2], n, MPI_BYTE, peer, 0, MPI_COMM_WORLD, &next);
          MPI_Send(bufs[i % 2], n, MPI_BYTE, peer, 0, MPI_COMM_WORLD);
        }
      } else {
        for (long i = 0; i < it; i++) {
          MPI_Recv(rbuf, n, MPI_BYTE, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
          MPI_Send(rbuf, n, MPI_BYTE, peer, 0, MPI_COMM_WORLD);
        }
      }
    }
    if (rank == 0) {
      printf("PINGPONG {\"size\":%d,\"iters\":%ld,\"oneWayNs\":[", n, iters[p]);
      for (int r = 1; r <= reps; r++) printf("%s%.1f", r > 1 ? "," : "", samples[r]);
      printf("]}\n");
      fflush(stdout);
    }
  }
  free(sbuf);
  free(rbuf);
  free(rbuf2);
  free(samples);
  free(sizes);
  free(iters);
  MPI_Finalize();
  return 0;
}
