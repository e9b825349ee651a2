/* An HTTP, SOCKS5 or SOCKS4 CONNECT through the host's proxy, without
 * blocking (kernel/upstream.h). */
#include "kernel/upstream.h"

#include <arpa/inet.h>
#include <ctype.h>
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

/* SOCKS5's messages (RFC 1928): the greeting (no authentication, and
 * user name and password when there are credentials), then RFC 1929's
 * request, then CONNECT to the address as such or to the name. */
static int socks_messages(struct upstream_conn *u, const struct upstream_proxy *p, const char *host, uint16_t port)
{
	unsigned char a[16];
	size_t hl = strlen(host), n = 0;
	int family = inet_pton(AF_INET, host, a) == 1 ? AF_INET : inet_pton(AF_INET6, host, a) == 1 ? AF_INET6 : 0;
	char *m;

	if (!family && hl > 255)
		return -ENAMETOOLONG;
	u->socks = true;
	u->req = moat_xmalloc(4);
	u->req[0] = 5;
	u->req[1] = p->auth ? 2 : 1;
	u->req[2] = 0;
	u->req[3] = 2;
	u->req_len = p->auth ? 4 : 3;
	if (p->auth) {
		u->socks_auth = moat_xmalloc(p->auth_len);
		memcpy(u->socks_auth, p->auth, p->auth_len);
		u->socks_auth_len = p->auth_len;
	}
	m = u->socks_connect = moat_xmalloc(4 + 1 + 255 + 2);
	m[n++] = 5, m[n++] = 1, m[n++] = 0;
	if (family == AF_INET) {
		m[n++] = 1;
		memcpy(m + n, a, 4), n += 4;
	} else if (family == AF_INET6) {
		m[n++] = 4;
		memcpy(m + n, a, 16), n += 16;
	} else {
		m[n++] = 3, m[n++] = (char)hl;
		memcpy(m + n, host, hl), n += hl;
	}
	m[n++] = (char)(port >> 8), m[n++] = (char)(port & 0xff);
	u->socks_connect_len = n;
	u->socks_step = UPSTREAM_SOCKS_METHOD;
	return 0;
}

/* SOCKS4's one request: VN 4, CD 1 (CONNECT), the port, the IPv4
 * address, the user id and a NUL; SOCKS4a puts 0.0.0.1 for the address
 * and the name, NUL-terminated, after the user id.  A user id or a name
 * with a NUL in it cannot be sent (the proxy would read less). */
static int socks4_request(struct upstream_conn *u, const struct upstream_proxy *p, const char *host, uint16_t port)
{
	unsigned char a[16];
	size_t hl = strlen(host), ul = p->auth ? p->auth_len : 0, n = 0;
	bool v4 = inet_pton(AF_INET, host, a) == 1;
	char *m;

	if (!v4 && inet_pton(AF_INET6, host, a) == 1)
		return -ENETUNREACH; /* SOCKS4 has no IPv6 */
	if (!v4 && !p->socks4a)
		return -EHOSTUNREACH; /* a name needs SOCKS4a */
	if ((!v4 && hl > 255) || ul > 255 || (ul && memchr(p->auth, 0, ul)))
		return -EINVAL;
	m = u->req = moat_xmalloc(8 + ul + 1 + hl + 1);
	m[n++] = 4, m[n++] = 1;
	m[n++] = (char)(port >> 8), m[n++] = (char)(port & 0xff);
	if (v4) {
		memcpy(m + n, a, 4), n += 4;
	} else {
		m[n++] = 0, m[n++] = 0, m[n++] = 0, m[n++] = 1;
	}
	if (ul)
		memcpy(m + n, p->auth, ul), n += ul;
	m[n++] = 0;
	if (!v4) {
		memcpy(m + n, host, hl), n += hl;
		m[n++] = 0;
	}
	u->req_len = n;
	u->socks = u->socks4 = true;
	return 0;
}

