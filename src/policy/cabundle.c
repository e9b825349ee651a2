#include "policy/cabundle.h"

#include <ctype.h>
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/cleanup.h"
#include "util/file.h"
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

/* Blank, or a '#' comment (Mozilla's, certifi's "# Issuer: ...", RHEL's
 * "# LABEL"). */
static bool comment_line(const char *s, size_t n)
{
	trim(&s, &n);
	return !n || s[0] == '#';
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

static bool starts(const char *s, size_t n, const char *with)
{
	size_t w = strlen(with);

	return n >= w && memcmp(s, with, w) == 0;
}

/* PEM: the lines between BEGIN CERTIFICATE (or TRUSTED CERTIFICATE) and
 * its END are the certificate's, base64; outside them a bundle has blank
 * lines, '#' comments, underlines, and a title ("GlobalSign Root CA") only
 * directly above its underline, as curl's cacert.pem writes them.  A title
 * was once any line without '=' or ':': a certificate and a bare token, an
 * age key or another PEM block (its BEGIN line and base64 passed as
 * titles) was granted as a bundle. */
static bool pem_bundle(const char *buf, size_t len)
{
	const char *p = buf, *end = buf + len;
	bool in_cert = false, title = false;
	size_t certs = 0;

	if (memmem(buf, len, "PRIVATE KEY", 11))
		return false;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);

		if (memchr(p, '\0', n))
			return false;
		if (title) { /* the line after a title must underline it */
			if (!rule_line(p, n))
				return false;
			title = false;
		} else if (!in_cert && (starts(p, n, "-----BEGIN CERTIFICATE-----") ||
					starts(p, n, "-----BEGIN TRUSTED CERTIFICATE-----"))) {
			in_cert = true;
		} else if (in_cert && (starts(p, n, "-----END CERTIFICATE-----") ||
				       starts(p, n, "-----END TRUSTED CERTIFICATE-----"))) {
			in_cert = false;
			certs++;
		} else if (in_cert) {
			if (!base64_line(p, n))
				return false;
		} else if (!comment_line(p, n) && !rule_line(p, n)) {
			/* A title: no '=' or ':' (a setting's, a token's). */
			if (memchr(p, '=', n) || memchr(p, ':', n))
				return false;
			title = true;
		}
		p = nl ? nl + 1 : end;
	}
	return certs > 0 && !in_cert && !title;
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

/* The file open at `fd`, read whole: a bundle? */
static bool fd_is_bundle(int fd)
{
	cleanup_free char *buf = NULL;
	struct stat st;
	size_t got = 0;

	if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size <= 0 ||
	    (unsigned long long)st.st_size > CA_BUNDLE_MAX)
		return false;
	buf = malloc((size_t)st.st_size);
	if (!buf)
		return false;
	while (got < (size_t)st.st_size) {
		ssize_t r = read(fd, buf + got, (size_t)st.st_size - got);

		if (r <= 0)
			return false;
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

bool ca_bundle_file_ok(const char *path, struct ca_bundle_seen *seen)
{
	/* O_NONBLOCK: a FIFO named there does not hang moat's start. */
	cleanup_close int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);

	return fd >= 0 && seen_as(fd, seen) && (shown_by_profiles(fd) || fd_is_bundle(fd));
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

bool ca_bundle_dir_ok(const char *path, struct ca_bundle_seen *seen)
{
	cleanup_closedir DIR *d = file_opendir_at(AT_FDCWD, path);
	struct dirent *e;
	size_t n = 0;
	int fd = d ? dirfd(d) : -1;

	if (!d || !seen_as(fd, seen))
		return false;
	if (shown_by_profiles(fd))
		return true;
	while ((e = readdir(d))) {
		cleanup_close int efd = -1;

		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		if (++n > CA_DIR_MAX_ENTRIES || !cert_name(e->d_name) || e->d_type == DT_DIR)
			return false;
		/* Each by its content too: a private key named server.pem is
		 * no certificate.  A link is followed, as a tool follows it:
		 * to a key elsewhere, it fails here (a directory fails
		 * fd_is_bundle's regular-file test). */
		efd = openat(fd, e->d_name, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
		if (!fd_is_bundle(efd))
			return false;
	}
	return true;
}
