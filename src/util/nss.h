/* Name lookups in a static moat.  glibc's getaddrinfo (and its passwd and
 * group lookups, which moat itself does not make: util/account.h) load
 * the NSS modules nsswitch.conf names, beyond the files and dns that are
 * built into libc.  Loaded into a static program, a module brings the
 * host's shared libc with it, a second libc in one process, and crashed
 * moat (tests/blackbox/nss.sh).  nss_confine() keeps a static moat to the
 * built-in modules: hosts from /etc/hosts and DNS (resolv.conf: on a host
 * with systemd-resolved that is its stub, 127.0.0.53), passwd and group
 * from the files.  What other modules would add (mDNS .local names,
 * myhostname's) is not resolved there (docs/network.md).  A dynamic moat,
 * or a program linking libmoat.so, is left alone: there glibc loads the
 * modules as it always does. */
#ifndef MOAT_UTIL_NSS_H
#define MOAT_UTIL_NSS_H

/* Before the first name lookup; once per process, from any thread. */
void nss_confine(void);

#endif
