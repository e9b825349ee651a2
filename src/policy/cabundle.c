#include "policy/cabundle.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/cleanup.h"
#include "util/err.h"
#include "util/file.h"
#include "util/mem.h"
#include "util/path.h"

/* The line without its leading and trailing blanks (a CR included). */
static void trim(const char **s, size_t *n)
{
	while (*n && isspace((unsigned char)(*s)[*n - 1]))
		(*n)--;
	while (*n && isspace((unsigned char)**s))
		(*s)++, (*n)--;
}

/* An underline: only '=' or '-' ("=====" below a title of curl's). */
static bool rule_line(const char *s, size_t n)
{
	trim(&s, &n);
	if (!n)
		return false;
	for (size_t i = 0; i < n; i++)
		if (s[i] != '=' && s[i] != '-')
			return false;
	return true;
}

static bool starts(const char *s, size_t n, const char *with)
{
	size_t w = strlen(with);

	return n >= w && memcmp(s, with, w) == 0;
}

static bool token_char(char c)
{
	return isalnum((unsigned char)c) || c == '+' || c == '/' || c == '=' || c == '_' || c == '-';
}

/* A secret's shape: a run of CA_TOKEN_MIN or more characters of base64,
 * base64url or a token's alphabet with letters and digits mixed
 * (ghp_..., an AWS key, a JWT's parts, a key's base64).  What real bundles
 * write outside their certificates has none: names of CAs and words, a
 * serial's digits, fingerprints' hex pairs between ':', a URL's parts
 * between '.'.  A run of hex digits alone after "SHA256: " or "SHA1: "
 * (curl's header: "## SHA256: 456ff0...", the digest of certdata.txt) is
 * a digest, allowed. */
static bool token_in(const char *s, size_t n)
{
	for (size_t i = 0; i < n;) {
		size_t j = i, hex = 0;
		bool alpha = false, digit = false;

		while (j < n && token_char(s[j])) {
			alpha = alpha || isalpha((unsigned char)s[j]);
			digit = digit || isdigit((unsigned char)s[j]);
			hex += isxdigit((unsigned char)s[j]) != 0;
			j++;
		}
		if (j - i >= CA_TOKEN_MIN && alpha && digit &&
		    !(hex == j - i && (j - i == 40 || j - i == 64) &&
		      ((i >= 8 && memcmp(s + i - 8, "SHA256: ", 8) == 0) || (i >= 6 && memcmp(s + i - 6, "SHA1: ", 6) == 0))))
			return true;
		i = j + 1;
	}
	return false;
}

/* Blank, or a '#' comment (Mozilla's, certifi's "# Issuer: ...", RHEL's
 * "# LABEL", curl's "## ..." header) that carries no token. */
static bool comment_line(const char *s, size_t n)
{
	trim(&s, &n);
	return !n || (s[0] == '#' && !token_in(s, n));
}

/* A CA's name above its underline in curl's bundle ("GlobalSign Root CA"):
 * words, not a setting's '=' or ':', not a token, not a long line. */
static bool title_line(const char *s, size_t n)
{
	trim(&s, &n);
	return n && n <= CA_TITLE_MAX && s[0] != '#' && s[0] != '-' && !memchr(s, '=', n) && !memchr(s, ':', n) &&
	       !token_in(s, n);
}

/* A line of a certificate's body: base64 alone.  A token or a key's text
 * put between BEGIN and END CERTIFICATE is not one. */
static bool base64_line(const char *s, size_t n)
{
	trim(&s, &n);
	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char)s[i]) && s[i] != '+' && s[i] != '/' && s[i] != '=')
			return false;
	return true;
}

static bool begin_line(const char *s, size_t n)
{
	return starts(s, n, "-----BEGIN CERTIFICATE-----") || starts(s, n, "-----BEGIN TRUSTED CERTIFICATE-----");
}

static bool end_line(const char *s, size_t n)
{
	return starts(s, n, "-----END CERTIFICATE-----") || starts(s, n, "-----END TRUSTED CERTIFICATE-----");
}

