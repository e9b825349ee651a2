/* The fenced network (netfence.h): the filter and the child's steps, the
 * supervisor that answers connect/listen/bind notifications, and the fenced DNS.
 *
 * Raw BPF, not libseccomp.  The filter has no options: it is one fixed
 * program of 19 instructions, so it is a static const table -- nothing to
 * compile in the parent, nothing to allocate, nothing to export, and the
 * child loads it with the NEW_LISTENER flag itself (moat_seccomp_load takes
 * no flags).  libseccomp 2.5.4 would give the same program, at the price of
 * a context, a kernel probe for SCMP_ACT_NOTIFY and an export per start.
 *
 * Why the supervisor never lets the kernel re-run an INET decision.  With
 * SECCOMP_USER_NOTIF_FLAG_CONTINUE the kernel runs the connect afresh: it
 * reads the sockaddr again (another thread may have rewritten it) and
 * looks the fd number up again (another thread may have dup2()ed a
 * socket from the host namespace -- one the fence installed, unconnected
 * after a failed non-blocking connect -- onto it).  So every INET connect,
 * and every listen, is performed by the supervisor on the child's own
 * socket file, taken with pidfd_getfd and checked with SIOCGSKNS, with the
 * address it read: what it checked is what runs; so is every TCP bind on a
 * socket of the sandbox's namespace.  Only connects with a
 * non-INET address on a sandbox socket get CONTINUE: AF_UNIX paths must be
 * resolved in the child's mount view, which the supervisor does not have.
 * That is safe while every socket the child holds is in its own network
 * namespace (the namespace is the boundary: whatever address the kernel
 * re-reads reaches only the sandbox's lo).  The one gap is the fd swap
 * above, onto a host socket, between the check and the CONTINUE; it is
 * closed by Landlock (ABI >= 4) in the child handling
 * LANDLOCK_ACCESS_NET_CONNECT_TCP and _BIND_TCP with no port allowed: the
 * fence does every TCP connect and bind for the child, so the child itself
 * never needs those rights, and a CONTINUE'd call (a non-INET connect, a
 * UDP or unix bind) runs with the child's credentials.
 * tests/unit/test_netfence.c runs the whole fence under that rule. */
#include "kernel/netfence.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <netinet/tcp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "util/cleanup.h"
#include "util/helperthread.h"
#include "util/clock.h"
#include "util/mem.h"

/* Debian 12's headers are 6.1's. */
#ifndef SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV
#define SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV (1UL << 5)
#endif
#ifndef SECCOMP_IOCTL_NOTIF_SET_FLAGS
#define SECCOMP_IOCTL_NOTIF_SET_FLAGS SECCOMP_IOW(4, __u64)
#endif
#ifndef SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP
#define SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP (1UL << 0)
#endif
#ifndef SIOCGSKNS
#define SIOCGSKNS 0x894C
#endif
#ifndef PIDFD_THREAD
#define PIDFD_THREAD O_EXCL /* 6.9 */
#endif
#define X32_SYSCALL_BIT 0x40000000U

/* ------------------------------------------------------------------ */
/* The filter                                                          */

/* The low word of argument n (x86_64 is little-endian); the kernel takes
 * the flags of sendto/sendmsg/sendmmsg as unsigned int. */
#define ARG_LO(n) ((uint32_t)offsetof(struct seccomp_data, args[n]))

static const struct sock_filter fence_prog[] = {
    /* 0 */ BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
    /* Any other ABI (i386's socketcall reaches connect by another number)
     * would pass the checks below unseen: kill it, as the main filter does. */
    /* 1 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
    /* 2 */ BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
    /* 3 */ BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
    /* x32 syscalls report AUDIT_ARCH_X86_64 with bit 30 set in nr. */
    /* 4 */ BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, X32_SYSCALL_BIT, 0, 1),
    /* 5 */ BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
    /* 6 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_connect, 10, 0),  /* -> 17 */
    /* 7 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_listen, 9, 0),    /* -> 17 */
    /* 8 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_bind, 8, 0),      /* -> 17 */
    /* 9 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_sendmsg, 2, 0),   /* -> 12 */
    /* 10 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_sendto, 3, 0),   /* -> 14 */
    /* 11 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_sendmmsg, 2, 4), /* -> 14, 16 */
    /* 12 */ BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARG_LO(2)),	       /* sendmsg(fd, msg, flags) */
    /* 13 */ BPF_JUMP(BPF_JMP | BPF_JA, 1, 0, 0),		       /* -> 15 */
    /* 14 */ BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARG_LO(3)),	       /* sendto/sendmmsg: flags is arg 3 */
    /* 15 */ BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, MSG_FASTOPEN, 2, 0), /* -> 18 */
    /* 16 */ BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    /* 17 */ BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF),
    /* EOPNOTSUPP: what a socket without fast open says. */
    /* 18 */ BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EOPNOTSUPP & SECCOMP_RET_DATA)),
};

const struct sock_filter *netfence_filter(unsigned short *len)
{
	*len = (unsigned short)ARRAY_LEN(fence_prog);
	return fence_prog;
}

/* ------------------------------------------------------------------ */
/* Child side: between clone and execve, no allocation                 */

static void close_keep_errno(int fd)
{
	int saved = errno;
	close(fd);
	errno = saved;
}

int netfence_child_dns(int *udp_fd, int *tcp_fd)
{
	struct sockaddr_in a = {
	    .sin_family = AF_INET, .sin_port = htons(53), .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	int one = 1, u, t;

	u = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (u < 0)
		return -errno;
	if (bind(u, (struct sockaddr *)&a, sizeof(a)) < 0)
		goto fail_u;
	t = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (t < 0)
		goto fail_u;
	if (setsockopt(t, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
	    bind(t, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(t, 64) < 0) {
		close_keep_errno(t);
		goto fail_u;
	}
	*udp_fd = u;
	*tcp_fd = t;
	return 0;
fail_u:
	close_keep_errno(u);
	return -errno;
}

int netfence_child_install(int *listener_fd)
{
	struct sock_fprog prog = {.len = (unsigned short)ARRAY_LEN(fence_prog),
				  .filter = (struct sock_filter *)fence_prog};
	long fd;
	int killable = 1;

	fd = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
		     SECCOMP_FILTER_FLAG_NEW_LISTENER | SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV, &prog);
	if (fd < 0 && errno == EINVAL) {
		/* Before 5.19.  Without it a signal during a connect the
		 * supervisor is working on restarts the call (pitfall 2). */
		killable = 0;
		fd = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, &prog);
	}
	if (fd < 0)
		return -errno;
	*listener_fd = (int)fd;
	return killable;
}

int netfence_child_sendv(int sock, const int *fds, size_t n)
{
	union {
		char buf[CMSG_SPACE(NETFENCE_FDS_MAX * sizeof(int))];
		struct cmsghdr align;
	} u;
	char tag = 'F';
	struct iovec iov = {.iov_base = &tag, .iov_len = 1};
	struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf};
	struct cmsghdr *c;
	ssize_t k;

	if (n < 3 || n > NETFENCE_FDS_MAX)
		return -EINVAL;
	m.msg_controllen = CMSG_SPACE(n * sizeof(int));
	memset(u.buf, 0, sizeof(u.buf));
	c = CMSG_FIRSTHDR(&m);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(n * sizeof(int));
	memcpy(CMSG_DATA(c), fds, n * sizeof(int));
	do
		k = sendmsg(sock, &m, MSG_NOSIGNAL);
	while (k < 0 && errno == EINTR);
	if (k < 0)
		return -errno;
	return k == 1 ? 0 : -EIO;
}

int netfence_child_send(int sock, int listener, int dns_udp, int dns_tcp)
{
	int fds[3] = {listener, dns_udp, dns_tcp};

	return netfence_child_sendv(sock, fds, 3);
}

/* ------------------------------------------------------------------ */
/* Supervisor side                                                     */

int netfence_recv_fdv(int sock, int *fds_out, size_t max, size_t *n_out, struct moat_error *err)
{
	union {
		char buf[CMSG_SPACE((NETFENCE_FDS_MAX + 1) * sizeof(int))];
		struct cmsghdr align;
	} u;
	char tag = 0;
	struct iovec iov = {.iov_base = &tag, .iov_len = 1};
	struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf, .msg_controllen = sizeof(u.buf)};
	int fds[NETFENCE_FDS_MAX + 1];
	size_t nfds = 0;
	ssize_t n;

	n = recvmsg(sock, &m, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
	if (n < 0)
		return moat_error_set(err, MOAT_E_SYSTEM, errno, "netfence: receiving the fence's fds");
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS || c->cmsg_len < CMSG_LEN(0))
			continue;
		size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (size_t i = 0; i < k && nfds < ARRAY_LEN(fds); i++)
			memcpy(&fds[nfds++], CMSG_DATA(c) + i * sizeof(int), sizeof(int));
	}
	if (n != 1 || tag != 'F' || nfds < 3 || nfds > max || (m.msg_flags & MSG_CTRUNC)) {
		for (size_t i = 0; i < nfds; i++)
			close(fds[i]);
		if (n == 0 && nfds == 0) /* end of file: errnum 0 says so */
			return moat_error_set(err, MOAT_E_SYSTEM, 0, "netfence: the child closed the socket");
		return moat_error_set(err, MOAT_E_SYSTEM, EPROTO,
				      "netfence: the child sent %zd bytes and %zu fds, not the fence's 3 to %zu fds", n,
				      nfds, max);
	}
	memcpy(fds_out, fds, nfds * sizeof(int));
	*n_out = nfds;
	return 0;
}

int netfence_recv_fds(int sock, int *listener, int *dns_udp, int *dns_tcp, struct moat_error *err)
{
	int fds[3];
	size_t n;

	if (netfence_recv_fdv(sock, fds, 3, &n, err) < 0)
		return -1;
	*listener = fds[0];
	*dns_udp = fds[1];
	*dns_tcp = fds[2];
	return 0;
}

bool netfence_addr_is_loopback(const struct netfence_addr *a)
{
	if (a->family == AF_INET) {
		uint32_t v = ntohl(a->v4.s_addr);
		return (v >> 24) == 127 || v == 0;
	}
	return a->family == AF_INET6 && (IN6_IS_ADDR_LOOPBACK(&a->v6) || IN6_IS_ADDR_UNSPECIFIED(&a->v6));
}

bool netfence_name_is_number(const char *name, struct in_addr *out)
{
	struct in_addr a;

	/* inet_aton also takes what follows a space; a name has none, and
	 * glibc's getaddrinfo reads the whole string (inet_aton_exact). */
	if (name[strcspn(name, " \t\n\v\f\r")] != '\0' || inet_aton(name, &a) == 0)
		return false;
	if (out)
		*out = a;
	return true;
}

