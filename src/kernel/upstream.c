/* An HTTP CONNECT through the host's proxy, without blocking
 * (kernel/upstream.h). */
#include "kernel/upstream.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "util/mem.h"

/* Only printable ASCII without spaces may go into the request line: a
 * name or an address the caller checked, never a CR or LF of anyone's. */
static bool token_ok(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if ((unsigned char)*s <= 0x20 || (unsigned char)*s >= 0x7f)
			return false;
	return true;
}

int upstream_start(struct upstream_conn *u, const struct upstream_proxy *p, const char *host, uint16_t port)
{
	int fd;

	memset(u, 0, sizeof(*u));
	u->fd = -1;
	if (host && (!token_ok(host) || (p->auth && strpbrk(p->auth, "\r\n"))))
		return -EINVAL;
	fd = socket(p->addr.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (const struct sockaddr *)&p->addr, p->addr_len) < 0 && errno != EINPROGRESS) {
		int e = errno;
		close(fd);
		return -e;
	}
	u->fd = fd;
	u->phase = UPSTREAM_CONNECTING;
	if (host) {
		/* An IPv6 address is bracketed in an authority. */
		bool v6 = strchr(host, ':') != NULL;
		u->req = moat_xasprintf("CONNECT %s%s%s:%u HTTP/1.1\r\nHost: %s%s%s:%u\r\n%s%s%s\r\n", v6 ? "[" : "",
					host, v6 ? "]" : "", port, v6 ? "[" : "", host, v6 ? "]" : "", port,
					p->auth ? "Proxy-Authorization: " : "", p->auth ? p->auth : "",
					p->auth ? "\r\n" : "");
		u->req_len = strlen(u->req);
	}
	return 0;
}

short upstream_events(const struct upstream_conn *u)
{
	return u->phase == UPSTREAM_READING ? POLLIN : POLLOUT;
}

int upstream_parse_reply(const unsigned char *b, size_t n, int *status)
{
	size_t i, end = 0;

	/* "HTTP/1.x NNN" and then a space or the line's end. */
	static const char pre[] = "HTTP/1.";
	for (i = 0; i < n && i < sizeof(pre) - 1; i++)
		if (b[i] != (unsigned char)pre[i])
			return -1;
	if (n > 7 && (b[7] < '0' || b[7] > '9'))
		return -1;
	if (n > 8 && b[8] != ' ')
		return -1;
	for (i = 9; i < n && i < 12; i++)
		if (b[i] < '0' || b[i] > '9')
			return -1;
	if (n > 12 && b[12] != ' ' && b[12] != '\r' && b[12] != '\n')
		return -1;
	/* The head ends with an empty line (CRLF CRLF, or bare LFs). */
	for (i = 12; i < n && !end; i++) {
		if (b[i] != '\n')
			continue;
		if (i + 1 < n && b[i + 1] == '\n')
			end = i + 2;
		else if (i + 2 < n && b[i + 1] == '\r' && b[i + 2] == '\n')
			end = i + 3;
	}
	if (!end)
		return n >= UPSTREAM_REPLY_MAX ? -1 : 0;
	if (end > UPSTREAM_REPLY_MAX)
		return -1;
	*status = (b[9] - '0') * 100 + (b[10] - '0') * 10 + (b[11] - '0');
	return (int)end;
}

/* Read the reply: peek at what is there, and consume only what belongs to
 * the head -- every byte read before the head is complete is a head byte,
 * so the partial head is kept here and the socket holds the rest. */
static int read_reply(struct upstream_conn *u)
{
	size_t room = UPSTREAM_REPLY_MAX - u->reply_len;
	ssize_t m;
	int rc, status = 0;

	if (!u->reply)
		u->reply = moat_xmalloc(UPSTREAM_REPLY_MAX);
	m = recv(u->fd, u->reply + u->reply_len, room, MSG_PEEK | MSG_DONTWAIT);
	if (m < 0)
		return errno == EAGAIN || errno == EINTR ? 0 : -errno;
	if (m == 0)
		return -ECONNRESET; /* the proxy closed before it answered */
	rc = upstream_parse_reply(u->reply, u->reply_len + (size_t)m, &status);
	if (rc < 0)
		return -EPROTO;
	size_t take = rc > 0 ? (size_t)rc - u->reply_len : (size_t)m;
	if (recv(u->fd, u->reply + u->reply_len, take, MSG_DONTWAIT) != (ssize_t)take)
		return -EIO;
	u->reply_len += take;
	if (rc == 0)
		return 0;
	u->status = status;
	if (status < 200 || status > 299)
		return -ECONNREFUSED;
	u->phase = UPSTREAM_DONE;
	return 1;
}

int upstream_step(struct upstream_conn *u)
{
	if (u->fd < 0)
		return -EBADF;
	if (u->phase == UPSTREAM_CONNECTING) {
		struct pollfd pf = {.fd = u->fd, .events = POLLOUT};
		int e = 0;
		socklen_t l = sizeof(e);

		if (poll(&pf, 1, 0) <= 0)
			return 0;
		if (getsockopt(u->fd, SOL_SOCKET, SO_ERROR, &e, &l) < 0)
			return -errno;
		if (e)
			return -e;
		u->phase = u->req ? UPSTREAM_SENDING : UPSTREAM_DONE;
	}
	if (u->phase == UPSTREAM_SENDING) {
		ssize_t n = send(u->fd, u->req + u->sent, u->req_len - u->sent, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0)
			return errno == EAGAIN || errno == EINTR ? 0 : -errno;
		u->sent += (size_t)n;
		if (u->sent < u->req_len)
			return 0;
		u->phase = UPSTREAM_READING;
		return 0; /* the reply comes later: poll for it */
	}
	if (u->phase == UPSTREAM_READING)
		return read_reply(u);
	return 1;
}

int upstream_take_fd(struct upstream_conn *u)
{
	int fd = u->fd;

	u->fd = -1;
	upstream_close(u);
	return fd;
}

void upstream_close(struct upstream_conn *u)
{
	if (u->fd >= 0)
		close(u->fd);
	u->fd = -1;
	/* The request holds moat's proxy credentials. */
	if (u->req)
		explicit_bzero(u->req, u->req_len);
	free(u->req);
	free(u->reply);
	u->req = NULL;
	u->reply = NULL;
}
