/*
 * The `Open MPI vector` column of `ssi-bench pingpong-vector`: the same column ping-pong as
 * programs/pingpong-vector-mpi.mjs (mode vector) with MPI_Type_vector(n / block, block, stride,
 * MPI_DOUBLE).
 *
 *   pingpong-vector <reps> <stride> <block> <n>:<iters>...
 *
 * Rank 0 prints PINGPONG {"size":bytes,"iters":I,"oneWayNs":[...]} per n, after a warm-up pass of
 * a quarter of the iterations; before the first size, 4000 round trips of 8 doubles.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int rank;
static double *M, *R;
static int stride, block;

static double rounds(int n, int count) {
  MPI_Datatype col;
  MPI_Type_vector(n / block, block, stride, MPI_DOUBLE, &col);
  MPI_Type_commit(&col);
  int peer = 1 - rank;
  double t0 = now_ns();
  for (int i = 0; i < count; i++) {
    if (rank == 0) {
      MPI_Send(M, 1, col, peer, 0, MPI_COMM_WORLD);
      MPI_Recv(R, 1, col, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
      MPI_Recv(R, 1, col, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Send(R, 1, col, peer, 0, MPI_COMM_WORLD);
    }
  }
  double ns = (now_ns() - t0) / count / 2;
  MPI_Type_free(&col);
  long last = (long)(n / block - 1) * stride + block - 1;
  if (rank == 0 && (R[0] != M[0] || R[last] != M[last])) {
    fprintf(stderr, "pingpong-vector: n %d: the echo does not match\n", n);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  return ns;
}

int main(int argc, char **argv) {
  int size_world;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size_world);
  if (size_world != 2 || argc < 5) {
    if (rank == 0) fprintf(stderr, "usage: pingpong-vector <reps> <stride> <block> <n>:<iters>... on 2 ranks\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  int reps = atoi(argv[1]);
  stride = atoi(argv[2]);
  block = atoi(argv[3]);
  if (block < 1 || block > stride) MPI_Abort(MPI_COMM_WORLD, 2);
  long maxN = 8 * block;
  for (int a = 4; a < argc; a++) {
    long n = atol(argv[a]);
    if (n > maxN) maxN = n;
  }
  long words = (maxN / block + 1) * stride; /* rows of the largest n, each of stride doubles */
  M = malloc(sizeof(double) * words);
  R = calloc(words, sizeof(double));
  for (long i = 0; i < words; i++) M[i] = i + 0.5;
  rounds(8 * block, 4000);
  for (int a = 4; a < argc; a++) {
    int n, iters;
    if (sscanf(argv[a], "%d:%d", &n, &iters) != 2) MPI_Abort(MPI_COMM_WORLD, 2);
    if (rank == 0) printf("PINGPONG {\"size\":%ld,\"iters\":%d,\"oneWayNs\":[", (long)n * 8, iters);
    int warm = iters / 4 > 0 ? iters / 4 : 1;
    rounds(n, warm);
    for (int r = 0; r < reps; r++) {
      double ns = rounds(n, iters);
      if (rank == 0) printf("%s%.1f", r ? "," : "", ns);
    }
    if (rank == 0) printf("]}\n");
    fflush(stdout);
  }
  free(M);
  free(R);
  MPI_Finalize();
  return 0;
}