static bool addr_eq(const struct netfence_addr *a, const struct netfence_addr *b)
{
	if (a->family != b->family)
		return false;
	return a->family == AF_INET ? a->v4.s_addr == b->v4.s_addr : memcmp(&a->v6, &b->v6, sizeof(a->v6)) == 0;
}

/* A v4-mapped address is the IPv4 address, for the rules and the names. */
static void addr_normalize(struct netfence_addr *a)
{
	if (a->family == AF_INET6 && IN6_IS_ADDR_V4MAPPED(&a->v6)) {
		struct in_addr v4;
		memcpy(&v4, &a->v6.s6_addr[12], 4);
		a->family = AF_INET;
		a->v4 = v4;
	}
}

struct pending {
	bool used;
	bool inject;	  /* fd is the fence's host socket, to be installed */
	uint64_t id;	  /* the notification */
	int fd;		  /* polled for POLLOUT */
	int target_fd;	  /* the child's fd number */
	unsigned fdflags; /* O_CLOEXEC when the child's fd had it */
	int64_t deadline; /* SO_SNDTIMEO, CLOCK_MONOTONIC ns; 0: none */
	struct upstream_conn *up; /* through the host's proxy: the tunnel being asked
				   * for (fd is -1 then: up->fd is polled) */
	bool nonblock;		  /* ... for a non-blocking socket: EINPROGRESS once it stands */
};

#define DNS_TCP_MSG_MAX 1024 /* a query is a header and one question */
#define DNS_UDP_MAX	512  /* no EDNS: the classic limit */
#define DNS_IDLE_NS	(5 * 1000000000LL)

struct dns_client {
	int fd;	      /* -1: free */
	unsigned gen; /* which connection holds the slot (deferred answers) */
	size_t len;
	unsigned char buf[2 + DNS_TCP_MSG_MAX];
	int64_t deadline;
};

/* A query waiting for the rules' lookup of its name (at most
 * DNS_DEFER_NS: resolvers ask again after 5 s, and give up after a few
 * tries).  client: the TCP client's slot, or -1 for UDP (src, sl). */
#define NETFENCE_DNS_DEFERRED 32
#define DNS_DEFER_NS	      (10 * 1000000000LL)

struct dns_deferred {
	bool used;
	int client;
	unsigned client_gen;
	struct sockaddr_storage src;
	socklen_t sl;
	size_t len;
	unsigned char q[DNS_TCP_MSG_MAX];
	int64_t deadline;
};

#define NETFENCE_NAMES 512

struct name_ent {
	bool used;
	struct netfence_addr a;
	char name[NETFENCE_NAME_MAX + 1];
};

enum slot_kind { SLOT_LISTENER, SLOT_UDP, SLOT_TCP, SLOT_PENDING, SLOT_CLIENT };

struct slot {
	enum slot_kind kind;
	unsigned idx;
	int fd;
};

struct opt_defaults;

/* What the supervisor keeps open between notifications to answer the next
 * one sooner (open_pidfd, child_fdflags, answer() below say why each is
 * worth it): all of it is the fence's, closed by netfence_free. */
#define PIDFD_KEEP     8
#define PIDFD_KEEP_NS  1000000000LL
#define FDINFO_KEEP    8
#define FDINFO_KEEP_NS 1000000000LL

struct pidfd_kept {
	bool used;
	pid_t tid;
	int fd;
	int64_t last;
};

struct fdinfo_kept {
	bool used;
	pid_t tid;
	int num, f;
	int64_t last;
};

struct netfence {
	int listener, dns_udp, dns_tcp;
	struct pidfd_kept pidfds[PIDFD_KEEP];
	struct fdinfo_kept fdinfos[FDINFO_KEEP];
	/* The child's socket that connect_forward has just replaced: its
	 * last reference is then the supervisor's, and releasing the socket
	 * costs some 8 us on this VM, which the caller need not wait for.
	 * answer() closes it once the answer is sent; -1: none. */
	int close_after_answer;
	struct local_set *locals; /* connect_local's threads */
	bool listener_gone;
	struct netfence_rules rules;
	dev_t ns_dev; /* the sandbox's network namespace */
	ino_t ns_ino;
	struct seccomp_notif *req;
	size_t req_size;
	struct seccomp_notif_resp *resp;
	size_t resp_size;
	int64_t last_sweep;
	struct pending pend[NETFENCE_MAX_PENDING];
	struct dns_client cli[NETFENCE_DNS_TCP_CLIENTS];
	struct dns_deferred deferred[NETFENCE_DNS_DEFERRED];
	struct name_ent names[NETFENCE_NAMES];
	size_t name_next; /* the oldest entry, replaced when the table is full */
	struct slot slots[NETFENCE_POLLFDS_MAX];
	size_t n_slots;
	struct netfence_stats st;
	struct opt_defaults *defaults4, *defaults6;
};

static int ns_of_socket(int fd, dev_t *dev, ino_t *ino)
{
	struct stat st;
	int nsfd = ioctl(fd, SIOCGSKNS);

	if (nsfd < 0)
		return -errno;
	if (fstat(nsfd, &st) < 0) {
		int e = errno;
		close(nsfd);
		return -e;
	}
	close(nsfd);
	*dev = st.st_dev;
	*ino = st.st_ino;
	return 0;
}

static size_t opt_defaults_size(void);
static void read_defaults(struct opt_defaults *d, int domain);
static struct local_set *local_set_new(void);
static void local_set_end(struct local_set *ls);

struct netfence *netfence_new(int listener, int dns_udp, int dns_tcp, const struct netfence_rules *r,
			      struct moat_error *err)
{
	struct seccomp_notif_sizes sz = {0};
	struct netfence *nf;
	uint64_t flags = SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP;
	int rc;

	if (!r->resolve || !r->connect_ok) {
		moat_error_set(err, MOAT_E_USAGE, 0, "netfence: the rules need resolve and connect_ok");
		goto fail_fds;
	}
	if (syscall(SYS_seccomp, SECCOMP_GET_NOTIF_SIZES, 0, &sz) < 0) {
		moat_error_set(err, MOAT_E_UNAVAIL, errno, "netfence: SECCOMP_GET_NOTIF_SIZES");
		goto fail_fds;
	}
	nf = moat_xcalloc(1, sizeof(*nf));
	nf->listener = listener;
	nf->dns_udp = dns_udp;
	nf->dns_tcp = dns_tcp;
	nf->rules = *r;
	nf->close_after_answer = -1;
	nf->locals = local_set_new();
	for (size_t i = 0; i < ARRAY_LEN(nf->cli); i++)
		nf->cli[i].fd = -1;
	nf->req_size = sz.seccomp_notif > sizeof(*nf->req) ? sz.seccomp_notif : sizeof(*nf->req);
	nf->resp_size = sz.seccomp_notif_resp > sizeof(*nf->resp) ? sz.seccomp_notif_resp : sizeof(*nf->resp);
	nf->req = moat_xcalloc(1, nf->req_size);
	nf->resp = moat_xcalloc(1, nf->resp_size);
	nf->defaults4 = moat_xcalloc(1, opt_defaults_size());
	nf->defaults6 = moat_xcalloc(1, opt_defaults_size());
	read_defaults(nf->defaults4, AF_INET);
	read_defaults(nf->defaults6, AF_INET6);
	/* The DNS socket was bound in the sandbox's namespace: that is the
	 * one whose sockets stay inside (SIOCGSKNS needs CAP_NET_ADMIN over
	 * it, which its owner, this process, has). */
	rc = ns_of_socket(dns_udp, &nf->ns_dev, &nf->ns_ino);
	if (rc < 0) {
		moat_error_set(err, MOAT_E_SYSTEM, -rc, "netfence: SIOCGSKNS on the sandbox's DNS socket");
		netfence_free(nf);
		return NULL;
	}
	/* 6.6: the woken thread runs on the supervisor's CPU: 41 us per
	 * connect instead of 132-153 (network.md).  Older kernels: EINVAL. */
	(void)ioctl(listener, SECCOMP_IOCTL_NOTIF_SET_FLAGS, flags);
	return nf;
fail_fds:
	close(listener);
	close(dns_udp);
	close(dns_tcp);
	return NULL;
}

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

static void pending_drop(struct pending *p)
{
	close_fd(&p->fd);
	if (p->up) {
		upstream_close(p->up);
		free(p->up);
		p->up = NULL;
	}
	p->used = false;
}

/* The fd a pending connect waits on. */
static int pending_fd(const struct pending *p)
{
	return p->up ? p->up->fd : p->fd;
}

void netfence_free(struct netfence *nf)
{
	if (!nf)
		return;
	for (size_t i = 0; i < ARRAY_LEN(nf->pend); i++)
		if (nf->pend[i].used)
			pending_drop(&nf->pend[i]);
	for (size_t i = 0; i < ARRAY_LEN(nf->cli); i++)
		close_fd(&nf->cli[i].fd);
	for (size_t i = 0; i < PIDFD_KEEP; i++)
		if (nf->pidfds[i].used)
			close(nf->pidfds[i].fd);
	for (size_t i = 0; i < FDINFO_KEEP; i++)
		if (nf->fdinfos[i].used)
			close(nf->fdinfos[i].f);
	close_fd(&nf->close_after_answer);
	local_set_end(nf->locals);
	close_fd(&nf->listener);
	close_fd(&nf->dns_udp);
	close_fd(&nf->dns_tcp);
	free(nf->req);
	free(nf->resp);
	free(nf->defaults4);
	free(nf->defaults6);
	free(nf);
}

void netfence_get_stats(const struct netfence *nf, struct netfence_stats *out)
{
	*out = nf->st;
}

/* ---- answering notifications ---- */

/* The answer did not arrive when the caller is gone (ENOENT): nothing to
 * do then. */
static void answer(struct netfence *nf, uint64_t id, int neg_errno, uint32_t flags)
{
	memset(nf->resp, 0, nf->resp_size);
	nf->resp->id = id;
	nf->resp->error = flags ? 0 : neg_errno;
	nf->resp->val = 0;
	nf->resp->flags = flags;
	if (ioctl(nf->listener, SECCOMP_IOCTL_NOTIF_SEND, nf->resp) < 0 && errno != ENOENT)
		nf->st.failures++;
	close_fd(&nf->close_after_answer);
}

static bool id_valid(const struct netfence *nf, uint64_t id)
{
	return ioctl(nf->listener, SECCOMP_IOCTL_NOTIF_ID_VALID, &id) == 0;
}

