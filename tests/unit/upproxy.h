/* A small upstream proxy for the unit tests (test_netproxy, test_netfence):
 * the host's own proxy as moat would find it in HTTPS_PROXY, in threads of
 * the test's host side.  It wants the credentials "user:pass" (else 407),
 * takes one request per connection, and
 *   - CONNECT host:port: up_map(host, &port) names the address to connect
 *     to (0: refused, 403); then 200 and the bytes relayed both ways;
 *   - GET http://... (absolute form): 200 with the head it received as the
 *     body, so a client sees what reached the proxy.
 * up_requests counts the requests; up_last_target is the last CONNECT's
 * target.  Listen on up_fd, spawn(up_loop, NULL); stop_all ends it. */
#ifndef MOAT_TESTS_UPPROXY_H
#define MOAT_TESTS_UPPROXY_H

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define UPPROXY_AUTH "Basic dXNlcjpwYXNz" /* user:pass */

static int up_fd = -1;
static atomic_int up_requests;
static atomic_int stop_all;
static char up_last_target[300];
static uint32_t (*up_map)(const char *host, uint16_t *port);

static void spawn(void *(*fn)(void *), void *arg)
{
	pthread_t t;
	pthread_attr_t a;

	pthread_attr_init(&a);
	pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
	if (pthread_create(&t, &a, fn, arg) != 0)
		abort();
	pthread_attr_destroy(&a);
}

/* An HTTP head, a byte at a time (nothing after it is taken), at most
 * cap - 1 bytes or 3 s; NUL-terminated; its length. */
static size_t read_head(int fd, char *head, size_t cap)
{
	size_t n = 0;
	struct pollfd p = {.fd = fd, .events = POLLIN};

	while (n < cap - 1 && poll(&p, 1, 3000) == 1) {
		ssize_t k = recv(fd, head + n, 1, 0);
		if (k <= 0)
			break;
		n++;
		if (n >= 4 && memcmp(head + n - 4, "\r\n\r\n", 4) == 0)
			break;
	}
	head[n] = '\0';
	return n;
}

/* Both ways until both ends are done; an end that finishes sending is
 * passed on as a half-close, as a proxy's tunnel does. */
static void relay_pair(int a, int b)
{
	char buf[16384];
	struct pollfd p[2] = {{.fd = a, .events = POLLIN}, {.fd = b, .events = POLLIN}};
	int fds[2] = {a, b};

	while (!stop_all && (p[0].fd >= 0 || p[1].fd >= 0) && poll(p, 2, 200) >= 0) {
		for (int i = 0; i < 2; i++) {
			if (p[i].fd < 0 || !p[i].revents)
				continue;
			ssize_t n = recv(p[i].fd, buf, sizeof(buf), 0);
			if (n < 0)
				return;
			if (n == 0) {
				shutdown(fds[1 - i], SHUT_WR);
				p[i].fd = -1;
				continue;
			}
			if (send(fds[1 - i], buf, (size_t)n, MSG_NOSIGNAL) != n)
				return;
		}
	}
}

static void up_tunnel(int fd, const char *target)
{
	char host[300];
	const char *colon = strrchr(target, ':');
	uint16_t port = colon ? (uint16_t)atoi(colon + 1) : 0;
	uint32_t addr;
	struct sockaddr_in a = {.sin_family = AF_INET};
	int u;

	snprintf(host, sizeof(host), "%.*s", colon ? (int)(colon - target) : 0, target);
	snprintf(up_last_target, sizeof(up_last_target), "%s", target);
	addr = up_map ? up_map(host, &port) : 0;
	if (!addr) {
		(void)!send(fd, "HTTP/1.1 403 No\r\n\r\n", 19, MSG_NOSIGNAL);
		return;
	}
	a.sin_port = htons(port);
	a.sin_addr.s_addr = htonl(addr);
	u = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (u >= 0 && connect(u, (struct sockaddr *)&a, sizeof(a)) == 0 &&
	    send(fd, "HTTP/1.1 200 OK\r\n\r\n", 19, MSG_NOSIGNAL) == 19)
		relay_pair(fd, u);
	if (u >= 0)
		close(u);
}

static void *up_conn(void *arg)
{
	int fd = (int)(intptr_t)arg;
	char head[4096], target[300];
	size_t n = read_head(fd, head, sizeof(head));

	atomic_fetch_add(&up_requests, 1);
	if (!strstr(head, "\r\nProxy-Authorization: " UPPROXY_AUTH "\r\n")) {
		(void)!send(fd, "HTTP/1.1 407 Who\r\n\r\n", 20, MSG_NOSIGNAL);
	} else if (sscanf(head, "CONNECT %299s HTTP/1.1\r\n", target) == 1) {
		up_tunnel(fd, target);
	} else if (strncmp(head, "GET http://", 11) == 0) {
		char r[4200];
		int l = snprintf(r, sizeof(r), "HTTP/1.1 200 OK\r\nContent-Length: %zu\r\n\r\n%s", n, head);
		(void)!send(fd, r, (size_t)l, MSG_NOSIGNAL);
	} else {
		(void)!send(fd, "HTTP/1.1 400 No\r\n\r\n", 19, MSG_NOSIGNAL);
	}
	close(fd);
	return NULL;
}

static void *up_loop(void *arg)
{
	struct pollfd p = {.fd = up_fd, .events = POLLIN};

	(void)arg;
	while (!stop_all) {
		if (poll(&p, 1, 200) != 1)
			continue;
		int c = accept4(up_fd, NULL, NULL, SOCK_CLOEXEC);
		if (c >= 0)
			spawn(up_conn, (void *)(intptr_t)c);
	}
	return NULL;
}

#endif
