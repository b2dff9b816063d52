/*
 * The `Open MPI` column of `ssi-bench coll`: the same collective loops as programs/coll-mpi.mjs,
 * in C, for N ranks of any MPI (the benchmark compiles it with `mpicc` and runs it with Open MPI's
 * mpirun over the TCP BTL on loopback, with Open MPI's default collective algorithms).
 *
 *   coll <reps> <op>:<bytes>:<iters>:<warmup>...
 *
 * op is barrier (bytes 0), bcast (`bytes` of MPI_BYTE from rank 0), allreduce, reduce to rank 0
 * and scan (`bytes` of MPI_FLOAT, MPI_SUM, separate send and receive buffers), reducescatter
 * (MPI_Reduce_scatter_block of `bytes` of MPI_FLOAT per rank), alltoall (`bytes` of MPI_BYTE per
 * pair), allgather (`bytes` of MPI_BYTE per rank) or sendrecv (MPI_Sendrecv of `bytes` of MPI_BYTE to
 * rank + 1 from rank - 1: point-to-point, the exchange alltoall makes on 2 ranks). For each point every rank runs an unrecorded warm-up pass of `warmup` calls (as many as
 * the Node driver, which needs them for its JIT), then per repetition: MPI_Barrier (not timed), `iters` calls back to back, timed on
 * each rank. Rank 0 gathers the per-rank times (not timed) and prints one line per point,
 *   COLL {"op":O,"bytes":B,"np":N,"iters":I,"maxNs":[...],"avgNs":[...],"minNs":[...]}
 * with, per repetition, the largest, mean and smallest per-rank time per call. Results are
 * checked after every pass (first and last element of each block). Before the first point rank 0
 * prints `COLLINFO {"yieldWhenIdle":Y}`: Open MPI's control variable mpi_yield_when_idle read
 * through the MPI tool interface after MPI_Init (1: idle ranks yield the CPU, as Open MPI makes
 * them when mpirun sees more processes than slots; 0: they busy-poll; -1: not readable).
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

enum op { OP_BARRIER, OP_BCAST, OP_ALLREDUCE, OP_ALLTOALL, OP_ALLGATHER, OP_REDUCE, OP_REDUCE_SCATTER, OP_SCAN, OP_SENDRECV };
static const char *const OP_NAMES[] = {"barrier", "bcast", "allreduce", "alltoall", "allgather", "reduce", "reducescatter", "scan", "sendrecv"};
#define NUM_OPS 9

static int rank, np;

static void fail(const char *what) {
  fprintf(stderr, "coll (rank %d): %s\n", rank, what);
  MPI_Abort(MPI_COMM_WORLD, 3);
}

/* mpi_yield_when_idle through MPI_T (a cvar of Open MPI); -1 when there is no such variable. */
static int yield_when_idle(void) {
  int provided, index, count, result = -1;
  int value = 0; /* zeroed: a bool variable is read into its first byte only */
  MPI_T_cvar_handle handle;
  if (MPI_T_init_thread(MPI_THREAD_SINGLE, &provided) != MPI_SUCCESS) return -1;
  if (MPI_T_cvar_get_index("mpi_yield_when_idle", &index) == MPI_SUCCESS &&
      MPI_T_cvar_handle_alloc(index, NULL, &handle, &count) == MPI_SUCCESS) {
    if (count == 1 && MPI_T_cvar_read(handle, &value) == MPI_SUCCESS) result = value != 0;
    MPI_T_cvar_handle_free(&handle);
  }
  MPI_T_finalize();
  return result;
}