/* The caller's thread and the supervisor's, held on this CPU while the
 * kernel installs an fd.  SECCOMP_IOCTL_NOTIF_ADDFD is two wakeups the
 * kernel makes without SYNC_WAKE_UP's "on this CPU" hint: the caller's
 * thread, to install the fd, and the supervisor, once it is installed.
 * Each wakee, its CPU busy with the waker for a moment more, is placed on
 * an idle CPU instead: on this VM a halted vCPU, woken by an interrupt
 * (20-40 us each).  A run of connects settled either on one CPU (35 us a
 * connect) or on that ping-pong (100 us, two migrations a connect), run
 * by run.  Held, both stay here: 35-42 us every run (docs/network.md,
 * "Connect latency").  Only when the caller's thread may run here already
 * (its own affinity is kept: a thread pinned elsewhere is left alone),
 * and both masks are put back before the answer lets the caller go on.
 * The thread id is the kernel's (the notification's), and the thread is
 * held in the call meanwhile; another thread of the command that sets
 * this one's affinity in those few µs has its setting undone. */
struct cpu_hold {
	pid_t tid;
	cpu_set_t caller, self;
	bool held;
};

static void cpu_hold(struct cpu_hold *h, pid_t tid)
{
	cpu_set_t one;
	int cpu = sched_getcpu();

	h->held = false;
	h->tid = tid;
	if (tid <= 0 || cpu < 0 || sched_getaffinity(tid, sizeof(h->caller), &h->caller) != 0 ||
	    !CPU_ISSET(cpu, &h->caller) || CPU_COUNT(&h->caller) < 2 ||
	    sched_getaffinity(0, sizeof(h->self), &h->self) != 0)
		return;
	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	if (sched_setaffinity(tid, sizeof(one), &one) != 0)
		return;
	if (sched_setaffinity(0, sizeof(one), &one) != 0) {
		(void)sched_setaffinity(tid, sizeof(h->caller), &h->caller);
		return;
	}
	h->held = true;
}

static void cpu_release(struct cpu_hold *h)
{
	if (!h->held)
		return;
	(void)sched_setaffinity(h->tid, sizeof(h->caller), &h->caller); /* ESRCH: the thread is gone */
	(void)sched_setaffinity(0, sizeof(h->self), &h->self);
	h->held = false;
}

/* Install `src` over the child's fd number (SETFD: as dup2 would); `tid`,
 * the caller's thread, is held on this CPU meanwhile (0: not). */
static int install_fd(struct netfence *nf, uint64_t id, int src, int target, unsigned fdflags, pid_t tid)
{
	struct seccomp_notif_addfd a = {.id = id,
					.flags = SECCOMP_ADDFD_FLAG_SETFD,
					.srcfd = (uint32_t)src,
					.newfd = (uint32_t)target,
					.newfd_flags = fdflags};
	struct cpu_hold h;
	int rc;

	cpu_hold(&h, tid);
	rc = ioctl(nf->listener, SECCOMP_IOCTL_NOTIF_ADDFD, &a) < 0 ? -errno : 0;
	cpu_release(&h);
	return rc;
}

/* The notification's pid is a thread id (a resolver's worker thread, say):
 * PIDFD_THREAD (6.9) takes it as it is; before, a thread group leader's
 * id works as it is and another thread's is mapped to its group.
 *
 * The pidfds of the last few threads that asked stay open a short while
 * (*kept: the caller must not close it): pidfd_open and close cost 4.7 us
 * on this VM.  A pidfd names the thread's struct pid, never its number:
 * while that thread lives no other thread has the number, and once it is
 * gone pidfd_getfd says ESRCH, and take_socket asks again with fresh set,
 * which opens one for whoever has the number then.  Only pidfds of the
 * thread itself are kept, not the group's one a /proc lookup maps a
 * thread to (that mapping is by number again).  In the fence, at most
 * PIDFD_KEEP, each closed at the next call once unused for 1 s. */
static int open_pidfd(struct netfence *nf, pid_t tid, bool fresh, bool *kept)
{
	struct pidfd_kept *keep = nf->pidfds;
	char path[64], line[128];
	int64_t now = moat_mono_ns();
	size_t slot = 0;
	long fd;
	cleanup_fclose FILE *f = NULL;

	*kept = false;
	for (size_t i = 0; i < PIDFD_KEEP; i++) {
		if (keep[i].used && (now - keep[i].last > PIDFD_KEEP_NS || (fresh && keep[i].tid == tid))) {
			close(keep[i].fd);
			keep[i].used = false;
		}
		if (keep[i].used && keep[i].tid == tid) {
			keep[i].last = now;
			*kept = true;
			return keep[i].fd;
		}
		if (keep[slot].used && (!keep[i].used || keep[i].last < keep[slot].last))
			slot = i; /* a free one, else the least recently used */
	}
	fd = syscall(SYS_pidfd_open, tid, PIDFD_THREAD);
	if (fd < 0 && errno == EINVAL)
		fd = syscall(SYS_pidfd_open, tid, 0);
	if (fd >= 0) {
		if (keep[slot].used)
			close(keep[slot].fd);
		keep[slot].used = true;
		keep[slot].tid = tid;
		keep[slot].fd = (int)fd;
		keep[slot].last = now;
		*kept = true;
		return (int)fd;
	}
	if (errno != EINVAL)
		return -errno;
	snprintf(path, sizeof(path), "/proc/%d/status", (int)tid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		int tgid;
		if (sscanf(line, "Tgid: %d", &tgid) == 1) {
			fd = syscall(SYS_pidfd_open, tgid, 0);
			return fd >= 0 ? (int)fd : -errno;
		}
	}
	return -ESRCH;
}

/* FD_CLOEXEC of the child's fd, which the installed fd must keep; when
 * fdinfo cannot tell, close-on-exec (a host socket leaking across execve
 * is the worse mistake).
 *
 * The fdinfo file of the last few (thread, fd number) pairs stays open a
 * short while and is read again from offset 0: each read looks the fd up
 * in the thread's table afresh (a close and a new socket under the same
 * number are seen), and a file opened for a thread names that thread,
 * never its number: once the thread is gone the read fails and the path
 * is opened again, for whoever has the number now.  One pread instead of
 * open, read and close: 1.3 us against 7 on this VM.  In the fence;
 * what is kept is closed when it goes unused (at the next call), at most
 * FDINFO_KEEP files. */
static unsigned child_fdflags(struct netfence *nf, pid_t tid, int fd)
{
	struct fdinfo_kept *keep = nf->fdinfos;
	char path[64], buf[256];
	ssize_t n = -1;
	const char *p;
	unsigned long fl;
	int64_t now = moat_mono_ns();
	size_t hit = FDINFO_KEEP, slot = 0;

	for (size_t i = 0; i < FDINFO_KEEP; i++) {
		if (keep[i].used && now - keep[i].last > FDINFO_KEEP_NS) {
			close(keep[i].f);
			keep[i].used = false;
		}
		if (keep[i].used && keep[i].tid == tid && keep[i].num == fd)
			hit = i;
		if (keep[slot].used && (!keep[i].used || keep[i].last < keep[slot].last))
			slot = i; /* a free one, else the least recently used */
	}
	if (hit < FDINFO_KEEP) {
		n = pread(keep[hit].f, buf, sizeof(buf) - 1, 0);
		if (n <= 0) { /* the thread is gone (its number may be another's now), or the fd */
			close(keep[hit].f);
			keep[hit].used = false;
			slot = hit;
		}
	}
	if (n <= 0) {
		int f;
		snprintf(path, sizeof(path), "/proc/%d/fdinfo/%d", (int)tid, fd);
		f = open(path, O_RDONLY | O_CLOEXEC);
		if (f < 0)
			return O_CLOEXEC;
		n = read(f, buf, sizeof(buf) - 1);
		if (n <= 0) {
			close(f);
			return O_CLOEXEC;
		}
		if (keep[slot].used)
			close(keep[slot].f);
		keep[slot].used = true;
		keep[slot].tid = tid;
		keep[slot].num = fd;
		keep[slot].f = f;
		hit = slot;
	}
	keep[hit].last = now;
	buf[n] = '\0';
	p = strstr(buf, "flags:");
	if (!p || sscanf(p, "flags: %lo", &fl) != 1)
		return O_CLOEXEC;
	return (fl & O_CLOEXEC) ? O_CLOEXEC : 0;
}

/* What a handler decided, beyond an errno answer (<= 0). */
enum { R_CONTINUE = 1, R_PENDING, R_DROP, R_ANSWERED /* someone else answers */ };

/* The call being decided: the child's socket as a file of ours. */
struct call {
	uint64_t id;
	pid_t tid;
	int target_fd;
	int sock; /* from pidfd_getfd */
	int type, protocol, domain;
	bool foreign; /* not in the sandbox's namespace */
};

/* Take the child's fd `target` (pidfd_getfd) and find out what it is.
 * <= 0: the answer (an errno); else 0 with c filled. */
static int take_socket(struct netfence *nf, struct call *c)
{
	bool kept;
	int pidfd = open_pidfd(nf, c->tid, false, &kept), e;
	socklen_t l = sizeof(int);
	dev_t dev;
	ino_t ino;
	long fd;

	if (pidfd < 0)
		return pidfd == -ESRCH ? R_DROP : pidfd;
	fd = syscall(SYS_pidfd_getfd, pidfd, c->target_fd, 0);
	if (fd < 0 && errno == ESRCH && kept) {
		/* The thread the kept pidfd named is gone: the number is
		 * someone else's now, or no one's. */
		pidfd = open_pidfd(nf, c->tid, true, &kept);
		if (pidfd < 0)
			return pidfd == -ESRCH ? R_DROP : pidfd;
		fd = syscall(SYS_pidfd_getfd, pidfd, c->target_fd, 0);
	}
	e = errno;
	if (!kept)
		close(pidfd);
	if (fd < 0)
		return -e; /* EBADF as the kernel would say; EPERM (Yama) fails closed */
	c->sock = (int)fd;
	if (getsockopt(c->sock, SOL_SOCKET, SO_TYPE, &c->type, &l) < 0)
		return errno == ENOTSOCK ? -ENOTSOCK : -errno;
	l = sizeof(int);
	if (getsockopt(c->sock, SOL_SOCKET, SO_PROTOCOL, &c->protocol, &l) < 0)
		return -errno;
	l = sizeof(int);
	if (getsockopt(c->sock, SOL_SOCKET, SO_DOMAIN, &c->domain, &l) < 0)
		return -errno;
	/* The namespace by its cookie (SO_NETNS_COOKIE, 5.14), against the
	 * sandbox's DNS socket's: two reads and no file, where SIOCGSKNS makes
	 * a namespace file to fstat and close (6.7 us against 1.5 here).  A
	 * cookie is never reused while the system runs. */
	uint64_t ck_sock, ck_sandbox;
	socklen_t l1 = sizeof(ck_sock), l2 = sizeof(ck_sandbox);
	if (getsockopt(c->sock, SOL_SOCKET, SO_NETNS_COOKIE, &ck_sock, &l1) == 0 &&
	    getsockopt(nf->dns_udp, SOL_SOCKET, SO_NETNS_COOKIE, &ck_sandbox, &l2) == 0 && l1 == sizeof(ck_sock) &&
	    l2 == sizeof(ck_sandbox)) {
		c->foreign = ck_sock != ck_sandbox;
		return 0;
	}
	/* Before 5.14.  Any failure of SIOCGSKNS (EPERM: a namespace this
	 * process does not own, such as the host's for an unprivileged moat)
	 * means "not provably the sandbox's": treated as foreign, the strict
	 * side. */
	c->foreign = ns_of_socket(c->sock, &dev, &ino) < 0 || dev != nf->ns_dev || ino != nf->ns_ino;
	return 0;
}