/* Where the reading of a PEM bundle is: what the next line may be. */
enum pem_state {
	PEM_OUTSIDE, /* blank lines, comments, a title, a BEGIN */
	PEM_TITLED,  /* after a title: its underline */
	PEM_RULED,   /* after the underline: the BEGIN it names */
	PEM_IN_CERT, /* base64 to the END */
};

/* The state after the line `s`, or -1: the file is no bundle. */
static int pem_next(enum pem_state st, const char *s, size_t n)
{
	switch (st) {
	case PEM_TITLED:
		return rule_line(s, n) ? PEM_RULED : -1;
	case PEM_RULED:
		return begin_line(s, n) ? PEM_IN_CERT : -1;
	case PEM_IN_CERT:
		return end_line(s, n) ? PEM_OUTSIDE : base64_line(s, n) ? PEM_IN_CERT : -1;
	case PEM_OUTSIDE:
		break;
	}
	if (begin_line(s, n))
		return PEM_IN_CERT;
	if (comment_line(s, n))
		return PEM_OUTSIDE;
	return title_line(s, n) ? PEM_TITLED : -1;
}

/* PEM: the lines between BEGIN CERTIFICATE (or TRUSTED CERTIFICATE) and
 * its END are the certificate's, base64; outside them a bundle has blank
 * lines, '#' comments without a token, and a title ("GlobalSign Root CA")
 * only as curl's cacert.pem writes one: its underline on the next line,
 * and the BEGIN of the certificate it names on the line after.  A title was
 * once any line without '=' or ':' (a certificate and a bare token, an age
 * key or another PEM block passed), then any such line above an underline
 * (a token underlined, or a fake title and underline with anything after,
 * passed). */
static bool pem_bundle(const char *buf, size_t len)
{
	const char *p = buf, *end = buf + len;
	enum pem_state st = PEM_OUTSIDE;
	size_t certs = 0;

	if (memmem(buf, len, "PRIVATE KEY", 11))
		return false;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
		int next;

		if (memchr(p, '\0', n) || (next = pem_next(st, p, n)) < 0)
			return false;
		certs += st == PEM_IN_CERT && next == PEM_OUTSIDE;
		st = (enum pem_state)next;
		p = nl ? nl + 1 : end;
	}
	return certs > 0 && st == PEM_OUTSIDE;
}

/* One DER certificate: a SEQUENCE whose two-byte length is the file's,
 * opening with another SEQUENCE (tbsCertificate).  A DER private key
 * (PKCS#1, PKCS#8, SEC1) and a PKCS#12 file open with an INTEGER there
 * (their version), and are no certificate. */
static bool der_cert(const unsigned char *b, size_t len)
{
	return len >= 6 && b[0] == 0x30 && b[1] == 0x82 && (size_t)((b[2] << 8) | b[3]) + 4 == len && b[4] == 0x30;
}

/* Below /etc or /usr (by the real path of the object open at `fd`: a
 * link on the way may lead anywhere), which the profiles show already,
 * their secrets denied: nothing to read.  The distribution's bundle, which
 * a host's environment names in a dozen variables, is not read at every
 * start. */
static bool shown_by_profiles(int fd)
{
	char real[PATH_MAX];

	if (!path_of_fd(fd, real, sizeof(real)))
		return false;
	return (path_within(real, "/etc") && strcmp(real, "/etc") != 0) ||
	       (path_within(real, "/usr") && strcmp(real, "/usr") != 0);
}

/* Out of descriptors or memory (`e`, an errno), a look says nothing of
 * what `path` holds: not "no bundle", with its misleading note, but an
 * error naming the cause (docs/errors.md).  -1 when it is one (err set);
 * else 0: the path's own failure, no bundle. */
static int look_failed(int e, const char *path, struct moat_error *err)
{
	if (!moat_errno_out_of_resources(e))
		return 0;
	return moat_error_set(err, MOAT_E_SYSTEM, e, "checking the CA bundle %s", path);
}

