/* Affiliated asynchronous events of a program's own objects. Mode "err":
 * makes an RC QP without an SRQ and one on an SRQ, moves both to INIT and
 * then to ERR, and prints the one event that comes (the QP on the SRQ
 * raises Last WQE Reached; the other raises nothing) and whether it names
 * that QP. Mode "watch": makes a QP on an SRQ, leaves it in INIT and
 * prints what comes in 2 ms (simulated), "none" if nothing does: another
 * program's QP events are not its own. */
#include <errno.h>
#include <infiniband/verbs.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>

static void on_alarm(int sig) { (void)sig; }

static struct ibv_qp* make_qp(struct ibv_pd* pd, struct ibv_cq* cq, struct ibv_srq* srq) {
  struct ibv_qp_init_attr init = {.send_cq = cq, .recv_cq = cq, .srq = srq, .qp_type = IBV_QPT_RC,
                                  .cap = {.max_send_wr = 4, .max_recv_wr = srq ? 0 : 4, .max_send_sge = 1,
                                          .max_recv_sge = 1}};
  struct ibv_qp* qp = ibv_create_qp(pd, &init);
  if (!qp) return NULL;
  struct ibv_qp_attr a = {.qp_state = IBV_QPS_INIT, .pkey_index = 0, .port_num = 1,
                          .qp_access_flags = IBV_ACCESS_REMOTE_WRITE};
  if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS)) return NULL;
  return qp;
}

static int to_error(struct ibv_qp* qp) {
  struct ibv_qp_attr a = {.qp_state = IBV_QPS_ERR};
  return ibv_modify_qp(qp, &a, IBV_QP_STATE);
}

int main(int argc, char** argv) {
  const int watch = argc > 1 && strcmp(argv[1], "watch") == 0;
  int n = 0;
  struct ibv_device** list = ibv_get_device_list(&n);
  if (!list || n < 1) return 2;
  struct ibv_context* ctx = ibv_open_device(list[0]);
  struct ibv_pd* pd = ctx ? ibv_alloc_pd(ctx) : NULL;
  struct ibv_cq* cq = pd ? ibv_create_cq(ctx, 16, NULL, NULL, 0) : NULL;
  struct ibv_srq_init_attr si = {.attr = {.max_wr = 16, .max_sge = 1}};
  struct ibv_srq* srq = cq ? ibv_create_srq(pd, &si) : NULL;
  struct ibv_qp* plain = srq && !watch ? make_qp(pd, cq, NULL) : NULL;
  struct ibv_qp* on_srq = srq ? make_qp(pd, cq, srq) : NULL;
  if (!on_srq || (!watch && !plain)) return 3;
  if (watch) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm; /* no SA_RESTART: the wait ends with EINTR */
    sigaction(SIGALRM, &sa, NULL);
    struct itimerval t = {.it_value = {.tv_sec = 0, .tv_usec = 2000}};
    setitimer(ITIMER_REAL, &t, NULL);
  } else if (to_error(plain) || to_error(on_srq)) {
    return 4;
  }
  struct ibv_async_event e;
  if (ibv_get_async_event(ctx, &e)) {
    if (watch && errno == EINTR) {
      printf("none\n");
      return 0;
    }
    perror("ibv_get_async_event");
    return 1;
  }
  printf("%s qp %s\n", ibv_event_type_str(e.event_type),
         e.element.qp == on_srq ? "on the SRQ" : e.element.qp == plain ? "without an SRQ" : "unknown");
  ibv_ack_async_event(&e);
  ibv_destroy_qp(on_srq);
  if (plain) ibv_destroy_qp(plain);
  ibv_destroy_srq(srq);
  ibv_destroy_cq(cq);
  ibv_dealloc_pd(pd);
  ibv_close_device(ctx);
  ibv_free_device_list(list);
  return 0;
}