static const char *name_for(struct netfence *nf, const struct netfence_addr *a)
{
	for (size_t i = 0; i < ARRAY_LEN(nf->names); i++)
		if (nf->names[i].used && addr_eq(&nf->names[i].a, a))
			return nf->names[i].name;
	return NULL;
}

/* The latest name an address was handed out for wins: two allowed names
 * sharing an address (a CDN) are both allowed, whichever connect_ok sees. */
static void name_remember(struct netfence *nf, const struct netfence_addr *a, const char *name)
{
	struct name_ent *e = NULL;

	for (size_t i = 0; i < ARRAY_LEN(nf->names) && !e; i++)
		if (nf->names[i].used && addr_eq(&nf->names[i].a, a))
			e = &nf->names[i];
	if (!e) {
		e = &nf->names[nf->name_next];
		nf->name_next = (nf->name_next + 1) % ARRAY_LEN(nf->names);
	}
	e->used = true;
	e->a = *a;
	size_t l = strnlen(name, sizeof(e->name) - 1);
	memcpy(e->name, name, l);
	e->name[l] = '\0';
}

static struct pending *pending_slot(struct netfence *nf)
{
	for (size_t i = 0; i < ARRAY_LEN(nf->pend); i++)
		if (!nf->pend[i].used)
			return &nf->pend[i];
	return NULL;
}

/* SO_SNDTIMEO bounds a blocking connect; with WAIT_KILLABLE_RECV the
 * kernel no longer does it for the waiting child, so the fence does. */
static int64_t sndtimeo_deadline(int sock)
{
	struct timeval tv = {0};
	socklen_t l = sizeof(tv);

	if (getsockopt(sock, SOL_SOCKET, SO_SNDTIMEO, &tv, &l) < 0 || (tv.tv_sec == 0 && tv.tv_usec == 0))
		return 0;
	return moat_mono_ns() + (int64_t)tv.tv_sec * 1000000000LL + (int64_t)tv.tv_usec * 1000;
}

static int add_pending(struct netfence *nf, const struct call *c, int *fd, bool inject, unsigned fdflags)
{
	struct pending *p = pending_slot(nf);

	if (!p)
		return -EAGAIN; /* the kernel's word for "no resources for a connect now" */
	*p = (struct pending){.used = true,
			      .inject = inject,
			      .id = c->id,
			      .fd = steal_fd(fd),
			      .target_fd = c->target_fd,
			      .fdflags = fdflags,
			      .deadline = sndtimeo_deadline(c->sock)};
	return R_PENDING;
}

/* A connect that stays inside the sandbox, made by the supervisor on the
 * child's own socket file (why not CONTINUE: the top of this file).
 *
 * The supervisor must never block, and a connect on the child's file can:
 * O_NONBLOCK is the file's flag, which the child's other threads can flip
 * between any check of ours and the kernel's read of it, and a loopback
 * listener with a full backlog drops SYNs, so a blocking connect waits for
 * the SYN retries (about two minutes) -- with moat's loop, its --timeout
 * and its signal forwarding stuck behind it.  So a stream connect runs in
 * a thread of its own, which answers the notification itself: the child
 * waits exactly as long as the kernel would make it wait (its own
 * O_NONBLOCK and SO_SNDTIMEO, read by the kernel in that thread's connect),
 * and the loop goes on.  Datagram connects only set the peer: inline.
 *
 * The thread owns everything it touches: a copy of the listener, the
 * socket, the address, its own response buffer, and a reference to the
 * fence's set of such threads (struct local_set), which is how
 * netfence_free ends them: no descriptor of the fence outlives it, and a
 * connect waiting on SYN retries would hold two for minutes.  All signals
 * are blocked in it, so the process's signals still reach moat's
 * signalfd; NETFENCE_MAX_LOCAL bounds how many wait at once (then
 * -EAGAIN, the kernel's word for "no resources for a connect now"). */
#define NETFENCE_MAX_LOCAL 64
/* How long netfence_free waits for them, and how often it disconnects
 * their sockets meanwhile (a thread that had not yet called connect when
 * it was told would start one). */
#define LOCAL_END_NS	  1000000000LL
#define LOCAL_END_STEP_NS 10000000LL

struct local_set {
	pthread_mutex_t lock;
	pthread_cond_t changed;
	int refs;   /* the fence's and one per thread: the last frees it */
	int live;   /* threads running */
	bool ended; /* the fence is being freed */
	int socks[NETFENCE_MAX_LOCAL]; /* the threads' sockets, -1: a free slot */
};

struct local_connect {
	int listener, sock;
	int slot; /* in set->socks */
	struct local_set *set;
	uint64_t id;
	socklen_t len;
	struct sockaddr_storage ss;
	size_t resp_size;
	unsigned char resp[]; /* struct seccomp_notif_resp, resp_size bytes */
};

static struct local_set *local_set_new(void)
{
	struct local_set *ls = moat_xcalloc(1, sizeof(*ls));

	pthread_mutex_init(&ls->lock, NULL);
	pthread_cond_init(&ls->changed, NULL);
	ls->refs = 1;
	for (size_t i = 0; i < NETFENCE_MAX_LOCAL; i++)
		ls->socks[i] = -1;
	return ls;
}

/* Drop a reference; called with the lock held, which it releases. */
static void local_set_put(struct local_set *ls)
{
	bool last = --ls->refs == 0;

	pthread_mutex_unlock(&ls->lock);
	if (last) {
		pthread_cond_destroy(&ls->changed);
		pthread_mutex_destroy(&ls->lock);
		free(ls);
	}
}

/* A slot for a new thread's socket, or -1 when NETFENCE_MAX_LOCAL wait
 * already (or the fence is ending). */
static int local_set_enter(struct local_set *ls, int sock)
{
	int slot = -1;

	pthread_mutex_lock(&ls->lock);
	for (int i = 0; i < NETFENCE_MAX_LOCAL && slot < 0 && !ls->ended; i++)
		if (ls->socks[i] < 0)
			slot = i;
	if (slot >= 0) {
		ls->socks[slot] = sock;
		ls->live++;
		ls->refs++;
	}
	pthread_mutex_unlock(&ls->lock);
	return slot;
}

/* The thread is done with its socket: closed here, under the lock, so that
 * local_set_end never shuts down a number that is someone else's by then. */
static void local_set_leave(struct local_set *ls, int slot, int sock)
{
	pthread_mutex_lock(&ls->lock);
	ls->socks[slot] = -1;
	if (sock >= 0)
		close(sock);
	ls->live--;
	pthread_cond_broadcast(&ls->changed);
	local_set_put(ls);
}

/* netfence_free: disconnect every waiting connect (shutdown(2) of a socket
 * in SYN_SENT aborts it and wakes its connect) until the threads are gone,
 * at most LOCAL_END_NS; a thread still there then keeps the set alive and
 * frees it itself. */
static void local_set_end(struct local_set *ls)
{
	int64_t end = moat_mono_ns() + LOCAL_END_NS;

	if (!ls)
		return;
	pthread_mutex_lock(&ls->lock);
	__atomic_store_n(&ls->ended, true, __ATOMIC_RELAXED);
	while (ls->live > 0 && moat_mono_ns() < end) {
		struct timespec ts;
		for (size_t i = 0; i < NETFENCE_MAX_LOCAL; i++)
			if (ls->socks[i] >= 0)
				(void)shutdown(ls->socks[i], SHUT_RDWR);
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += LOCAL_END_STEP_NS;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		(void)pthread_cond_timedwait(&ls->changed, &ls->lock, &ts);
	}
	local_set_put(ls);
}

static void *local_connect_thread(void *arg)
{
	struct local_connect *lc = arg;
	struct seccomp_notif_resp resp;
	int rc;

	do
		rc = connect(lc->sock, (struct sockaddr *)&lc->ss, lc->len) < 0 ? -errno : 0;
	while (rc == -EINTR && !__atomic_load_n(&lc->set->ended, __ATOMIC_RELAXED));
	memset(lc->resp, 0, lc->resp_size);
	memset(&resp, 0, sizeof(resp));
	resp.id = lc->id;
	resp.error = rc;
	memcpy(lc->resp, &resp, sizeof(resp));
	/* ENOENT: the caller is gone (killed, or its thread ended). */
	(void)ioctl(lc->listener, SECCOMP_IOCTL_NOTIF_SEND, lc->resp);
	close(lc->listener);
	local_set_leave(lc->set, lc->slot, lc->sock);
	free(lc);
	return NULL;
}

static int connect_local(struct netfence *nf, struct call *c, const struct sockaddr *sa, socklen_t len)
{
	struct local_connect *lc;
	int rc;

	nf->st.local++;
	if (c->type != SOCK_STREAM && c->type != SOCK_SEQPACKET)
		return connect(c->sock, sa, len) < 0 ? -errno : 0;
	lc = moat_xcalloc(1, sizeof(*lc) + nf->resp_size);
	lc->set = nf->locals;
	lc->slot = local_set_enter(lc->set, c->sock);
	if (lc->slot < 0) {
		free(lc);
		return -EAGAIN;
	}
	lc->resp_size = nf->resp_size;
	lc->id = c->id;
	lc->len = len;
	memcpy(&lc->ss, sa, len);
	lc->listener = fcntl(nf->listener, F_DUPFD_CLOEXEC, 0);
	if (lc->listener < 0) {
		rc = -errno;
		goto fail;
	}
	lc->sock = steal_fd(&c->sock);
	/* A small stack: the thread only connects and answers. */
	rc = helper_thread_start(local_connect_thread, lc, 64 * 1024);
	if (rc == 0)
		return R_ANSWERED;
	c->sock = steal_fd(&lc->sock);
	close(lc->listener);
	rc = -rc;
fail:
	local_set_leave(lc->set, lc->slot, -1); /* the socket is the caller's again */
	free(lc);
	return rc == -EAGAIN || rc == -ENOMEM ? -EAGAIN : rc;
}

/* Options the child set on its socket before connect are lost with it
 * (pitfall 5: undici's keepalive and nodelay, ssh's IP_TOS): each one that
 * differs from the fresh socket's is copied.  Best effort: an option the
 * host socket refuses is left at its default. */
