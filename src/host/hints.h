/* The hints for a host feature that is missing: how to get it on
 * Debian/Ubuntu and Fedora (and in a container).  One copy, for `moat probe`
 * (api/probe.c) and for the backends' verdicts alike (native.c, bwrap.c,
 * oci.c, firejail.c, backends/util.c), so the probe and a run give the same
 * fix for the same cause. */
#ifndef MOAT_HOST_HINTS_H
#define MOAT_HOST_HINTS_H

/* The feature is missing because MOAT_HOST_LIMIT took it away. */
#define HOST_HINT_LIMIT "MOAT_HOST_LIMIT is lowering detection on purpose; unset it to see the host as it is"
#define HOST_HINT_LANDLOCK                                                                                             \
	"Debian/Ubuntu: a kernel >= 6.7 (Debian 12: linux-image-amd64 from bookworm-backports; Ubuntu: the HWE "       \
	"kernel) with landlock in the lsm= list: add e.g. lsm=landlock,lockdown,yama,integrity,apparmor,bpf to "       \
	"GRUB_CMDLINE_LINUX in /etc/default/grub, run update-grub and reboot; Fedora: the stock kernel has it "        \
	"(`sudo grubby --update-kernel=ALL --args=lsm=landlock,lockdown,yama,integrity,selinux,bpf` if lsm= was "      \
	"changed); check with `cat /sys/kernel/security/lsm`"
#define HOST_HINT_LANDLOCK_ABI                                                                                         \
	"a newer kernel: ABI 3 needs Linux 6.2, ABI 4 (TCP) 6.7, ABI 6 (scoping) 6.12; Debian 12: "                    \
	"linux-image-amd64 from bookworm-backports; Ubuntu: the HWE kernel; Fedora: `sudo dnf upgrade kernel`"
#define HOST_HINT_SECCOMP                                                                                              \
	"a kernel built with CONFIG_SECCOMP_FILTER=y (every Debian, Ubuntu and Fedora kernel is); inside a "           \
	"container, a runtime that does not refuse seccomp(2) (docker --security-opt seccomp=... with seccomp "        \
	"allowed)"
#define HOST_HINT_SECCOMP_NEWER                                                                                        \
	"a newer kernel (user notification needs Linux 5.0, log 4.14, TSYNC 3.17): Debian: linux-image-amd64; "        \
	"Ubuntu: the HWE kernel; Fedora: `sudo dnf upgrade kernel`"
#define HOST_HINT_NET_FENCE                                                                                            \
	"Linux >= 5.9 with seccomp user notification (Debian 12: linux-image-amd64; Ubuntu: the HWE kernel); as an "   \
	"unprivileged user, Yama's kernel.yama.ptrace_scope at most 1"
#define HOST_HINT_USERNS                                                                                               \
	"Debian: `sudo sysctl -w kernel.unprivileged_userns_clone=1`; Ubuntu 23.10+: `sudo sysctl -w "                 \
	"kernel.apparmor_restrict_unprivileged_userns=0` or an AppArmor profile for moat with `userns,`; "             \
	"Fedora/RHEL: `sudo sysctl -w user.max_user_namespaces=15000`; make it permanent in /etc/sysctl.d/; in "       \
	"Docker, run "                                                                                                 \
	"with --security-opt seccomp=unconfined or a profile that allows unshare"
/* Namespaces refused by a seccomp filter moat itself runs under. */
#define HOST_HINT_USERNS_FILTER                                                                                        \
	"moat runs under a seccomp filter that refuses new namespaces, which no sysctl or root undoes: in Docker or "  \
	"Podman, run the container with a seccomp profile that allows unshare and clone with namespace flags "         \
	"(--security-opt seccomp=unconfined); inside another moat, the outer sandbox holds the command as well: "      \
	"run the inner one with --mode prefer, or outside"
/* uid 0 whose capabilities were dropped (a container's root). */
#define HOST_HINT_USERNS_UID0                                                                                          \
	"moat runs as uid 0 without CAP_SYS_ADMIN (namespaces as root) or CAP_SETFCAP (which Linux 5.12+ needs to "    \
	"map uid 0 into a user namespace): run moat as a user other than root, whose user namespaces need no "         \
	"capability, or give the container CAP_SETFCAP (Docker: --cap-add SETFCAP; Kubernetes: "                      \
	"securityContext.capabilities.add: [SETFCAP])"
#define HOST_HINT_USERNS_ROOT HOST_HINT_USERNS "; or run moat as root"
#define HOST_HINT_PROC                                                                                                 \
	"a fresh /proc needs user (or root) and pid namespaces and a /proc without masked parts: on a host, fix "      \
	"user namespaces first (Debian: kernel.unprivileged_userns_clone=1; Ubuntu: "                                  \
	"kernel.apparmor_restrict_unprivileged_userns=0; Fedora: user.max_user_namespaces=15000); in Docker/Podman, "  \
	"--security-opt systempaths=unconfined (Podman: --security-opt unmask=ALL)"
#define HOST_HINT_CGROUP2                                                                                              \
	"boot with systemd.unified_cgroup_hierarchy=1 (the default on Debian 11+, Ubuntu 21.10+ and Fedora 31+): "     \
	"Debian/Ubuntu: add it to GRUB_CMDLINE_LINUX in /etc/default/grub and run update-grub; Fedora: "               \
	"`sudo grubby --update-kernel=ALL --args=systemd.unified_cgroup_hierarchy=1`"
#define HOST_HINT_DELEGATE                                                                                             \
	"run moat in a delegated cgroup: `systemd-run --user --scope -p Delegate=yes moat ...` (Debian, Ubuntu and "   \
	"Fedora alike), or Delegate=yes in the service unit that starts it; in a container, give it a private "        \
	"writable cgroup (docker --cgroupns=private with a writable /sys/fs/cgroup)"

#endif