int upstream_socks4_reply(const unsigned char b[8], int *code)
{
	/* VN is 0 (RFC-less SOCKS4's text); some servers echo 4. */
	if (b[0] != 0 && b[0] != 4)
		return -1;
	if (b[1] == 90)
		return 1;
	if (b[1] < 91 || b[1] > 93)
		return -1;
	*code = b[1];
	return 0;
}

int upstream_start(struct upstream_conn *u, const struct upstream_proxy *p, const char *host, uint16_t port)
{
	int fd;

	memset(u, 0, sizeof(*u));
	u->fd = -1;
	if (p->socks && !host)
		return -EINVAL;
	if (host && (!token_ok(host) || (!p->socks && p->auth && strpbrk(p->auth, "\r\n"))))
		return -EINVAL;
	/* The request first: a target the proxy's protocol cannot name
	 * (SOCKS4 and a name) costs the proxy no connection. */
	if (host && p->socks) {
		int rc = p->socks4 ? socks4_request(u, p, host, port) : socks_messages(u, p, host, port);
		if (rc < 0) {
			upstream_close(u);
			return rc;
		}
	} else if (host) {
		/* An IPv6 address is bracketed in an authority. */
		bool v6 = strchr(host, ':') != NULL;
		u->req = moat_xasprintf("CONNECT %s%s%s:%u HTTP/1.1\r\nHost: %s%s%s:%u\r\n%s%s%s\r\n", v6 ? "[" : "",
					host, v6 ? "]" : "", port, v6 ? "[" : "", host, v6 ? "]" : "", port,
					p->auth ? "Proxy-Authorization: " : "", p->auth ? p->auth : "",
					p->auth ? "\r\n" : "");
		u->req_len = strlen(u->req);
	}
	fd = socket(p->addr.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0 || (connect(fd, (const struct sockaddr *)&p->addr, p->addr_len) < 0 && errno != EINPROGRESS)) {
		int e = errno;
		if (fd >= 0)
			close(fd);
		upstream_close(u);
		return -e;
	}
	u->fd = fd;
	u->phase = UPSTREAM_CONNECTING;
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
	if (status == 407)
		upstream_auth_scheme(u->reply, u->reply_len, u->auth_scheme, sizeof(u->auth_scheme));
	if (status < 200 || status > 299)
		return -ECONNREFUSED;
	u->phase = UPSTREAM_DONE;
	return 1;
}

void upstream_auth_scheme(const unsigned char *b, size_t n, char *out, size_t len)
{
	static const char name[] = "proxy-authenticate:";
	size_t i = 0, o = 0;

	if (len == 0)
		return;
	out[0] = '\0';
	/* Each header line begins after a LF. */
	while (i < n) {
		const unsigned char *nl = memchr(b + i, '\n', n - i);
		size_t k;

		if (!nl)
			return;
		i = (size_t)(nl - b) + 1;
		if (n - i < sizeof(name) - 1)
			return;
		for (k = 0; k < sizeof(name) - 1; k++)
			if (tolower(b[i + k]) != name[k])
				break;
		if (k < sizeof(name) - 1)
			continue;
		i += k;
		while (i < n && (b[i] == ' ' || b[i] == '\t'))
			i++;
		while (i < n && o + 1 < len && (isalnum(b[i]) || b[i] == '-'))
			out[o++] = (char)b[i++];
		out[o] = '\0';
		return;
	}
}

int upstream_socks_reply_len(const unsigned char *b, size_t n)
{
	if (n < 5)
		return 0;
	if (b[0] != 5 || b[2] != 0)
		return -1;
	switch (b[3]) {
	case 1:
		return 4 + 4 + 2;
	case 4:
		return 4 + 16 + 2;
	case 3:
		return 4 + 1 + b[4] + 2;
	default:
		return -1;
	}
}

/* Send `m` next (the greeting's successors): it becomes u->req. */
static void socks_send_next(struct upstream_conn *u, char **m, size_t len)
{
	if (u->req)
		explicit_bzero(u->req, u->req_len);
	free(u->req);
	u->req = *m;
	u->req_len = len;
	u->sent = 0;
	*m = NULL;
	u->phase = UPSTREAM_SENDING;
}