static const struct {
	int level, name;
} copied_opts[] = {
    {SOL_SOCKET, SO_KEEPALIVE},
    {SOL_SOCKET, SO_LINGER},
    {SOL_SOCKET, SO_OOBINLINE},
    {SOL_SOCKET, SO_PRIORITY},
    {SOL_SOCKET, SO_RCVLOWAT},
    {SOL_SOCKET, SO_SNDTIMEO},
    {SOL_SOCKET, SO_RCVTIMEO},
    {SOL_SOCKET, SO_REUSEADDR},
    {SOL_SOCKET, SO_TIMESTAMP},
    {IPPROTO_TCP, TCP_NODELAY},
    {IPPROTO_TCP, TCP_MAXSEG},
    {IPPROTO_TCP, TCP_CORK},
    {IPPROTO_TCP, TCP_KEEPIDLE},
    {IPPROTO_TCP, TCP_KEEPINTVL},
    {IPPROTO_TCP, TCP_KEEPCNT},
    {IPPROTO_TCP, TCP_SYNCNT},
    {IPPROTO_TCP, TCP_LINGER2},
    {IPPROTO_TCP, TCP_WINDOW_CLAMP},
    {IPPROTO_TCP, TCP_QUICKACK},
    {IPPROTO_TCP, TCP_CONGESTION},
    {IPPROTO_TCP, TCP_USER_TIMEOUT},
    {IPPROTO_TCP, TCP_NOTSENT_LOWAT},
    {IPPROTO_TCP, TCP_FASTOPEN_CONNECT},
    {IPPROTO_TCP, TCP_THIN_LINEAR_TIMEOUTS},
    {IPPROTO_IP, IP_TOS},
    {IPPROTO_IP, IP_TTL},
    {IPPROTO_IP, IP_MTU_DISCOVER},
    {IPPROTO_IP, IP_RECVERR},
    {IPPROTO_IPV6, IPV6_V6ONLY},
    {IPPROTO_IPV6, IPV6_TCLASS},
    {IPPROTO_IPV6, IPV6_UNICAST_HOPS},
    {IPPROTO_IPV6, IPV6_MTU_DISCOVER},
    {IPPROTO_IPV6, IPV6_RECVERR},
};

/* A fresh socket's value of each copied option, twice: the host's, read
 * once per family in netfence_new, and the sandbox namespace's (sb), read
 * at the first forwarded connect.  They differ where the host's
 * per-namespace sysctls differ from a new namespace's (tcp_rmem,
 * tcp_keepalive_time, ip_default_ttl, tcp_syn_retries...): the child's
 * untouched socket then shows the sandbox's values, and copying them
 * would override the host's settings (and, for SO_RCVBUF, turn the
 * kernel's receive autotuning off).  A connect reads only the child's
 * side. */
struct opt_values {
	bool ok[ARRAY_LEN(copied_opts)];
	socklen_t len[ARRAY_LEN(copied_opts)];
	unsigned char v[ARRAY_LEN(copied_opts)][64];
	int bufs[2]; /* SO_RCVBUF, SO_SNDBUF; -1: unknown */
};

struct opt_defaults {
	struct opt_values host, sb;
	bool sb_read;
};

static const int buf_opts[] = {SO_RCVBUF, SO_SNDBUF};

static void read_opts(int s, struct opt_values *o)
{
	memset(o, 0, sizeof(*o));
	for (size_t i = 0; s >= 0 && i < ARRAY_LEN(copied_opts); i++) {
		o->len[i] = sizeof(o->v[i]);
		o->ok[i] = getsockopt(s, copied_opts[i].level, copied_opts[i].name, o->v[i], &o->len[i]) == 0;
	}
	for (size_t i = 0; i < ARRAY_LEN(buf_opts); i++) {
		socklen_t l = sizeof(o->bufs[i]);
		if (s < 0 || getsockopt(s, SOL_SOCKET, buf_opts[i], &o->bufs[i], &l) < 0)
			o->bufs[i] = -1;
	}
}

static void read_defaults(struct opt_defaults *d, int domain)
{
	cleanup_close int s = socket(domain, SOCK_STREAM | SOCK_CLOEXEC, IPPROTO_TCP);

	memset(d, 0, sizeof(*d));
	read_opts(s, &d->host);
}

/* The sandbox's defaults, from the fence's own TCP socket in that
 * namespace (the DNS listener, made by netfence_child_dns and never given
 * an option since but SO_REUSEADDR, which is taken as 0 here).  It is an
 * AF_INET socket: the IPPROTO_IPV6 options stay unknown, and are compared
 * with the host's alone, as before. */
static void read_sandbox_defaults(struct opt_defaults *d, int sandbox_tcp)
{
	read_opts(sandbox_tcp, &d->sb);
	for (size_t i = 0; i < ARRAY_LEN(copied_opts); i++)
		if (copied_opts[i].level == SOL_SOCKET && copied_opts[i].name == SO_REUSEADDR) {
			int zero = 0;
			d->sb.ok[i] = true;
			d->sb.len[i] = sizeof(zero);
			memcpy(d->sb.v[i], &zero, sizeof(zero));
		}
	d->sb_read = true;
}

static size_t opt_defaults_size(void)
{
	return sizeof(struct opt_defaults);
}

/* Copy onto `to` each option of `from` (the child's socket) that the child
 * set: one that differs from the host's default and from the sandbox's.
 * (A child that sets an option to exactly the sandbox's default, where
 * the host's differs, cannot be told apart from one that left it: the
 * host's stays.) */
static void copy_options(struct opt_defaults *d, int sandbox_tcp, int from, int to, int domain)
{
	unsigned char a[64];

	if (!d->sb_read)
		read_sandbox_defaults(d, sandbox_tcp);
	for (size_t i = 0; i < ARRAY_LEN(copied_opts); i++) {
		socklen_t la = sizeof(a);
		if (!d->host.ok[i] || (copied_opts[i].level == IPPROTO_IPV6 && domain != AF_INET6))
			continue;
		if (getsockopt(from, copied_opts[i].level, copied_opts[i].name, a, &la) < 0)
			continue;
		if (la == d->host.len[i] && memcmp(a, d->host.v[i], la) == 0)
			continue;
		if (d->sb.ok[i] && la == d->sb.len[i] && memcmp(a, d->sb.v[i], la) == 0)
			continue;
		socklen_t set_len = la;
		if (copied_opts[i].name == TCP_CONGESTION && copied_opts[i].level == IPPROTO_TCP)
			set_len = (socklen_t)strnlen((const char *)a, la);
		(void)setsockopt(to, copied_opts[i].level, copied_opts[i].name, a, set_len);
	}
	/* The buffer sizes only when the child changed them: setting them
	 * turns the kernel's autotuning off.  getsockopt reports twice what
	 * setsockopt was given. */
	for (size_t i = 0; i < ARRAY_LEN(buf_opts); i++) {
		int va = 0;
		socklen_t la = sizeof(va);
		if (getsockopt(from, SOL_SOCKET, buf_opts[i], &va, &la) == 0 && va != d->host.bufs[i] &&
		    va != d->sb.bufs[i]) {
			int half = va / 2;
			(void)setsockopt(to, SOL_SOCKET, buf_opts[i], &half, sizeof(half));
		}
	}
}

static int set_blocking(int fd)
{
	int fl = fcntl(fd, F_GETFL);
	return fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0 ? -errno : 0;
}

/* An allowed destination through the host's proxy: a tunnel asked for
 * (CONNECT address:port) on a socket of the supervisor's, installed once
 * the proxy said 200.  Always pending, whatever the child's O_NONBLOCK:
 * the socket cannot be handed over before the tunnel stands, and the
 * notification is the only way to hand it over. */
static int connect_upstream(struct netfence *nf, struct call *c, const struct upstream_proxy *up, const char *host,
			    uint16_t port, bool nonblock)
{
	struct pending *p = pending_slot(nf);
	struct upstream_conn *u;
	int rc;
	int64_t limit = moat_mono_ns() + (int64_t)NETFENCE_UPSTREAM_MS * 1000000LL, t;

	if (!p)
		return -EAGAIN;
	u = moat_xcalloc(1, sizeof(*u));
	rc = upstream_start(u, up, host, port);
	if (rc < 0) {
		free(u);
		return rc;
	}
	copy_options(up->addr.ss_family == AF_INET6 ? nf->defaults6 : nf->defaults4, nf->dns_tcp, c->sock, u->fd,
		     up->addr.ss_family);
	t = sndtimeo_deadline(c->sock);
	*p = (struct pending){.used = true,
			      .inject = true,
			      .id = c->id,
			      .fd = -1,
			      .target_fd = c->target_fd,
			      .fdflags = child_fdflags(nf, c->tid, c->target_fd),
			      .deadline = t && t < limit ? t : limit,
			      .up = u,
			      .nonblock = nonblock};
	nf->st.forwarded++;
	nf->st.via_upstream++;
	return R_PENDING;
}

static int inet_addr_of(const struct sockaddr_storage *ss, size_t len, struct netfence_addr *a, uint16_t *port);

/* An allowed destination: a socket of the supervisor's, in the host's
 * namespace, connected without blocking and installed over the child's fd
 * number once connected (or at once for a non-blocking child socket). */
static int connect_forward(struct netfence *nf, struct call *c, const struct sockaddr *sa, socklen_t len)
{
	int fl = fcntl(c->sock, F_GETFL), rc;
	cleanup_close int h = -1;
	unsigned fdflags;

	if (fl < 0)
		return -errno;
	if (nf->rules.upstream) {
		char host[INET6_ADDRSTRLEN];
		struct netfence_addr a;
		uint16_t port;
		const struct upstream_proxy *up;

		/* The address the rules checked: a v4-mapped one as IPv4, so
		 * that ::ffff:127.0.0.1 is the host's loopback (direct) as
		 * 127.0.0.1 is, and never "CONNECT [::ffff:127.0.0.1]" to the
		 * proxy, whose loopback that would be. */
		if ((rc = inet_addr_of((const struct sockaddr_storage *)(const void *)sa, len, &a, &port)) < 0)
			return rc;
		addr_normalize(&a);
		inet_ntop(a.family, a.family == AF_INET ? (const void *)&a.v4 : (const void *)&a.v6, host, sizeof(host));
		up = nf->rules.upstream(nf->rules.ctx, host, port);
		if (up)
			return connect_upstream(nf, c, up, host, port, fl & O_NONBLOCK);
	}
	h = socket(c->domain, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, IPPROTO_TCP);
	if (h < 0)
		return -errno;
	copy_options(c->domain == AF_INET6 ? nf->defaults6 : nf->defaults4, nf->dns_tcp, c->sock, h, c->domain);
	rc = connect(h, sa, len);
	if (rc < 0 && errno != EINPROGRESS)
		return -errno; /* the child's socket stays as it was */
	/* A near destination (the host's loopback above all) has usually
	 * answered by the time connect returns: a blocking caller then gets
	 * its socket now rather than after another pass of the poll loop.
	 * Writable without an error or hang-up is connected; anything else
	 * (still connecting, refused) waits as pending, which reads SO_ERROR. */
	if (rc < 0 && !(fl & O_NONBLOCK)) {
		struct pollfd p = {.fd = h, .events = POLLOUT};
		if (poll(&p, 1, 0) == 1 && p.revents == POLLOUT)
			rc = 0;
	}
	fdflags = child_fdflags(nf, c->tid, c->target_fd);
	nf->st.forwarded++;
	/* Installed now, the answer follows at once: the child's socket is
	 * closed after it (close_after_answer), not before it. */
	if ((fl & O_NONBLOCK) || rc == 0) {
		close_fd(&nf->close_after_answer);
		nf->close_after_answer = c->sock;
		c->sock = -1;
	}
	if (fl & O_NONBLOCK) {
		int e = install_fd(nf, c->id, h, c->target_fd, fdflags, c->tid);
		return e < 0 ? e : rc == 0 ? 0 : -EINPROGRESS;
	}
	if (rc == 0) {
		int e = set_blocking(h);
		if (e == 0)
			e = install_fd(nf, c->id, h, c->target_fd, fdflags, c->tid);
		return e;
	}
	return add_pending(nf, c, &h, true, fdflags);
}