/* The file open at `fd` (`path`), read whole: a bundle?  1 or 0, or -1
 * out of descriptors or memory (err set). */
static int fd_is_bundle(int fd, const char *path, struct moat_error *err)
{
	cleanup_free char *buf = NULL;
	struct stat st;
	size_t got = 0;

	if (fd < 0 || fstat(fd, &st) != 0)
		return look_failed(errno, path, err);
	if (!S_ISREG(st.st_mode) || st.st_size <= 0 || (unsigned long long)st.st_size > CA_BUNDLE_MAX)
		return 0;
	buf = malloc((size_t)st.st_size);
	if (!buf)
		return look_failed(ENOMEM, path, err);
	while (got < (size_t)st.st_size) {
		ssize_t r = read(fd, buf + got, (size_t)st.st_size - got);

		if (r < 0)
			return look_failed(errno, path, err);
		if (r == 0)
			return 0;
		got += (size_t)r;
	}
	return der_cert((const unsigned char *)buf, got) || pem_bundle(buf, got);
}

/* The object open at `fd` is what the grant will be bound to. */
static bool seen_as(int fd, struct ca_bundle_seen *seen)
{
	struct stat st;

	if (fstat(fd, &st) != 0)
		return false;
	seen->dev = st.st_dev;
	seen->ino = st.st_ino;
	seen->dir = S_ISDIR(st.st_mode);
	return true;
}

int ca_bundle_file_ok(const char *path, struct ca_bundle_seen *seen, struct moat_error *err)
{
	/* O_NONBLOCK: a FIFO named there does not hang moat's start. */
	cleanup_close int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);

	if (fd < 0 || !seen_as(fd, seen))
		return look_failed(errno, path, err);
	return shown_by_profiles(fd) ? 1 : fd_is_bundle(fd, path, err);
}

/* NAME.pem, .crt, .cer, .der; HHHHHHHH.N or HHHHHHHH.rN (c_rehash). */
static bool cert_name(const char *name)
{
	const char *dot = strrchr(name, '.');
	size_t i;

	if (!dot || dot == name)
		return false;
	if (strcmp(dot, ".pem") == 0 || strcmp(dot, ".crt") == 0 || strcmp(dot, ".cer") == 0 ||
	    strcmp(dot, ".der") == 0)
		return true;
	if (dot - name != 8)
		return false;
	for (i = 0; i < 8; i++)
		if (!isxdigit((unsigned char)name[i]))
			return false;
	dot++;
	if (*dot == 'r')
		dot++;
	if (!*dot)
		return false;
	for (; *dot; dot++)
		if (!isdigit((unsigned char)*dot))
			return false;
	return true;
}

int ca_bundle_dir_ok(const char *path, struct ca_bundle_seen *seen, struct moat_error *err)
{
	cleanup_closedir DIR *d = file_opendir_at(AT_FDCWD, path);
	struct dirent *e;
	size_t n = 0;
	int fd = d ? dirfd(d) : -1;

	if (!d || !seen_as(fd, seen))
		return look_failed(errno, path, err);
	if (shown_by_profiles(fd))
		return 1;
	for (errno = 0; (e = readdir(d)); errno = 0) {
		cleanup_close int efd = -1;
		cleanup_free char *entry = NULL;
		int is;

		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		if (++n > CA_DIR_MAX_ENTRIES || !cert_name(e->d_name) || e->d_type == DT_DIR)
			return 0;
		/* Each by its content too: a private key named server.pem is
		 * no certificate.  A link is followed, as a tool follows it:
		 * to a key elsewhere, it fails here (a directory fails
		 * fd_is_bundle's regular-file test). */
		entry = moat_xasprintf("%s/%s", path, e->d_name);
		efd = openat(fd, e->d_name, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
		if ((is = fd_is_bundle(efd, entry, err)) <= 0)
			return is;
	}
	/* A listing cut short has not shown every entry: not one. */
	return errno ? look_failed(errno, path, err) : 1;
}
