/*
 * Minimal C client for sockbench's protocol: the floor that sockbench's own timed
 * loops are compared against by bench/harness-overhead.sh.
 *
 *   ref connect  ADDR MS        connect, read the 12-byte greeting, close, for MS ms
 *   ref pingpong ADDR SIZE MS   SIZE-byte round trips on one connection for MS ms
 *
 * ADDR is unix:/path or tcp:IPV4:PORT. Prints one line: "conn_per_s N ops M" or
 * "p50_ns N ops M warm W" (M: round trips in the timed loop, W: in the warm-up).
 * Does the same work per operation as sockbench (TCP_NODELAY on TCP sockets, one
 * clock read per operation into a pre-sized buffer), and nothing more.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

static struct sockaddr_storage addr;
static socklen_t addr_len;
static int family;

static void die(const char *what) { perror(what); exit(1); }

static void parse(const char *text) {
    memset(&addr, 0, sizeof addr);
    if (strncmp(text, "unix:", 5) == 0) {
        struct sockaddr_un *un = (struct sockaddr_un *)&addr;
        un->sun_family = AF_UNIX;
        strncpy(un->sun_path, text + 5, sizeof un->sun_path - 1);
        addr_len = sizeof *un;
        family = AF_UNIX;
    } else if (strncmp(text, "tcp:", 4) == 0) {
        struct sockaddr_in *in = (struct sockaddr_in *)&addr;
        char host[64];
        const char *colon = strrchr(text + 4, ':');
        if (!colon || colon - (text + 4) >= (long)sizeof host) die("address");
        memcpy(host, text + 4, colon - (text + 4));
        host[colon - (text + 4)] = 0;
        in->sin_family = AF_INET;
        in->sin_port = htons(atoi(colon + 1));
        if (inet_pton(AF_INET, host, &in->sin_addr) != 1) die("address");
        addr_len = sizeof *in;
        family = AF_INET;
    } else {
        fprintf(stderr, "address must be unix:/path or tcp:IP:PORT\n");
        exit(2);
    }
}

static inline uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + ts.tv_nsec;
}

static void read_all(int fd, char *buf, size_t n) {
    while (n > 0) {
        ssize_t r = recv(fd, buf, n, 0);
        if (r <= 0) die("read");
        buf += r;
        n -= r;
    }
}

static void write_all(int fd, const char *buf, size_t n) {
    while (n > 0) {
        ssize_t w = write(fd, buf, n);
        if (w <= 0) die("write");
        buf += w;
        n -= w;
    }
}

static int open_conn(void) {
    int fd = socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) die("socket");
    if (connect(fd, (struct sockaddr *)&addr, addr_len) != 0) die("connect");
    if (family == AF_INET) {
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    }
    return fd;
}

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static void run_connect(uint64_t ms) {
    char greeting[12];
    for (int i = 0; i < 50; i++) {
        int fd = open_conn();
        read_all(fd, greeting, sizeof greeting);
        close(fd);
    }
    uint64_t start = now_ns(), deadline = start + ms * 1000000u, prev = start, count = 0;
    for (;;) {
        int fd = open_conn();
        read_all(fd, greeting, sizeof greeting);
        close(fd);
        prev = now_ns();
        count++;
        if (prev >= deadline) break;
    }
    printf("conn_per_s %.1f ops %llu\n", count * 1e9 / (double)(prev - start),
           (unsigned long long)count);
}

static void run_pingpong(size_t size, uint64_t ms) {
    char greeting[12];
    unsigned char header[16] = {'P'};
    uint32_t le = (uint32_t)size;
    memcpy(header + 4, &le, 4);
    int fd = open_conn();
    read_all(fd, greeting, sizeof greeting);
    write_all(fd, (char *)header, sizeof header);
    char *buf = calloc(1, size);
    uint64_t warm_end = now_ns() + 50000000u;
    int warm = 0;
    while (warm < 1000 && now_ns() < warm_end) {
        write_all(fd, buf, size);
        read_all(fd, buf, size);
        warm++;
    }
    size_t cap = ms * 500 + 1000, n = 0;
    uint64_t *samples = malloc(cap * sizeof *samples);
    if (!samples) die("malloc");
    memset(samples, 0, cap * sizeof *samples); /* fault pages in before timing */
    uint64_t start = now_ns(), deadline = start + ms * 1000000u, prev = start;
    while (n < cap) {
        write_all(fd, buf, size);
        read_all(fd, buf, size);
        uint64_t t = now_ns();
        samples[n++] = t - prev;
        prev = t;
        if (t >= deadline) break;
    }
    qsort(samples, n, sizeof *samples, cmp_u64);
    size_t rank = (size_t)((n + 1) / 2);
    printf("p50_ns %llu ops %llu warm %d\n", (unsigned long long)samples[rank > 0 ? rank - 1 : 0],
           (unsigned long long)n, warm);
    close(fd);
}

int main(int argc, char **argv) {
    if (argc == 4 && strcmp(argv[1], "connect") == 0) {
        parse(argv[2]);
        run_connect(strtoull(argv[3], 0, 10));
    } else if (argc == 5 && strcmp(argv[1], "pingpong") == 0) {
        parse(argv[2]);
        run_pingpong(strtoull(argv[3], 0, 10), strtoull(argv[4], 0, 10));
    } else {
        fprintf(stderr, "usage: ref connect ADDR MS | ref pingpong ADDR SIZE MS\n");
        return 2;
    }
    return 0;
}