/* TCP_INFO's state of a socket of another namespace: only an unconnected
 * one (TCP_CLOSE) may be connected again, as the kernel itself says. */
static int foreign_state(int sock)
{
	struct tcp_info ti;
	socklen_t l = sizeof(ti);

	memset(&ti, 0, sizeof(ti));
	if (getsockopt(sock, IPPROTO_TCP, TCP_INFO, &ti, &l) < 0)
		return -errno;
	if (ti.tcpi_state == TCP_CLOSE)
		return 0;
	return ti.tcpi_state == TCP_SYN_SENT ? -EALREADY : -EISCONN;
}

static int read_child(pid_t tid, uint64_t addr, void *buf, size_t len)
{
	struct iovec local = {.iov_base = buf, .iov_len = len};
	struct iovec remote = {.iov_base = (void *)(uintptr_t)addr, .iov_len = len};
	ssize_t n = process_vm_readv(tid, &local, 1, &remote, 1, 0);

	if (n < 0)
		return errno == ESRCH ? R_DROP : -EFAULT;
	return (size_t)n == len ? 0 : -EFAULT;
}

/* The address and port of an AF_INET or AF_INET6 sockaddr of len bytes. */
static int inet_addr_of(const struct sockaddr_storage *ss, size_t len, struct netfence_addr *a, uint16_t *port)
{
	struct sockaddr_in in;
	struct sockaddr_in6 in6;

	if (ss->ss_family == AF_INET) {
		if (len < sizeof(in))
			return -EINVAL;
		memcpy(&in, ss, sizeof(in));
		*a = (struct netfence_addr){.family = AF_INET, .v4 = in.sin_addr};
		*port = ntohs(in.sin_port);
		return 0;
	}
	if (len < sizeof(in6))
		return -EINVAL;
	memcpy(&in6, ss, sizeof(in6));
	*a = (struct netfence_addr){.family = AF_INET6, .v6 = in6.sin6_addr};
	*port = ntohs(in6.sin6_port);
	return 0;
}

/* Tell the rules what was decided for a connect (their log, their
 * events): the address, port and the name it was handed out for. */
static void connect_event(struct netfence *nf, enum netfence_event_kind kind, const struct netfence_addr *a,
			  uint16_t port, int protocol, const char *name)
{
	struct netfence_event ev = {.kind = kind, .addr = a, .port = port, .protocol = protocol, .name = name};

	if (nf->rules.event)
		nf->rules.event(nf->rules.ctx, &ev);
}

/* connect(fd, addr, len) and bind(fd, addr, len): the address out of the
 * caller, then its socket.  <= 0 or R_DROP: the answer; else 0. */
static int take_call_addr(struct netfence *nf, struct call *c, const struct seccomp_data *d,
			  struct sockaddr_storage *ss, int *len_out)
{
	int len = (int)(uint32_t)d->args[2], rc;

	/* As move_addr_to_kernel() checks. */
	if (len < 0 || (size_t)len > sizeof(*ss))
		return -EINVAL;
	if ((size_t)len < sizeof(sa_family_t))
		return -EINVAL;
	memset(ss, 0, sizeof(*ss));
	if ((rc = read_child(c->tid, d->args[1], ss, (size_t)len)) != 0)
		return rc;
	if ((rc = take_socket(nf, c)) != 0)
		return rc;
	/* The thread may have left the call (a kill) and its id been reused
	 * since the notification: what was read would be someone else's. */
	if (!id_valid(nf, c->id))
		return R_DROP;
	*len_out = len;
	return 0;
}

static int decide_connect(struct netfence *nf, struct call *c, const struct seccomp_data *d)
{
	struct sockaddr_storage ss;
	int len;
	struct netfence_addr a = {0};
	uint16_t port;
	int rc;

	if ((rc = take_call_addr(nf, c, d, &ss, &len)) != 0)
		return rc;

	if (ss.ss_family != AF_INET && ss.ss_family != AF_INET6) {
		if (c->foreign) {
			nf->st.refused++;
			return ss.ss_family == AF_UNSPEC ? -EPERM : -EAFNOSUPPORT;
		}
		if (ss.ss_family == AF_UNSPEC) { /* a disconnect: no address to re-read */
			nf->st.local++;
			return connect(c->sock, (struct sockaddr *)&ss, (socklen_t)len) < 0 ? -errno : 0;
		}
		/* AF_UNIX and the rest, on a sandbox socket: the network
		 * namespace is the boundary (top of the file). */
		nf->st.continued++;
		return R_CONTINUE;
	}
	if ((rc = inet_addr_of(&ss, (size_t)len, &a, &port)) < 0)
		return rc;
	addr_normalize(&a);
	bool loop = netfence_addr_is_loopback(&a);
	bool tcp = c->type == SOCK_STREAM && c->protocol == IPPROTO_TCP;

	const char *name = name_for(nf, &a);

	if (c->foreign) {
		if (!tcp)
			return -EAFNOSUPPORT; /* the fence installs only TCP sockets */
		if ((rc = foreign_state(c->sock)) != 0)
			return rc;
		if (!nf->rules.connect_ok(nf->rules.ctx, &a, port, name)) {
			nf->st.refused++;
			connect_event(nf, NETFENCE_EV_REFUSED, &a, port, c->protocol, name);
			return -ECONNREFUSED; /* not even to its own lo: that socket is not there */
		}
		connect_event(nf, NETFENCE_EV_ALLOWED, &a, port, c->protocol, name);
		return connect_forward(nf, c, (struct sockaddr *)&ss, (socklen_t)len);
	}
	if (!tcp) {
		if (loop)
			return connect_local(nf, c, (struct sockaddr *)&ss, (socklen_t)len);
		nf->st.refused++;
		connect_event(nf, NETFENCE_EV_REFUSED, &a, port, c->protocol, name);
		return -ENETUNREACH;
	}
	if (nf->rules.connect_ok(nf->rules.ctx, &a, port, name)) {
		connect_event(nf, NETFENCE_EV_ALLOWED, &a, port, c->protocol, name);
		return connect_forward(nf, c, (struct sockaddr *)&ss, (socklen_t)len);
	}
	if (loop) {
		/* Not the host's loopback: the sandbox's own, where a service of
		 * the host (a database, a model server) is not. */
		connect_event(nf, NETFENCE_EV_LOCAL, &a, port, c->protocol, name);
		return connect_local(nf, c, (struct sockaddr *)&ss, (socklen_t)len);
	}
	nf->st.refused++;
	connect_event(nf, NETFENCE_EV_REFUSED, &a, port, c->protocol, name);
	return -ECONNREFUSED;
}

static int decide_listen(struct netfence *nf, struct call *c, const struct seccomp_data *d)
{
	int rc = take_socket(nf, c);

	if (rc != 0)
		return rc;
	if (!id_valid(nf, c->id))
		return R_DROP;
	if (c->foreign) {
		nf->st.refused++;
		return -EPERM;
	}
	nf->st.local++;
	/* Made here, not CONTINUE'd: the fd could be swapped for a host
	 * socket in between, whose listen would open a port on the host. */
	return listen(c->sock, (int)(uint32_t)d->args[1]) < 0 ? -errno : 0;
}

/* The ports below it need CAP_NET_BIND_SERVICE, which the command never
 * has (launch/child.c drops every capability) and moat, owner of the
 * sandbox's user namespace, does: moat's bind must refuse them as the
 * kernel would refuse the command.  The sandbox's network namespace is a
 * new one, where net.ipv4.ip_unprivileged_port_start starts at 1024, and
 * the command cannot change it (CAP_NET_ADMIN). */
#define UNPRIVILEGED_PORT_START 1024

/* The port a bind asks for, when the kernel would check it: the socket's
 * own family (or AF_UNSPEC on an AF_INET socket, which the kernel takes as
 * AF_INET) and an address long enough; 0 otherwise (the kernel's bind
 * then says what is wrong). */
static uint16_t bind_port(const struct call *c, const struct sockaddr_storage *ss, int len)
{
	if (c->domain == AF_INET && (ss->ss_family == AF_INET || ss->ss_family == AF_UNSPEC) &&
	    (size_t)len >= sizeof(struct sockaddr_in))
		return ntohs(((const struct sockaddr_in *)ss)->sin_port);
	if (c->domain == AF_INET6 && ss->ss_family == AF_INET6 && (size_t)len >= sizeof(struct sockaddr_in6))
		return ntohs(((const struct sockaddr_in6 *)ss)->sin6_port);
	return 0;
}

/* bind(2).  The command's servers on its own loopback (a test server it
 * talks to itself) bind there: the namespace is the sandbox's alone, so
 * such a port is reachable from inside only.  Landlock refuses every TCP
 * bind the command makes itself, since a host socket swapped under the
 * number would be bound in the host's namespace; so moat binds a TCP
 * socket of the sandbox's namespace itself, on the caller's file, as it
 * listens.  A socket of the host's (one the fence installed) is refused.
 * Other sockets (UDP, unix) are CONTINUE'd: Landlock does not govern their
 * bind, and a host TCP socket swapped in meanwhile meets Landlock's. */
