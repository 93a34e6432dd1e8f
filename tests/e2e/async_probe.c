/* Waits for two asynchronous events on the first device (ibv_get_async_event
 * blocks: a read of the context's async fd) and prints each with the port's
 * state right after it, and when it came (simulated seconds). */
#include <infiniband/verbs.h>
#include <stdio.h>
#include <time.h>

int main(void) {
  int n = 0;
  struct ibv_device** list = ibv_get_device_list(&n);
  if (!list || n < 1) return 2;
  struct ibv_context* ctx = ibv_open_device(list[0]);
  if (!ctx) return 3;
  for (int i = 0; i < 2; ++i) {
    struct ibv_async_event e;
    if (ibv_get_async_event(ctx, &e)) {
      perror("ibv_get_async_event");
      return 1;
    }
    struct ibv_port_attr a;
    if (ibv_query_port(ctx, 1, &a)) return 4;
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    printf("%s port %d state %s at %.3f ms\n", ibv_event_type_str(e.event_type), e.element.port_num,
           ibv_port_state_str(a.state), (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6);
    fflush(stdout);
    ibv_ack_async_event(&e);
  }
  ibv_close_device(ctx);
  ibv_free_device_list(list);
  return 0;
}
