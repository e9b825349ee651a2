/* Unit tests of policy/cabundle.c: what a PEM file must look like to be
 * granted as a CA bundle.  The layouts of real bundles pass (Debian's bare
 * concatenation, certifi's and botocore's Mozilla comments, RHEL's '#
 * LABEL' lines, curl's header and underlined titles); a certificate beside
 * text of a secret's shape, or text not part of a title+underline pair
 * directly above a BEGIN line, does not. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "policy/cabundle.h"
#include "tap.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static char dir[] = "/var/tmp/moat-test-cabundle.XXXXXX";

#define PEM                                                                                                            \
	"-----BEGIN CERTIFICATE-----\n"                                                                                \
	"MIIBszCCAVmgAwIBAgIUZmFrZS1jZXJ0aWZpY2F0ZS1mb3ItbW9hdDAKBggqhkjOPQQDAjAS\n"                                  \
	"-----END CERTIFICATE-----\n"

/* Is `text`, written to a file, a bundle? */
static bool bundle(const char *text)
{
	char path[128];
	struct ca_bundle_seen seen;
	struct moat_error err = {0};
	FILE *f;
	bool ok;

	snprintf(path, sizeof(path), "%s/b.pem", dir);
	f = fopen(path, "w");
	if (!f)
		return false;
	fputs(text, f);
	fclose(f);
	ok = ca_bundle_file_ok(path, &seen, &err) > 0;
	unlink(path);
	return ok;
}

/* The look at `path` (a directory's with `is_dir`) with every descriptor but
 * `spare` taken (dups of stdin), as a process that ran out of them: it
 * fails for the process's want, not the file's. */
static int look_without_fds(const char *path, bool is_dir, int spare, struct moat_error *err)
{
	static int held[1 << 16];
	struct ca_bundle_seen seen;
	int n = 0, fd, rc;

	memset(err, 0, sizeof(*err));
	while (n < (int)ARRAY_SIZE(held) && (fd = dup(0)) >= 0)
		held[n++] = fd;
	for (; spare > 0 && n > 0; spare--)
		close(held[--n]);
	rc = is_dir ? ca_bundle_dir_ok(path, &seen, err) : ca_bundle_file_ok(path, &seen, err);
	while (n > 0)
		close(held[--n]);
	return rc;
}

/* Out of descriptors, a look says nothing of the file: -1 with EMFILE and
 * the path, never 0 ("no bundle", which passed the variable ungranted with
 * a note blaming the file). */
static void out_of_descriptors(void)
{
	char file[128], sub[128];
	struct ca_bundle_seen seen;
	struct moat_error err = {0};
	struct rlimit rl = {64, 64}, was;
	FILE *f;
	int rc;

	snprintf(sub, sizeof(sub), "%s/certs", dir);
	snprintf(file, sizeof(file), "%s/certs/1a2b3c4d.0", dir);
	if (mkdir(sub, 0755) != 0 || !(f = fopen(file, "w")))
		return;
	fputs(PEM, f);
	fclose(f);
	getrlimit(RLIMIT_NOFILE, &was);
	if (rl.rlim_max > was.rlim_max)
		rl = (struct rlimit){was.rlim_max, was.rlim_max};
	setrlimit(RLIMIT_NOFILE, &rl);
	ok(ca_bundle_file_ok(file, &seen, &err) == 1 && ca_bundle_dir_ok(sub, &seen, &err) == 1,
	   "control: with descriptors free, the file and the directory are bundles");
	rc = look_without_fds(file, false, 0, &err);
	ok(rc == -1 && err.errnum == EMFILE && strstr(err.message, file),
	   "no descriptor left: the file's look is an error naming it (%d: %s)", rc, err.message);
	rc = look_without_fds(sub, true, 0, &err);
	ok(rc == -1 && err.errnum == EMFILE && strstr(err.message, sub),
	   "no descriptor left: the directory's look is an error naming it (%d: %s)", rc, err.message);
	/* One left: the directory opens, its certificate does not. */
	rc = look_without_fds(sub, true, 1, &err);
	ok(rc == -1 && err.errnum == EMFILE && strstr(err.message, file),
	   "one descriptor left: the certificate's look in the directory is an error naming it (%d: %s)", rc,
	   err.message);
	setrlimit(RLIMIT_NOFILE, &was);
	unlink(file);
	rmdir(sub);
}

