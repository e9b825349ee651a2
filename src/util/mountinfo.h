/* The mount points of this process's mount namespace, from
 * /proc/self/mountinfo (proc(5)). */
#ifndef MOAT_UTIL_MOUNTINFO_H
#define MOAT_UTIL_MOUNTINFO_H

#include <stddef.h>

/* Unescape the octal sequences (\040) of a mountinfo field, in place. */
void mountinfo_unescape(char *s);

/* Every mount point, sorted, each once (a stacked mount point is one
 * name): a NULL-terminated array of new strings (backend_strv_free-able:
 * free each, then the array), *n of them.  NULL when mountinfo cannot be
 * read (errno set). */
char **mountinfo_points(size_t *n);

struct mountinfo_entry {
	unsigned int major, minor; /* st_dev of the mount's file system */
	char *root;                /* the directory of that file system it shows
				    * (not a path for a namespace file) */
	char *point;               /* where it shows it */
};

/* Every mount, in mountinfo's order (a later one at the same point is on
 * top of the earlier): *n of them, or NULL with errno set.  Free with
 * mountinfo_entries_free. */
struct mountinfo_entry *mountinfo_entries(size_t *n);
void mountinfo_entries_free(struct mountinfo_entry *e, size_t n);

#endif