static int decide_bind(struct netfence *nf, struct call *c, const struct seccomp_data *d)
{
	struct sockaddr_storage ss;
	int len, rc;
	uint16_t port;

	if ((rc = take_call_addr(nf, c, d, &ss, &len)) != 0)
		return rc;
	if (c->foreign) {
		nf->st.refused++;
		return -EPERM;
	}
	if ((c->domain != AF_INET && c->domain != AF_INET6) || c->type != SOCK_STREAM) {
		nf->st.continued++;
		return R_CONTINUE;
	}
	port = bind_port(c, &ss, len);
	if (port != 0 && port < UNPRIVILEGED_PORT_START)
		return -EACCES;
	nf->st.local++;
	return bind(c->sock, (struct sockaddr *)&ss, (socklen_t)len) < 0 ? -errno : 0;
}

static int handle_notification(struct netfence *nf, struct moat_error *err)
{
	struct call c = {.sock = -1};
	int rc;

	memset(nf->req, 0, nf->req_size);
	if (ioctl(nf->listener, SECCOMP_IOCTL_NOTIF_RECV, nf->req) < 0) {
		/* ENOENT: the caller was killed between poll and here. */
		if (errno == EINTR || errno == ENOENT || errno == EAGAIN)
			return 0;
		return moat_error_set(err, MOAT_E_SYSTEM, errno, "netfence: SECCOMP_IOCTL_NOTIF_RECV");
	}
	c.id = nf->req->id;
	c.tid = (pid_t)nf->req->pid;
	c.target_fd = (int)(uint32_t)nf->req->data.args[0];
	if (nf->req->data.nr == __NR_connect)
		rc = decide_connect(nf, &c, &nf->req->data);
	else if (nf->req->data.nr == __NR_listen)
		rc = decide_listen(nf, &c, &nf->req->data);
	else if (nf->req->data.nr == __NR_bind)
		rc = decide_bind(nf, &c, &nf->req->data);
	else
		rc = -ENOSYS; /* not this filter's: cannot happen */
	if (c.sock >= 0)
		close(c.sock);
	if (rc == R_CONTINUE)
		answer(nf, c.id, 0, SECCOMP_USER_NOTIF_FLAG_CONTINUE);
	else if (rc <= 0)
		answer(nf, c.id, rc, 0);
	return 0;
}

/* A tunnel through the host's proxy moved (or its time ran out): installed
 * once the proxy said 200. */
static void pending_upstream(struct netfence *nf, struct pending *p, bool timed_out)
{
	int rc = timed_out ? -ETIMEDOUT : upstream_step(p->up);

	if (rc == 0)
		return; /* not yet */
	if (rc > 0) {
		p->fd = upstream_take_fd(p->up);
		rc = set_blocking(p->fd);
		if (rc == 0)
			rc = install_fd(nf, p->id, p->fd, p->target_fd, p->fdflags, 0);
		/* Connected: a non-blocking caller hears what the kernel would
		 * have said, and finds the socket writable at once. */
		if (rc == 0 && p->nonblock)
			rc = -EINPROGRESS;
	} else if (rc != -ETIMEDOUT && rc != -ECONNREFUSED) {
		rc = -ECONNREFUSED; /* the proxy failed us: for the caller, the destination did */
	}
	upstream_refusal_note(&nf->st.upstream_refused, p->up);
	answer(nf, p->id, rc, 0);
	pending_drop(p);
}

/* A pending connect finished (or its SO_SNDTIMEO ran out). */
static void pending_done(struct netfence *nf, struct pending *p, bool timed_out)
{
	int e = 0, rc;
	socklen_t l = sizeof(e);

	if (p->up) {
		pending_upstream(nf, p, timed_out);
		return;
	}

	if (!timed_out && getsockopt(p->fd, SOL_SOCKET, SO_ERROR, &e, &l) < 0)
		e = errno;
	if (!p->inject)
		rc = timed_out ? -EINPROGRESS : -e;
	else if (e != 0)
		rc = -e; /* failed: the child keeps its own socket */
	else {
		/* Connected, or still connecting when the timeout came: as the
		 * kernel, the socket is the child's now (EINPROGRESS). */
		rc = set_blocking(p->fd);
		if (rc == 0)
			rc = install_fd(nf, p->id, p->fd, p->target_fd, p->fdflags, 0);
		if (rc == 0 && timed_out)
			rc = -EINPROGRESS;
	}
	answer(nf, p->id, rc, 0);
	pending_drop(p);
}

/* ---- DNS ---- */

static void put16(unsigned char *p, unsigned v)
{
	p[0] = (unsigned char)(v >> 8);
	p[1] = (unsigned char)v;
}

static unsigned get16(const unsigned char *p)
{
	return (unsigned)p[0] << 8 | p[1];
}

enum { RC_OK = 0, RC_FORMERR = 1, RC_SERVFAIL = 2, RC_NXDOMAIN = 3, RC_NOTIMP = 4, RC_REFUSED = 5 };

/* The reply to the query q[0..n) in out (at least 12 + 260 + answers;
 * cap bounds it, setting TC when answers do not fit); 0: no reply (not a
 * query at all, or *deferred: the rules are still looking the name up --
 * ask again after netfence_dns_ready; `expired` answers such a query
 * SERVFAIL instead).  The query is hostile input: every read is bounded by
 * n, names by 255 bytes, labels by 63, no compression in the question. */
