/*
 * The Open MPI column of `ssi-bench startup`: the job of programs/startup.mjs in hello mode, in C
 * (the benchmark compiles it with mpicc and times Open MPI's mpirun of it). MPI_Init, an
 * MPI_Allreduce (SUM of the ranks, checked), then every rank prints
 *   STARTUP {"rank":r,"size":n,"sum":s,"rssKiB":k}
 * with its resident set size at the end (from /proc/self/statm), and finalizes.
 */
#include <mpi.h>
#include <stdio.h>
#include <unistd.h>

static long rss_kib(void) {
  long pages = 0, resident = 0;
  FILE *f = fopen("/proc/self/statm", "r");
  if (f == NULL) return -1;
  if (fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = -1;
  fclose(f);
  return resident < 0 ? -1 : resident * (sysconf(_SC_PAGESIZE) / 1024);
}

int main(int argc, char **argv) {
  int rank, size;
  double mine, sum;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  mine = rank;
  MPI_Allreduce(&mine, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  if (sum != (double)size * (size - 1) / 2) {
    fprintf(stderr, "rank %d: allreduce gave %g\n", rank, sum);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  printf("STARTUP {\"rank\":%d,\"size\":%d,\"sum\":%.0f,\"rssKiB\":%ld}\n", rank, size, sum, rss_kib());
  fflush(stdout);
  MPI_Finalize();
  return 0;
}
