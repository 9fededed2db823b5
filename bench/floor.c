/*
 * floor: the least a RESP load generator can spend per request, as a yardstick for respbench.
 *
 * Why it exists: respbench's client CPU per request is mostly the kernel's TCP path, which any
 * socket client pays once per batch. To see how much respbench adds on top of that, it is run
 * beside a client that does nothing else: CONNS connections, each with one batch of PIPELINE
 * pre-encoded SETs in flight, one send() per batch and recv() until the batch's replies are in,
 * one epoll_wait per turn, no key generation, no parsing beyond counting reply lines, no timing,
 * no statistics. The difference between the two is respbench's own work.
 *
 * Build: cc -O2 -o floor bench/floor.c
 * Run:   floor HOST PORT CONNS PIPELINE REQUESTS    (prints "requests seconds rps" on stdout)
 * Every reply must be a one-line status ("+OK\r\n"): anything else ends it with exit 1.
 * Loopback or a host given on the command line only; it stops after REQUESTS replies.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/* The same command respbench sends for `-t set -r 100000 -d 3`: a 16-byte key, a 3-byte value. */
static const char SET[] = "*3\r\n$3\r\nSET\r\n$16\r\nkey:000000004242\r\n$3\r\nxxx\r\n";

struct conn {
    int fd;
    long waiting; /* replies of the batch in flight not yet seen */
};

static void fail(const char *what) {
    perror(what);
    exit(1);
}

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

/* Sends the first `n` commands of the batch (n < pipeline only for the last one); blocking
 * until the kernel took it all is fine for a yardstick: loopback takes a batch whole. */
static void send_batch(struct conn *c, const char *batch, size_t cmd_len, long n) {
    size_t len = cmd_len * (size_t)n, off = 0;
    while (off < len) {
        ssize_t w = send(c->fd, batch + off, len - off, MSG_NOSIGNAL);
        if (w < 0) {
            if (errno == EINTR) continue;
            fail("send");
        }
        off += (size_t)w;
    }
    c->waiting = n;
}

int main(int argc, char **argv) {
    if (argc != 6) {
        fprintf(stderr, "usage: %s HOST PORT CONNS PIPELINE REQUESTS\n", argv[0]);
        return 2;
    }
    int nconns = atoi(argv[3]);
    long pipeline = atol(argv[4]), total = atol(argv[5]);
    if (nconns < 1 || pipeline < 1 || total < 1) {
        fprintf(stderr, "CONNS, PIPELINE and REQUESTS must be positive\n");
        return 2;
    }
    size_t cmd_len = sizeof(SET) - 1;
    char *batch = malloc(cmd_len * (size_t)pipeline);
    char rbuf[64 * 1024];
    struct conn *conns = calloc((size_t)nconns, sizeof *conns);
    if (!batch || !conns) fail("malloc");
    for (long i = 0; i < pipeline; i++) memcpy(batch + i * cmd_len, SET, cmd_len);

    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(argv[2]))};
    if (inet_pton(AF_INET, argv[1], &addr.sin_addr) != 1) {
        fprintf(stderr, "HOST must be an IPv4 address\n");
        return 2;
    }
    int ep = epoll_create1(0);
    if (ep < 0) fail("epoll_create1");
    for (int i = 0; i < nconns; i++) {
        int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;
        if (fd < 0) fail("socket");
        if (connect(fd, (struct sockaddr *)&addr, sizeof addr) < 0) fail("connect");
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        conns[i].fd = fd;
        struct epoll_event ev = {.events = EPOLLIN, .data.u32 = (uint32_t)i};
        if (epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) < 0) fail("epoll_ctl");
    }

    long issued = 0, done = 0;
    double t0 = now_s();
    for (int i = 0; i < nconns && issued < total; i++) {
        long n = total - issued < pipeline ? total - issued : pipeline;
        send_batch(&conns[i], batch, cmd_len, n);
        issued += n;
    }
    struct epoll_event events[256];
    while (done < total) {
        int k = epoll_wait(ep, events, 256, 10000);
        if (k < 0) {
            if (errno == EINTR) continue;
            fail("epoll_wait");
        }
        if (k == 0) {
            fprintf(stderr, "no reply for 10 s\n");
            return 1;
        }
        for (int e = 0; e < k; e++) {
            struct conn *c = &conns[events[e].data.u32];
            ssize_t r = recv(c->fd, rbuf, sizeof rbuf, 0);
            if (r < 0 && (errno == EAGAIN || errno == EINTR)) continue;
            if (r <= 0) fail("recv (or the server closed the connection)");
            /* Replies are whole "+OK\r\n" lines, so a reply is a '\n'; a '-' or other first byte
             * would be an error reply, which a yardstick must not count as work done. */
            if (rbuf[0] != '+' && rbuf[0] != 'O' && rbuf[0] != 'K' && rbuf[0] != '\r' &&
                rbuf[0] != '\n') {
                fprintf(stderr, "unexpected reply: %.40s\n", rbuf);
                return 1;
            }
            for (const char *p = rbuf; (p = memchr(p, '\n', (size_t)(rbuf + r - p))); p++) {
                c->waiting--;
                done++;
            }
            if (c->waiting == 0 && issued < total) {
                long n = total - issued < pipeline ? total - issued : pipeline;
                send_batch(c, batch, cmd_len, n);
                issued += n;
            }
        }
    }
    double secs = now_s() - t0;
    printf("%ld %.6f %.0f\n", done, secs, done / secs);
    return 0;
}