/* The reply's first `want` bytes in u->reply, read as they come and never
 * past them: what follows the CONNECT's reply is the tunnel's.  1 there,
 * 0 not yet, -errno. */
static int socks_take(struct upstream_conn *u, size_t want)
{
	if (!u->reply)
		u->reply = moat_xmalloc(UPSTREAM_REPLY_MAX);
	while (u->reply_len < want) {
		ssize_t m = recv(u->fd, u->reply + u->reply_len, want - u->reply_len, MSG_DONTWAIT);
		if (m < 0)
			return errno == EAGAIN || errno == EINTR ? 0 : -errno;
		if (m == 0)
			return -ECONNRESET; /* the proxy closed before it answered */
		u->reply_len += (size_t)m;
	}
	return 1;
}

/* One reply of the SOCKS5 exchange, and the message it calls for; SOCKS4's
 * one reply. */
static int socks_read(struct upstream_conn *u)
{
	const unsigned char *b;
	int rc, len, code = 0;

	if (u->socks4) {
		if ((rc = socks_take(u, 8)) <= 0)
			return rc;
		rc = upstream_socks4_reply(u->reply, &code);
		if (rc < 0)
			return -EPROTO;
		if (rc == 0) {
			u->status = code;
			return -ECONNREFUSED;
		}
		u->phase = UPSTREAM_DONE;
		return 1;
	}
	switch (u->socks_step) {
	case UPSTREAM_SOCKS_METHOD:
		if ((rc = socks_take(u, 2)) <= 0)
			return rc;
		b = u->reply;
		u->reply_len = 0;
		if (b[0] != 5)
			return -EPROTO;
		if (b[1] == 2 && u->socks_auth) {
			u->socks_step = UPSTREAM_SOCKS_AUTH;
			socks_send_next(u, &u->socks_auth, u->socks_auth_len);
			return 0;
		}
		if (b[1] != 0) {
			u->status = b[1]; /* 0xff: no method it accepts (credentials wanted) */
			return -ECONNREFUSED;
		}
		break;
	case UPSTREAM_SOCKS_AUTH:
		if ((rc = socks_take(u, 2)) <= 0)
			return rc;
		u->reply_len = 0;
		if (u->reply[1] != 0) {
			u->status = 0xff;
			return -ECONNREFUSED;
		}
		break;
	case UPSTREAM_SOCKS_REPLY:
		if ((rc = socks_take(u, 5)) <= 0)
			return rc;
		len = upstream_socks_reply_len(u->reply, u->reply_len);
		if (len < 0)
			return -EPROTO;
		if ((rc = socks_take(u, (size_t)len)) <= 0)
			return rc;
		u->status = u->reply[1];
		if (u->reply[1] != 0)
			return -ECONNREFUSED;
		u->phase = UPSTREAM_DONE;
		return 1;
	}
	u->socks_step = UPSTREAM_SOCKS_REPLY;
	socks_send_next(u, &u->socks_connect, u->socks_connect_len);
	return 0;
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
		return u->socks ? socks_read(u) : read_reply(u);
	return 1;
}

void upstream_refusal_note(struct upstream_refusals *r, const struct upstream_conn *u)
{
	/* A status without a tunnel: the proxy answered, and not yes. */
	if (!u->status || u->phase == UPSTREAM_DONE)
		return;
	r->count++;
	r->status = u->status;
	r->socks = !u->socks ? 0 : u->socks4 ? 4 : 5;
	snprintf(r->auth_scheme, sizeof(r->auth_scheme), "%s", u->auth_scheme);
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
	/* The request holds moat's proxy credentials (SOCKS5: the message
	 * still to send, or being sent; SOCKS4: its user id). */
	if (u->req)
		explicit_bzero(u->req, u->req_len);
	if (u->socks_auth)
		explicit_bzero(u->socks_auth, u->socks_auth_len);
	free(u->req);
	free(u->reply);
	free(u->socks_auth);
	free(u->socks_connect);
	u->req = NULL;
	u->reply = NULL;
	u->socks_auth = u->socks_connect = NULL;
}