static unsigned char pattern(long i) { return (unsigned char)((i * 7 + 1) & 0xff); }
static unsigned char block_byte(int from, int to) { return (unsigned char)((from * 16 + to + 1) & 0xff); }
static float operand(int r, long i) { return (float)(r + 1 + (int)(i % 4)); }
static float sum_of(long i) { return (float)(np * (np + 1) / 2 + np * (int)(i % 4)); }
/* Element i of rank r's scan result: the sum of ranks 0..r's operands. */
static float prefix_of(int r, long i) { return (float)((r + 1) * (r + 2) / 2 + (r + 1) * (int)(i % 4)); }

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &np);
  if (argc < 3) {
    if (rank == 0) fprintf(stderr, "usage: mpirun -np N coll <reps> <op>:<bytes>:<iters>:<warmup>...\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  int reps = atoi(argv[1]);
  int npoints = argc - 2;
  int yield = yield_when_idle();
  if (rank == 0) {
    printf("COLLINFO {\"yieldWhenIdle\":%d}\n", yield);
    fflush(stdout);
  }
  double *maxs = calloc((size_t)reps + 1, sizeof(double));
  double *avgs = calloc((size_t)reps + 1, sizeof(double));
  double *mins = calloc((size_t)reps + 1, sizeof(double));
  double *all = calloc((size_t)np, sizeof(double));

  for (int p = 0; p < npoints; p++) {
    char name[32];
    long bytes, iters, warmup;
    if (sscanf(argv[p + 2], "%31[a-z]:%ld:%ld:%ld", name, &bytes, &iters, &warmup) != 4 ||
        bytes < 0 || iters < 1 || warmup < 0) {
      if (rank == 0) fprintf(stderr, "coll: bad point \"%s\" (want op:bytes:iters:warmup)\n", argv[p + 2]);
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int op = -1;
    for (int k = 0; k < NUM_OPS; k++)
      if (strcmp(name, OP_NAMES[k]) == 0) op = k;
    int floats = op == OP_ALLREDUCE || op == OP_REDUCE || op == OP_REDUCE_SCATTER || op == OP_SCAN;
    if (op < 0 || (floats && bytes % 4 != 0)) {
      if (rank == 0) fprintf(stderr, "coll: bad point \"%s\"\n", argv[p + 2]);
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
    long n = floats ? bytes / 4 : bytes; /* elements (reducescatter: per rank) */
    long vector = op == OP_REDUCE_SCATTER ? n * np : n; /* elements of a float operand */
    long total = op == OP_ALLTOALL || op == OP_ALLGATHER ? bytes * np : bytes;
    unsigned char *buf = NULL, *send = NULL, *into = NULL;
    float *fdata = NULL, *finto = NULL;
    if (op == OP_BCAST) {
      buf = malloc((size_t)(total > 0 ? total : 1));
      memset(buf, 0, (size_t)total);
      if (rank == 0)
        for (long i = 0; i < total; i++) buf[i] = pattern(i);
    } else if (floats) {
      fdata = malloc((size_t)(vector > 0 ? vector : 1) * sizeof(float));
      finto = calloc((size_t)(n > 0 ? n : 1), sizeof(float));
      for (long i = 0; i < vector; i++) fdata[i] = operand(rank, i);
    } else if (op == OP_ALLTOALL) {
      send = malloc((size_t)(total > 0 ? total : 1));
      into = calloc((size_t)(total > 0 ? total : 1), 1);
      for (int to = 0; to < np; to++) memset(send + (long)to * bytes, block_byte(rank, to), (size_t)bytes);
    } else if (op == OP_SENDRECV) {
      send = malloc((size_t)(bytes > 0 ? bytes : 1));
      into = calloc((size_t)(bytes > 0 ? bytes : 1), 1);
      memset(send, block_byte(rank, (rank + 1) % np), (size_t)bytes);
    } else if (op == OP_ALLGATHER) {
      send = malloc((size_t)(bytes > 0 ? bytes : 1));
      into = calloc((size_t)(total > 0 ? total : 1), 1);
      memset(send, block_byte(rank, rank), (size_t)bytes);
    }

    /* r = -1: the rehearsal (as the Node driver's; no JIT here, kept for the same sequence of
       calls), r = 0: the warm-up pass, then the timed passes */
    for (int r = -1; r <= reps; r++) {
      long it = r == -1 ? (warmup < 200 ? warmup : 200) : r == 0 ? warmup : iters;
      /* clear what the check reads */
      if (op == OP_BCAST && rank != 0 && n > 0) buf[0] = buf[n - 1] = 0;
      if (floats && n > 0) finto[0] = finto[n - 1] = 0;
      if (op == OP_SENDRECV && bytes > 0) into[0] = into[bytes - 1] = 0;
      if ((op == OP_ALLTOALL || op == OP_ALLGATHER) && bytes > 0)
        for (int k = 0; k < np; k++) into[(long)k * bytes] = into[(long)(k + 1) * bytes - 1] = 0;
      MPI_Barrier(MPI_COMM_WORLD);
      double t0 = now_ns();
      for (long i = 0; i < it; i++) {
        switch (op) {
          case OP_BARRIER: MPI_Barrier(MPI_COMM_WORLD); break;
          case OP_BCAST: MPI_Bcast(buf, (int)n, MPI_BYTE, 0, MPI_COMM_WORLD); break;
          case OP_ALLREDUCE:
            MPI_Allreduce(fdata, finto, (int)n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
            break;
          case OP_REDUCE:
            MPI_Reduce(fdata, finto, (int)n, MPI_FLOAT, MPI_SUM, 0, MPI_COMM_WORLD);
            break;
          case OP_REDUCE_SCATTER:
            MPI_Reduce_scatter_block(fdata, finto, (int)n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
            break;
          case OP_SCAN: MPI_Scan(fdata, finto, (int)n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD); break;
          case OP_ALLGATHER:
            MPI_Allgather(send, (int)bytes, MPI_BYTE, into, (int)bytes, MPI_BYTE, MPI_COMM_WORLD);
            break;
          case OP_SENDRECV:
            MPI_Sendrecv(send, (int)bytes, MPI_BYTE, (rank + 1) % np, 7, into, (int)bytes, MPI_BYTE,
                         (rank - 1 + np) % np, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            break;
          default: MPI_Alltoall(send, (int)bytes, MPI_BYTE, into, (int)bytes, MPI_BYTE, MPI_COMM_WORLD);
        }
      }
      double ns = (now_ns() - t0) / (double)(it > 0 ? it : 1);
      if (it > 0 && op == OP_BCAST && n > 0 && (buf[0] != pattern(0) || buf[n - 1] != pattern(n - 1)))
        fail("bcast: wrong data");
      if (it > 0 && op == OP_ALLREDUCE && n > 0 && (finto[0] != sum_of(0) || finto[n - 1] != sum_of(n - 1)))
        fail("allreduce: wrong sum");
      if (it > 0 && op == OP_REDUCE && rank == 0 && n > 0 &&
          (finto[0] != sum_of(0) || finto[n - 1] != sum_of(n - 1)))
        fail("reduce: wrong sum");
      if (it > 0 && op == OP_REDUCE_SCATTER && n > 0 &&
          (finto[0] != sum_of(rank * n) || finto[n - 1] != sum_of(rank * n + n - 1)))
        fail("reducescatter: wrong sum");
      if (it > 0 && op == OP_SCAN && n > 0 &&
          (finto[0] != prefix_of(rank, 0) || finto[n - 1] != prefix_of(rank, n - 1)))
        fail("scan: wrong sum");
      if (it > 0 && op == OP_ALLTOALL && bytes > 0)
        for (int k = 0; k < np; k++)
          if (into[(long)k * bytes] != block_byte(k, rank) ||
              into[(long)(k + 1) * bytes - 1] != block_byte(k, rank))
            fail("alltoall: wrong block");
      if (it > 0 && op == OP_SENDRECV && bytes > 0 &&
          (into[0] != block_byte((rank - 1 + np) % np, rank) ||
           into[bytes - 1] != block_byte((rank - 1 + np) % np, rank)))
        fail("sendrecv: wrong data");
      if (it > 0 && op == OP_ALLGATHER && bytes > 0)
        for (int k = 0; k < np; k++)
          if (into[(long)k * bytes] != block_byte(k, k) ||
              into[(long)(k + 1) * bytes - 1] != block_byte(k, k))
            fail("allgather: wrong block");
      MPI_Gather(&ns, 1, MPI_DOUBLE, all, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
      if (rank == 0 && r >= 0) {
        double mx = all[0], mn = all[0], s = 0;
        for (int k = 0; k < np; k++) {
          if (all[k] > mx) mx = all[k];
          if (all[k] < mn) mn = all[k];
          s += all[k];
        }
        maxs[r] = mx;
        mins[r] = mn;
        avgs[r] = s / np;
      }
    }
    if (rank == 0) {
      printf("COLL {\"op\":\"%s\",\"bytes\":%ld,\"np\":%d,\"iters\":%ld", OP_NAMES[op], bytes, np, iters);
      const char *keys[] = {"maxNs", "avgNs", "minNs"};
      double *vals[] = {maxs, avgs, mins};
      for (int k = 0; k < 3; k++) {
        printf(",\"%s\":[", keys[k]);
        for (int r = 1; r <= reps; r++) printf("%s%.1f", r > 1 ? "," : "", vals[k][r]);
        printf("]");
      }
      printf("}\n");
      fflush(stdout);
    }
    free(buf);
    free(send);
    free(into);
    free(fdata);
    free(finto);
  }
  free(maxs);
  free(avgs);
  free(mins);
  free(all);
  MPI_Finalize();
  return 0;
}