static size_t dns_reply(struct netfence *nf, const unsigned char *q, size_t n, unsigned char *out, size_t cap,
			bool expired, bool *deferred)
{
	char name[NETFENCE_NAME_MAX + 1];
	struct netfence_addr answer_addrs[NETFENCE_MAX_ANSWERS];
	size_t n_answer_addrs = 0;
	size_t nlen = 0, off = 12, qend, o;
	bool odd = false;
	unsigned flags, qtype, qclass, rcode = RC_OK, ancount = 0, tc = 0;

	*deferred = false; /* every way out below but the one that defers */
	if (n < 12 || cap < 12 || (q[2] & 0x80)) /* too short, or a response: never answer those */
		return 0;
	flags = get16(q + 2);
	memcpy(out, q, 2); /* the id */
	memset(out + 2, 0, 10);
	/* QR, the opcode, AA (the fence is the authority on what exists),
	 * RD as asked, RA. */
	unsigned oflags = 0x8000 | (flags & 0x7800) | 0x0400 | (flags & 0x0100) | 0x0080;
	if (((flags >> 11) & 0xf) != 0) {
		put16(out + 2, oflags | RC_NOTIMP);
		return 12;
	}
	if (get16(q + 4) != 1) {
		put16(out + 2, oflags | RC_FORMERR);
		return 12;
	}
	for (;;) {
		if (off >= n)
			goto formerr;
		unsigned l = q[off];
		if (l == 0)
			break;
		if (l > 63 || off + 1 + l > n || nlen + (nlen ? 1 : 0) + l > NETFENCE_NAME_MAX)
			goto formerr;
		if (nlen)
			name[nlen++] = '.';
		for (unsigned i = 0; i < l; i++) {
			unsigned char ch = q[off + 1 + i];
			if (ch >= 'A' && ch <= 'Z')
				ch = (unsigned char)(ch - 'A' + 'a');
			if (!((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '-' || ch == '_'))
				odd = true;
			name[nlen++] = (char)ch;
		}
		off += 1 + l;
	}
	name[nlen] = '\0';
	qend = off + 1 + 4;
	if (qend > n || qend - 12 > cap - 12)
		goto formerr;
	qtype = get16(q + off + 1);
	qclass = get16(q + off + 3);
	memcpy(out + 12, q + 12, qend - 12);
	put16(out + 4, 1);
	o = qend;

	if (qclass != 1) /* IN only */
		rcode = RC_REFUSED;
	else if (odd || nlen == 0 || netfence_name_is_number(name, NULL)) {
		/* "127.1" or "0x7f.1" is no host name (no top-level domain
		 * looks so) and the rules' resolver would read it as the
		 * address: NXDOMAIN, as DNS itself answers it. */
		rcode = RC_NXDOMAIN;
	} else {
		struct netfence_addr *addrs = answer_addrs;
		bool addr_type = qtype == NETFENCE_QTYPE_A || qtype == NETFENCE_QTYPE_AAAA;
		int r = nf->rules.resolve(nf->rules.ctx, name, (int)qtype, addr_type ? addrs : NULL,
					  addr_type ? NETFENCE_MAX_ANSWERS : 0);
		if (r == NETFENCE_RESOLVE_PENDING && !expired) {
			*deferred = true;
			return 0;
		}
		if (r == NETFENCE_RESOLVE_PENDING || r == NETFENCE_RESOLVE_FAILED)
			rcode = RC_SERVFAIL;
		else if (r < 0)
			rcode = RC_NXDOMAIN;
		n_answer_addrs = r > 0 ? (size_t)r : 0;
		for (int i = 0; addr_type && i < r && i < NETFENCE_MAX_ANSWERS; i++) {
			int fam = qtype == NETFENCE_QTYPE_A ? AF_INET : AF_INET6;
			size_t rdlen = fam == AF_INET ? 4 : 16;
			if (addrs[i].family != fam)
				continue;
			if (o + 12 + rdlen > cap) {
				tc = 0x0200;
				break;
			}
			put16(out + o, 0xc00c); /* the name of the question */
			put16(out + o + 2, qtype);
			put16(out + o + 4, 1);
			put16(out + o + 6, (NETFENCE_DNS_TTL >> 16) & 0xffff);
			put16(out + o + 8, NETFENCE_DNS_TTL & 0xffff);
			put16(out + o + 10, (unsigned)rdlen);
			memcpy(out + o + 12, fam == AF_INET ? (const void *)&addrs[i].v4 : (const void *)&addrs[i].v6,
			       rdlen);
			o += 12 + rdlen;
			ancount++;
			struct netfence_addr norm = addrs[i];
			addr_normalize(&norm);
			name_remember(nf, &norm, name);
		}
	}
	nf->st.dns_queries++;
	if (rcode == RC_NXDOMAIN)
		nf->st.dns_denied++;
	if (nf->rules.event) {
		/* The name is the command's bytes: only printable ASCII goes to
		 * the rules' log. */
		for (size_t i = 0; odd && i < nlen; i++)
			if (name[i] < '!' || name[i] > '~')
				name[i] = '?';
		struct netfence_event ev = {.kind = rcode == RC_NXDOMAIN ? NETFENCE_EV_NAME_DENIED
						    : rcode == RC_SERVFAIL ? NETFENCE_EV_NAME_FAILED
									   : NETFENCE_EV_NAME_ANSWERED,
					    .name = name,
					    .qtype = (int)qtype,
					    .addrs = answer_addrs,
					    .n_addrs = n_answer_addrs};
		nf->rules.event(nf->rules.ctx, &ev);
	}
	put16(out + 2, oflags | tc | rcode);
	put16(out + 6, ancount);
	return o;
formerr:
	put16(out + 2, oflags | RC_FORMERR);
	return 12;
}

/* Keep a query whose name the rules are still looking up; false when
 * there is no room (the caller answers SERVFAIL: the resolver may retry). */
static bool defer_query(struct netfence *nf, const unsigned char *q, size_t n, const struct sockaddr_storage *src,
			socklen_t sl, int client)
{
	struct dns_deferred *d = NULL;

	for (size_t i = 0; i < ARRAY_LEN(nf->deferred) && !d; i++)
		if (!nf->deferred[i].used)
			d = &nf->deferred[i];
	if (!d || n > sizeof(d->q))
		return false;
	d->used = true;
	d->client = client;
	if (client >= 0) {
		d->client_gen = nf->cli[client].gen;
		nf->cli[client].deadline = moat_mono_ns() + DNS_DEFER_NS + DNS_IDLE_NS;
	}
	if (src)
		memcpy(&d->src, src, sl);
	d->sl = sl;
	memcpy(d->q, q, n);
	d->len = n;
	d->deadline = moat_mono_ns() + DNS_DEFER_NS;
	return true;
}

static void udp_send(struct netfence *nf, const unsigned char *r, size_t m, const struct sockaddr_storage *src,
		     socklen_t sl)
{
	(void)sendto(nf->dns_udp, r, m, MSG_DONTWAIT | MSG_NOSIGNAL, (const struct sockaddr *)src, sl);
}

/* A reply is small and the socket fresh: it fits its buffer, or the client
 * is not reading and loses the connection.  r has 2 bytes free in front. */
static bool tcp_send(struct dns_client *cl, unsigned char *r, size_t m)
{
	put16(r, (unsigned)m);
	return send(cl->fd, r, m + 2, MSG_DONTWAIT | MSG_NOSIGNAL) == (ssize_t)(m + 2);
}

static void handle_udp(struct netfence *nf)
{
	unsigned char q[DNS_UDP_MAX * 3], r[DNS_UDP_MAX];

	/* Bounded: a flood must not starve the connects. */
	for (int k = 0; k < 32; k++) {
		struct sockaddr_storage src;
		socklen_t sl = sizeof(src);
		bool deferred;
		ssize_t n = recvfrom(nf->dns_udp, q, sizeof(q), MSG_DONTWAIT, (struct sockaddr *)&src, &sl);
		if (n < 0)
			return;
		size_t m = dns_reply(nf, q, (size_t)n, r, sizeof(r), false, &deferred);
		if (deferred && !defer_query(nf, q, (size_t)n, &src, sl, -1))
			m = dns_reply(nf, q, (size_t)n, r, sizeof(r), true, &deferred);
		if (m)
			udp_send(nf, r, m, &src, sl);
	}
}

static void handle_accept(struct netfence *nf)
{
	for (int k = 0; k < 8; k++) {
		int fd = accept4(nf->dns_tcp, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		struct dns_client *cl = NULL;

		if (fd < 0)
			return;
		for (size_t i = 0; i < ARRAY_LEN(nf->cli) && !cl; i++)
			if (nf->cli[i].fd < 0)
				cl = &nf->cli[i];
		if (!cl) { /* full: the resolver retries */
			close(fd);
			continue;
		}
		cl->fd = fd;
		cl->gen++;
		cl->len = 0;
		cl->deadline = moat_mono_ns() + DNS_IDLE_NS;
	}
}

/* DNS over TCP: a 2-byte length, then the message; several per
 * connection.  Reads never go past the current message. */
static void handle_client(struct netfence *nf, struct dns_client *cl)
{
	unsigned char r[2 + 12 + 260 + NETFENCE_MAX_ANSWERS * 28];

	for (int k = 0; k < 8; k++) {
		size_t need = cl->len < 2 ? 2 : 2 + get16(cl->buf);
		if (cl->len >= 2 && (need == 2 || need > sizeof(cl->buf)))
			goto drop;
		ssize_t n = read(cl->fd, cl->buf + cl->len, need - cl->len);
		if (n == 0)
			goto drop;
		if (n < 0)
			return; /* EAGAIN: more later */
		cl->len += (size_t)n;
		cl->deadline = moat_mono_ns() + DNS_IDLE_NS;
		if (cl->len < 2 || cl->len < 2 + (size_t)get16(cl->buf))
			continue;
		bool deferred;
		size_t m = dns_reply(nf, cl->buf + 2, cl->len - 2, r + 2, sizeof(r) - 2, false, &deferred);
		if (deferred && defer_query(nf, cl->buf + 2, cl->len - 2, NULL, 0, (int)(cl - nf->cli))) {
			cl->len = 0;
			continue;
		}
		if (deferred)
			m = dns_reply(nf, cl->buf + 2, cl->len - 2, r + 2, sizeof(r) - 2, true, &deferred);
		cl->len = 0;
		if (!m || !tcp_send(cl, r, m))
			goto drop;
	}
	return;
drop:
	close_fd(&cl->fd);
}

/* Answer the deferred queries the rules can answer now (all of them when
 * `expire`: those past their deadline get SERVFAIL). */
static void answer_deferred(struct netfence *nf, bool expire)
{
	unsigned char r[2 + 12 + 260 + NETFENCE_MAX_ANSWERS * 28];
	int64_t now = expire ? moat_mono_ns() : 0;

	for (size_t i = 0; i < ARRAY_LEN(nf->deferred); i++) {
		struct dns_deferred *d = &nf->deferred[i];
		bool deferred;
		size_t m;

		if (!d->used || (expire && d->deadline > now))
			continue;
		if (d->client < 0) {
			m = dns_reply(nf, d->q, d->len, r, DNS_UDP_MAX, expire, &deferred);
			if (deferred)
				continue;
			if (m)
				udp_send(nf, r, m, &d->src, d->sl);
		} else {
			struct dns_client *cl = &nf->cli[d->client];
			m = dns_reply(nf, d->q, d->len, r + 2, sizeof(r) - 2, expire, &deferred);
			if (deferred)
				continue;
			/* The client may have gone, its slot taken by another. */
			if (m && cl->fd >= 0 && cl->gen == d->client_gen && !tcp_send(cl, r, m))
				close_fd(&cl->fd);
		}
		d->used = false;
	}
}

void netfence_dns_ready(struct netfence *nf)
{
	answer_deferred(nf, false);
}

/* ---- the poll loop ---- */

size_t netfence_pollfds(struct netfence *nf, struct pollfd *fds, size_t max)
{
	size_t n = 0;

#define ADD(k, i, f, ev)                                                                                               \
	do {                                                                                                           \
		if (n < max && n < ARRAY_LEN(nf->slots)) {                                                             \
			nf->slots[n] = (struct slot){.kind = (k), .idx = (unsigned)(i), .fd = (f)};                    \
			fds[n++] = (struct pollfd){.fd = (f), .events = (ev)};                                         \
		}                                                                                                      \
	} while (0)
	if (!nf->listener_gone)
		ADD(SLOT_LISTENER, 0, nf->listener, POLLIN);
	ADD(SLOT_UDP, 0, nf->dns_udp, POLLIN);
	ADD(SLOT_TCP, 0, nf->dns_tcp, POLLIN);
	for (size_t i = 0; i < ARRAY_LEN(nf->pend); i++)
		if (nf->pend[i].used)
			ADD(SLOT_PENDING, i, pending_fd(&nf->pend[i]),
			    nf->pend[i].up ? upstream_events(nf->pend[i].up) : POLLOUT);
	for (size_t i = 0; i < ARRAY_LEN(nf->cli); i++)
		if (nf->cli[i].fd >= 0)
			ADD(SLOT_CLIENT, i, nf->cli[i].fd, POLLIN);
#undef ADD
	nf->n_slots = n;
	return n;
}

#define SWEEP_NS 1000000000LL

int netfence_timeout_ms(const struct netfence *nf)
{
	int64_t next = INT64_MAX;

	for (size_t i = 0; i < ARRAY_LEN(nf->pend); i++)
		if (nf->pend[i].used) {
			int64_t t = nf->last_sweep + SWEEP_NS;
			if (nf->pend[i].deadline && nf->pend[i].deadline < t)
				t = nf->pend[i].deadline;
			if (t < next)
				next = t;
		}
	for (size_t i = 0; i < ARRAY_LEN(nf->cli); i++)
		if (nf->cli[i].fd >= 0 && nf->cli[i].deadline < next)
			next = nf->cli[i].deadline;
	for (size_t i = 0; i < ARRAY_LEN(nf->deferred); i++)
		if (nf->deferred[i].used && nf->deferred[i].deadline < next)
			next = nf->deferred[i].deadline;
	return moat_poll_ms_until(next);
}

static void handle_timeouts(struct netfence *nf)
{
	int64_t now = moat_mono_ns();
	bool sweep = now - nf->last_sweep >= SWEEP_NS;

	for (size_t i = 0; i < ARRAY_LEN(nf->pend); i++) {
		struct pending *p = &nf->pend[i];
		if (!p->used)
			continue;
		/* A caller killed while waiting: its connect is no one's. */
		if (sweep && !id_valid(nf, p->id))
			pending_drop(p);
		else if (p->deadline && p->deadline <= now)
			pending_done(nf, p, true);
	}
	if (sweep)
		nf->last_sweep = now;
	for (size_t i = 0; i < ARRAY_LEN(nf->cli); i++)
		if (nf->cli[i].fd >= 0 && nf->cli[i].deadline <= now)
			close_fd(&nf->cli[i].fd);
	answer_deferred(nf, true);
}

int netfence_handle(struct netfence *nf, const struct pollfd *fds, size_t n, struct moat_error *err)
{
	bool hup = false;

	for (size_t i = 0; i < n && i < nf->n_slots; i++) {
		const struct slot *s = &nf->slots[i];
		short rev = fds[i].revents;

		if (!rev || fds[i].fd != s->fd)
			continue;
		switch (s->kind) {
		case SLOT_LISTENER:
			if (rev & POLLIN) {
				if (handle_notification(nf, err) < 0)
					return -1;
			} else if (rev & (POLLHUP | POLLERR | POLLNVAL))
				hup = true;
			break;
		case SLOT_UDP:
			handle_udp(nf);
			break;
		case SLOT_TCP:
			handle_accept(nf);
			break;
		case SLOT_PENDING:
			/* The slot may have been reused since pollfds: the fd check
			 * above holds only while the entry is the same one. */
			if (nf->pend[s->idx].used && pending_fd(&nf->pend[s->idx]) == s->fd)
				pending_done(nf, &nf->pend[s->idx], false);
			break;
		case SLOT_CLIENT:
			if (nf->cli[s->idx].fd == s->fd)
				handle_client(nf, &nf->cli[s->idx]);
			break;
		}
	}
	handle_timeouts(nf);
	if (hup) {
		nf->listener_gone = true;
		for (size_t i = 0; i < ARRAY_LEN(nf->pend); i++)
			if (nf->pend[i].used)
				pending_drop(&nf->pend[i]);
	}
	return nf->listener_gone ? 1 : 0;
}
