/* Policy: does what a CA bundle variable names (SSL_CERT_FILE,
 * SSL_CERT_DIR, NODE_EXTRA_CA_CERTS, ...: policy/env.h) look like one?
 * Only then is it granted read-only by the profiles: the variables come
 * from moat's environment, which an MCP client sets from a server entry's
 * `env` -- an entry the server's author wrote -- and SSL_CERT_DIR=/ or
 * NODE_EXTRA_CA_CERTS=~/.bashrc granted the whole host, or a file of
 * exported tokens, with every verdict enforced. */
#ifndef MOAT_POLICY_CABUNDLE_H
#define MOAT_POLICY_CABUNDLE_H

#include <stdbool.h>
#include <sys/types.h>

#include "util/err.h"

/* The object a check looked at, to bind the grant to (device, inode). */
struct ca_bundle_seen {
	dev_t dev;
	ino_t ino;
	bool dir;
};

/* A regular file of at most CA_BUNDLE_MAX bytes holding PEM certificates
 * (at least one; no private key; their bodies base64; outside them only
 * blank lines, '#' comments, and a title as curl's bundle has one -- a
 * CA's name without '=' or ':', its underline of '=' or '-' on the next
 * line, the BEGIN of its certificate on the one after -- and nothing of a
 * token's shape in a comment or a title, CA_TOKEN_MIN characters of a
 * token's alphabet with letters and digits, but for curl's "SHA256: "
 * digest) or one DER certificate; or
 * one below /etc or /usr, which the profiles show already. */
int ca_bundle_file_ok(const char *path, struct ca_bundle_seen *seen, struct moat_error *err);

/* A directory (SSL_CERT_DIR, GIT_SSL_CAPATH) that is not "/" and holds
 * only certificates, by their names (NAME.pem, .crt, .cer, .der, and
 * OpenSSL's hash links HHHHHHHH.N and HHHHHHHH.rN) and their content
 * (ca_bundle_file_ok's), at most CA_DIR_MAX_ENTRIES of them and no
 * directory; or one below /etc or /usr, which the profiles show already
 * (their secrets denied).
 *
 * Both open the path once and look through that descriptor (its real
 * path too, for /etc and /usr), and set `seen` to the object looked at:
 * the grant is bound to it (moat_path_rule.bound), so a file swapped in
 * between the look and the grant's own walk of the path is not granted.
 * A directory's entries stay live, as any granted directory's: what its
 * writers add later is shown.  Said in docs/policy.md.
 *
 * Each returns 1 (one: granted), 0 (no bundle, or nothing that can be
 * opened there), or -1 when moat ran out of descriptors or memory looking
 * (EMFILE, ENFILE, ENOMEM: err set, naming the path): that says nothing
 * of the file, and taken for "no bundle" it passed the variable ungranted
 * with a note blaming the file. */
int ca_bundle_dir_ok(const char *path, struct ca_bundle_seen *seen, struct moat_error *err);

#define CA_BUNDLE_MAX	   (8u << 20)
/* A title's length at most (curl's CA names: under 70). */
#define CA_TITLE_MAX 128
/* A token: this many characters of its alphabet, letters and digits. */
#define CA_TOKEN_MIN 20
#define CA_DIR_MAX_ENTRIES 4096
/* SSL_CERT_DIR: at most this many directories (more: not granted). */
#define CA_BUNDLE_MAX_PARTS 64

#endif
