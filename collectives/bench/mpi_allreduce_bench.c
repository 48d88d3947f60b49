/* MPI_Allreduce (sum of float32) benchmark with the same columns and method as
 * `troupe bench allreduce`: per size, warm-up, then each iteration timed between barriers, the
 * median per rank, the max of the medians across ranks; busbw = algbw * 2(n-1)/n; #wrong counts
 * elements that differ from the exact sum of the same pattern. Not part of the CMake build:
 * collectives/bench/compare_mpi.sh builds it with mpicc.
 *
 * usage: mpirun -np N ./mpi_allreduce_bench MIN_BYTES MAX_BYTES STEP_FACTOR ITERS WARMUP */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static float pattern(int rank, size_t i) { return (float)((int)((i * 7 + (size_t)rank * 13) % 31) - 15); }

static int compare(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return x < y ? -1 : x > y;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  long long min_bytes = argc > 1 ? atoll(argv[1]) : 4096;
  long long max_bytes = argc > 2 ? atoll(argv[2]) : 64ll << 20;
  double factor = argc > 3 ? atof(argv[3]) : 2.0;
  int iters = argc > 4 ? atoi(argv[4]) : 20;
  int warmup = argc > 5 ? atoi(argv[5]) : 5;
  if (rank == 0) {
    printf("# MPI_Allreduce: ranks %d, iters %d, warmup %d\n", size, iters, warmup);
    printf("#%14s %12s %8s %12s %12s %12s %8s\n", "size", "count", "type", "time(us)",
           "algbw(GB/s)", "busbw(GB/s)", "#wrong");
  }
  double* times = malloc(sizeof(double) * (size_t)iters);
  for (double b = (double)min_bytes; b <= (double)max_bytes * 1.0000001; b *= factor) {
    size_t count = (size_t)((long long)b / 4);
    float* source = malloc(count * sizeof(float) + 4);
    float* data = malloc(count * sizeof(float) + 4);
    for (size_t i = 0; i < count; ++i) source[i] = pattern(rank, i);
    for (int it = -warmup; it < iters; ++it) {
      memcpy(data, source, count * sizeof(float));
      MPI_Barrier(MPI_COMM_WORLD);
      double t0 = MPI_Wtime();
      MPI_Allreduce(MPI_IN_PLACE, data, (int)count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
      double t = MPI_Wtime() - t0;
      if (it >= 0) times[it] = t;
    }
    long long wrong = 0;
    for (size_t i = 0; i < count; ++i) {
      float expected = 0;
      for (int r = 0; r < size; ++r) expected += pattern(r, i);
      wrong += data[i] != expected;
    }
    qsort(times, (size_t)iters, sizeof(double), compare);
    double median = iters % 2 ? times[iters / 2] : 0.5 * (times[iters / 2 - 1] + times[iters / 2]);
    double worst = 0;
    long long total_wrong = 0;
    MPI_Reduce(&median, &worst, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Reduce(&wrong, &total_wrong, 1, MPI_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) {
      double algbw = (double)(count * 4) / worst / 1e9;
      printf(" %14lld %12lld %8s %12.1f %12.3f %12.3f %8lld\n", (long long)count * 4,
             (long long)count, "float", worst * 1e6, algbw, algbw * 2.0 * (size - 1) / size,
             total_wrong);
      fflush(stdout);
    }
    free(source);
    free(data);
    if (factor <= 1.0) break;
  }
  free(times);
  MPI_Finalize();
  return 0;
}
