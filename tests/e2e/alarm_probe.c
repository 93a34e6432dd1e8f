// The interval timer on the simulated clock (tests/e2e/test_programs.py): alarm() cuts a sleep short,
// a periodic setitimer interrupts nanosleep with EINTR and the rest, getitimer and alarm(0) read what is
// left, an ignored SIGALRM leaves a sleep alone, and the default one ends a program spinning on the clock.
#include <errno.h>
#include <infiniband/verbs.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>
static volatile int n;
static void on(int s) {
  (void)s;
  n++;
}
static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec / 1e9;
}
int main(void) {
  setvbuf(stdout, 0, _IONBF, 0);
  int k;
  struct ibv_device **l = ibv_get_device_list(&k);
  (void)l;
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on;
  sigaction(SIGALRM, &sa, 0);
  double t0 = now();
  alarm(2);
  int r = sleep(5);
  printf("sleep left %d after %.6f fired %d\n", r, now() - t0, n);
  struct itimerval v = {{0, 100000}, {0, 250000}};
  setitimer(ITIMER_REAL, &v, 0);
  t0 = now();
  while (n < 5) {
    struct timespec q = {1, 0}, rem;
    int e = nanosleep(&q, &rem);
    printf("nanosleep %d %s rem %ld.%09ld at %.6f n=%d\n", e, e ? strerror(errno) : "", (long)rem.tv_sec,
           rem.tv_nsec, now() - t0, n);
  }
  struct itimerval g;
  getitimer(ITIMER_REAL, &g);
  printf("left %ld.%06ld every %ld.%06ld\n", (long)g.it_value.tv_sec, (long)g.it_value.tv_usec,
         (long)g.it_interval.tv_sec, (long)g.it_interval.tv_usec);
  printf("alarm(0) -> %u\n", alarm(0));
  signal(SIGALRM, SIG_IGN);
  ualarm(1000, 0);
  t0 = now();
  usleep(5000);
  printf("ignored: slept %.6f\n", now() - t0);
  signal(SIGALRM, SIG_DFL);
  alarm(1);
  while (1) now();
}
