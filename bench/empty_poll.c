/* A verbs program that polls an empty CQ N times (argv[1]): run under
   rdmasim (`programs:`), the wall time it adds over N = 0 is the attach
   channel's cost of a call (docs/performance.md, "Real programs").
   cc bench/empty_poll.c -o empty_poll -libverbs */
#include <infiniband/verbs.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  const long n = argc > 1 ? atol(argv[1]) : 0;
  int num = 0;
  struct ibv_device **list = ibv_get_device_list(&num);
  if (num < 1) return 1;
  struct ibv_context *ctx = ibv_open_device(list[0]);
  struct ibv_cq *cq = ctx ? ibv_create_cq(ctx, 16, NULL, NULL, 0) : NULL;
  if (!cq) return 1;
  struct ibv_wc wc;
  long found = 0;
  for (long i = 0; i < n; ++i) found += ibv_poll_cq(cq, 1, &wc);
  printf("%ld polls, %ld completions\n", n, found);
  return 0;
}
