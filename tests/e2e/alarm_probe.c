// The interval timer on the simulated clock (tests/e2e/test_programs.py).
//
// alarm_probe: alarm() cuts a sleep short, a periodic setitimer interrupts nanosleep with EINTR and the
// rest, getitimer and alarm(0) read what is left, an ignored SIGALRM leaves a sleep alone, and the
// default one ends a program spinning on the clock.
//
// Against waits on an out-of-band socket, as Linux treats them (signal(7)): an alarm whose handler lacks
// SA_RESTART cuts accept, recv and connect short with EINTR; with SA_RESTART they go on (the handler
// runs, the call returns when it is done), unless the socket has a timeout; SO_RCVTIMEO ends a recv
// with EAGAIN; an ignored SIGALRM leaves a wait alone.
// alarm_probe server PORT: prints what each call gave and when (simulated seconds).
// alarm_probe client HOST PORT NOWHERE: connects to NOWHERE (no answer) with an alarm, then to the
// server at 3 s, sends at 5 s and 7 s, closes at 8 s.
#include <arpa/inet.h>
#include <errno.h>
#include <infiniband/verbs.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
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
static double start;
static double since(void) { return now() - start; }

static void handler(int flags) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on;
  sa.sa_flags = flags;
  sigaction(SIGALRM, &sa, 0);
}

static void until(double t) {
  for (double d; (d = t - since()) > 0;) {  // an alarm may cut a sleep short
    struct timespec q = {(time_t)d, (long)((d - (time_t)d) * 1e9)};
    nanosleep(&q, 0);
  }
}

static void report(const char *what, long r) {
  printf("%s %ld %s at %.2f n=%d\n", what, r, r < 0 ? strerror(errno) : "", since(), n);
}

static struct sockaddr_in address(const char *host, int port) {
  struct sockaddr_in a;
  memset(&a, 0, sizeof a);
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  inet_pton(AF_INET, host, &a.sin_addr);
  return a;
}

static void rcvtimeo(int fd, long usec) {
  struct timeval tv = {usec / 1000000, usec % 1000000};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
}

static void server(int port) {
  int l = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in a = address("0.0.0.0", port);
  bind(l, (struct sockaddr *)&a, sizeof a);
  listen(l, 1);
  handler(0);
  alarm(1);
  report("accept", accept(l, 0, 0));  // EINTR at 1 s
  handler(SA_RESTART);
  alarm(1);
  int c = accept(l, 0, 0);  // restarted after the handler at 2 s: the client comes at 3 s
  report("accept restarted", c < 0 ? c : 0);
  char buf[16];
  rcvtimeo(c, 1500000);
  alarm(1);
  report("recv with a timeout, SA_RESTART", recv(c, buf, sizeof buf, 0));  // EINTR at 4 s: never restarted
  rcvtimeo(c, 500000);
  report("recv timed out", recv(c, buf, sizeof buf, 0));  // EAGAIN at 4.5 s
  rcvtimeo(c, 0);
  report("recv", recv(c, buf, sizeof buf, 0));  // the client's 5 bytes at 5 s
  handler(0);
  alarm(1);
  report("recv", recv(c, buf, sizeof buf, 0));  // EINTR at 6 s
  handler(SA_RESTART);
  alarm(1);
  report("recv restarted", read(c, buf, sizeof buf));  // the handler at 7 s, then the bytes at 7 s
  signal(SIGALRM, SIG_IGN);
  alarm(1);
  report("recv ignoring SIGALRM", recv(c, buf, sizeof buf, 0));  // the client's close at 8 s: 0
  close(c);
  close(l);
}

static void client(const char *host, int port, const char *nowhere) {
  int s = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in a = address(nowhere, port);
  handler(0);
  ualarm(2000, 0);
  report("connect nowhere", connect(s, (struct sockaddr *)&a, sizeof a));  // EINTR at 2 ms, SYNs unanswered
  close(s);
  until(3);
  s = socket(AF_INET, SOCK_STREAM, 0);
  a = address(host, port);
  report("connect", connect(s, (struct sockaddr *)&a, sizeof a));
  until(5);
  report("send", send(s, "hello", 5, 0));
  until(7);
  report("send", send(s, "again", 5, 0));
  until(8);
  close(s);
}

static void timers(void) {
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

int main(int argc, char **argv) {
  setvbuf(stdout, 0, _IONBF, 0);
  int k;
  ibv_free_device_list(ibv_get_device_list(&k));
  start = now();
  if (argc == 1)
    timers();
  else if (argc == 3 && strcmp(argv[1], "server") == 0)
    server(atoi(argv[2]));
  else if (argc == 5 && strcmp(argv[1], "client") == 0)
    client(argv[2], atoi(argv[3]), argv[4]);
  else
    return 2;
  return 0;
}
