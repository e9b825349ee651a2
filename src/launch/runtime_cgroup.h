/* The cgroups an OCI runtime made for a container, removed by moat's guard
 * after moat died (launch/guard.h).
 *
 * runc (cgroupfs driver) makes the container's cgroup in every hierarchy
 * mounted, v1 and v2 alike, at its own cgroup there joined with a relative
 * linux.cgroupsPath -- the name moat gives it (backends/oci.c).  When moat
 * is SIGKILLed in runc's first milliseconds, runc dies before it writes its
 * state: `runc delete` then has no record to go by, and the cgroups stay,
 * sometimes with runc's init in them, blocked forever on its exec fifo and
 * holding the container's namespaces.  The guard is a fork of moat, in the
 * cgroups runc started in, so it finds them by that name alone. */
#ifndef MOAT_LAUNCH_RUNTIME_CGROUP_H
#define MOAT_LAUNCH_RUNTIME_CGROUP_H

/* In each hierarchy where this process's cgroup has a child named `name`
 * (one path component): freeze it where the hierarchy can, SIGKILL every
 * process in it and below it until none is left (bounded: about 2 s), then
 * remove it, its children first.  Nothing else is touched; a name that is
 * not one plain component is ignored. */
void runtime_cgroups_remove(const char *name);

#endif