int main(void)
{
	if (!mkdtemp(dir))
		return 1;
	/* What real bundles write. */
	ok(bundle(PEM PEM), "Debian's: certificates alone");
	ok(bundle("\n# Issuer: CN=GlobalSign Root CA O=GlobalSign nv-sa OU=Root CA\n"
		  "# Label: \"GlobalSign Root CA\"\n# Serial: 4835703278459707669005204\n"
		  "# SHA256 Fingerprint: eb:d4:10:40:e4:bb:3e:c7:42:c9:e3:81:d3:1e:f2:a4:1a:48:b6:68:5c:96:e7:ce:f3:c1:df:6c\n"
		  "# Issuer: CN=Entrust.net Certification Authority (2048) O=Entrust.net OU=www.entrust.net/CPS_2048\n" PEM),
	   "certifi's and botocore's: Mozilla's comments");
	ok(bundle("# ACCVRAIZ1\n" PEM "# Actalis Authentication Root CA\n" PEM), "RHEL's: a '# LABEL' above each");
	ok(bundle("##\n## Bundle of CA Root Certificates\n##\n"
		  "## https://hg.mozilla.org/releases/mozilla-release/raw-file/default/security/nss/lib/ckfw/builtins/"
		  "certdata.txt\n"
		  "## Conversion done with mk-ca-bundle.pl version 1.29.\n"
		  "## SHA256: 456ff095dde6dd73354c5c28c73d9c06f53b61a803963414cb91a1d92945cdd3\n##\n\n"
		  "GlobalSign Root CA\n==================\n" PEM "\nHARICA TLS ECC Root CA 2021\n"
		  "===========================\n" PEM),
	   "curl's: its header, and a title underlined directly above each BEGIN");
	/* The loophole: a title and its underline passed whatever they were
	 * and whatever followed. */
	ok(!bundle(PEM "\nMy tokens\n=========\nghp_0123456789abcdefghijABCDEFGHIJ\n-----\n"),
	   "a secret behind a fake title and underline, underlined itself: no bundle");
	ok(!bundle(PEM "\nMy notes\n========\n"), "a title and underline above no certificate: no bundle");
	ok(!bundle("Notes\n=====\n\n" PEM), "a title and underline, then a blank line, then BEGIN: no bundle");
	ok(!bundle("ghp_0123456789abcdefghijABCDEFGHIJ\n==================================\n" PEM),
	   "a token as a title, above BEGIN: no bundle");
	ok(!bundle("AKIAIOSFODNN7EXAMPLE\n====================\n" PEM), "  an AWS key id as a title: no bundle");
	ok(!bundle("# token: ghp_0123456789abcdefghijABCDEFGHIJ\n" PEM), "a token in a '#' comment: no bundle");
	ok(!bundle("# wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n" PEM), "  an AWS secret key in a comment: no bundle");
	ok(!bundle("## SHA256: 456ff095dde6dd73354c5c28c73d9c06f53b61a803963414cb91a1d92945cdd3x\n" PEM),
	   "  a digest's place holding more than a digest: no bundle");
	ok(!bundle(PEM "=====\n"), "a bare underline: no bundle");
	ok(!bundle(PEM "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjE=\n-----END OPENSSH PRIVATE KEY-----\n"),
	   "an SSH private key beside a certificate: no bundle");
	ok(!bundle(PEM "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ\n"), "a line of base64 outside a block: no bundle");
	ok(!bundle("A title that is far too long to be the name of any certificate authority that curl's "
		   "mk-ca-bundle ever wrote into a bundle file, yes\n=====\n" PEM),
	   "a title longer than a CA's name: no bundle");
	out_of_descriptors();
	rmdir(dir);
	return tap_done();
}
