/* The file-system half of the plan: every path of the policy resolved once,
 * in the parent, to an object -- an O_PATH descriptor and its identity
 * (device, inode, type) -- and what follows from the objects:
 *
 *   - grants, with the real path each one resolves to (read grants may pass
 *     through symlinks; write grants only through links only root can
 *     change, for a caller that is not root);
 *   - denied objects, and for a denied path that does not exist yet the
 *     nearest existing directory above it;
 *   - the "excluded" set: denied objects, the symlinks a deny was reached
 *     through, and absent denied names.  A grant with an excluded path below
 *     it is *expanded*: its rules go to its entries one by one, never to the
 *     grant itself, so that nothing created, renamed or replaced later in
 *     the directories leading to a deny is covered by any rule;
 *   - protected entries of write grants (.git/hooks, .bashrc, ...: what the
 *     host runs code from later), pinned read-only, with a placeholder made
 *     for the run where one is absent.
 *
 * Every backend builds its rules from these objects (Landlock rules from the
 * descriptors, the mount view from the identities, which the child checks
 * again after opening each one in its own mount namespace), never from the
 * names: a name that changes between planning and use cannot widen what is
 * granted.  The rules, and why, are in docs/filesystem.md. */
#ifndef MOAT_RESOLVE_FSPLAN_H
#define MOAT_RESOLVE_FSPLAN_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "policy/policy.h"
#include "util/err.h"

enum fs_role {
	FS_READ,    /* a read grant (or an entry of an expanded one) */
	FS_WRITE,   /* a write grant (or an entry of an expanded one) */
	FS_DENY,    /* a denied path */
	FS_PROTECT, /* a protected entry inside a write grant: read-only */
	FS_LINK,    /* a symlink entry of an expanded grant: shown, not granted */
	FS_PIN,     /* a directory between a write grant and a protected entry:
		     * bound onto itself, so it cannot be renamed away */
};

/* One object.  Strings and the descriptor are owned by the plan. */
struct fs_obj {
	enum fs_role role;
	char *path;   /* as the policy names it: absolute, lexically normalised */
	char *real;   /* where the object is: every symlink resolved.  Absent:
		       * where it would be (the anchor's real path + the rest) */
	bool present;
	int fd;       /* O_PATH|O_NOFOLLOW of the object; -1 when absent */
	dev_t dev;
	ino_t ino;
	mode_t mode;  /* S_IFMT bits and permissions */
	bool via_symlink; /* a symlink was followed to reach it */
	char *anchor;     /* absent: the real path of the nearest existing
			   * directory above it */
	const struct moat_path_rule *rule; /* its policy rule; NULL for
					    * entries and protected objects */
	int parent;       /* entries: the expanded grant (index); protected:
			   * the write grant it sits in; else -1 */
	bool expanded;    /* grants: an excluded path lies below it, so its
			   * rules go to its entries, not to itself */
	bool chain;       /* entries: a directory with an excluded path below
			   * it, expanded in turn (no rule of its own) */
	bool dropped;     /* grants: a profile grant a deny overrides, or an
			   * optional one that is absent: not granted */
	bool swapped;     /* dropped: a bound grant (moat_path_rule.bound)
			   * whose name leads to another object than the
			   * one its check judged */
	/* FS_PROTECT */
	const char *protect_name; /* the list entry: ".git/hooks" */
	bool placeholder;         /* absent: moat makes `real` for the run */
	bool placeholder_dir;     /* as a directory; else an empty file (a git
				   * config git reads: policy/protected.h) */
	bool watch;               /* absent, and nothing can stand in for it
				   * (.git/commondir): looked up again after
				   * the run (fs_plan_made_watched) */
	bool placeholder_made;    /* made by this run: removed after it */
	int dirfd;                /* placeholders: the directory it is made in */
	int lock_fd;              /* a pinned directory: this run's shared
				   * flock on it (resolve/sharedlock.h), or -1 */
	bool adopted;             /* a placeholder another run made: removed
				   * after this run too, unless still held */
	bool lifted;              /* protected entries: lifted (--unprotect, or
				   * an explicit --write of it): kept for the
				   * report, not pinned */
	char *link_text;          /* FS_LINK and protected symlinks: the text */
	char *mount_of;           /* FS_DENY: the denied path this one shows
				   * through another mount (exclude_other_mounts) */
	bool on_the_way;          /* a protected link on the way to another's
				   * target: held, its own target not
				   * protected whole (what lies beyond it is) */
	bool hooks;               /* protected: a repository's hooks directory,
				   * whose links are followed (protect_links) */
	const char *sibling_of;   /* watched: `X.git` beside the repository X
				   * (its name in the same directory): made,
				   * it counts only when X is no longer a
				   * repository (a push to X would go here) */
	bool hard_linked;         /* present: a regular file with another
				   * hard link, through which it can be
				   * written whatever holds this name */
	char *linked_secret;      /* FS_DENY: the denied file, or a file
				   * below the denied directory, that has a
				   * hard link outside the denied paths
				   * (readable through it wherever a grant
				   * holds it), or NULL (resolve/linkscan.h) */
	char *link_unchecked;     /* FS_DENY directories: the first directory
				   * below it the bounded walk left out, or
				   * NULL (resolve/linkscan.h) */
	bool link_unlistable;     /* link_unchecked was left out because this
				   * uid may not list it (not the bound) */
};

/* A symlink that resolving a grant passed through: the view shows it at
 * `real` (its own location, symlinks above it resolved) with its `text`, so
 * that the name the policy used still leads to the granted object. */
struct fs_link {
	char *real;
	char *text;
	bool for_deny; /* passed through by a deny: excluded, not recreated */
	bool for_home; /* on HOME's way (HOME=/home/u, /home -> var/home):
			* recreated in the view all the same, so that $HOME
			* leads where the view shows HOME */
};

/* A hard-link farm found in a write grant (resolve/linkfarm.h): `dir`
 * (real path) holds `file`, a regular file with `nlink` names, sampled. */
struct fs_farm {
	size_t kind; /* link_farm_get(kind) */
	char *dir;
	char *file;
	nlink_t nlink;
};

struct fs_plan {
	struct fs_obj *obj;
	size_t n, cap;
	struct fs_link *links;
	size_t n_links, cap_links;
	/* Protected names that are links a deny went through (excluded, so
	 * no protected entry of their own: ~/.config/git -> ../dotfiles/git
	 * with the secret .config/git/credentials): their targets are still
	 * protected (protect_links). */
	struct fs_link *follow;
	size_t n_follow, cap_follow;
	/* A protected link, or a protected hooks directory's listing, moat
	 * could not read (ENOMEM, EIO): where it leads is unknown, and the
	 * plan fails (protect_links) naming the first; else 0. */
	int unread_errno;
	char *unread_path;
	/* While record_dotdot: the directories a walk left by `..` (the
	 * kernel's `..` follows whatever stands at that name then). */
	char **dotdot;
	size_t n_dotdot, cap_dotdot;
	bool record_dotdot;
	char **excluded; /* real paths no rule of a grant may cover */
	size_t n_excluded, cap_excluded;
	char *home_real; /* HOME resolved, or NULL (unknown, "/", absent) */
	char placeholder_tag[17]; /* random, for the placeholders' temporary
				   * names (fs_placeholder_temp_name) */
	char **names;    /* protect_name strings made for this plan (a HOME
			  * entry below a grant, what a repository's config
			  * names): freed with it */
	size_t n_names, cap_names;
	/* The hard-link farms found at the write grants' roots and in the
	 * repositories one level below them: written through, they change
	 * files outside the grants (fs.write missing). */
	struct fs_farm *farms;
	size_t n_farms, cap_farms;
	/* The objects are held open until the run: moat raised its own soft
	 * RLIMIT_NOFILE for them (a granted HOME can have thousands of
	 * entries), and the command gets this, the caller's, back.  0: not
	 * raised. */
	unsigned long long nofile_soft;
	/* The objects by real path, for the questions planning asks of every
	 * protected entry ("held already?", "inside a pinned directory?"):
	 * an open-addressed table of object indices + 1 (0: empty), filled
	 * lazily up to obj[by_real_upto] (fsplan.c find_at). */
	size_t *by_real;
	size_t by_real_cap, by_real_n, by_real_upto;
};

void fs_plan_init(struct fs_plan *fp);
/* Closes every descriptor.  Placeholders are not removed here: see
 * fs_placeholders_remove(). */
void fs_plan_free(struct fs_plan *fp);
/* Only the shared locks of pinned directories (resolve/sharedlock.h), at
 * once: for a process that leaves the rest of the plan to its exit, so that
 * another run finishing meanwhile can remove a placeholder both held. */
void fs_plan_release_locks(struct fs_plan *fp);
/* Once the command has started (its execve succeeded): close the
 * descriptors of the read grants, their entries and links, and the denied
 * objects -- the child had its own copies, and nothing after the start
 * uses them.  The write grants' stay (fs_plan_changed_pins looks below
 * them), as do the placeholders' directories and the locks.  Each one
 * closed is set to -1. */
void fs_plan_close_launched(struct fs_plan *fp);

/* Resolve every path rule of `p` (HOME from `home`, may be NULL) into *fp:
 * objects, excluded set, expansion entries, protected entries.  Fails,
 * naming the path and the rule's origin, on: a required grant that does not
 * exist; a write grant that passes through a symlink the caller or the
 * command could change (the hint names the target to grant instead); a grant that resolves into a denied path; a
 * user's grant inside a built-in secret; a path granted and denied; a deny
 * that is a glob or a symlink cycle; a grant of a directory the sandbox
 * makes itself (/tmp and /dev/shm when private, /dev, /proc, /run). */
int fs_plan_build(const struct moat_policy *p, const char *home, struct fs_plan *fp, struct moat_error *err);

/* The index of the grant whose real path is `real`, or -1. */
int fs_find_real(const struct fs_plan *fp, const char *real);

/* Is `real` one of the excluded paths, or below one? */
bool fs_is_excluded(const struct fs_plan *fp, const char *real);

/* Is there an excluded path strictly below `real`? */
bool fs_has_excluded_below(const struct fs_plan *fp, const char *real);

/* Launch (not planning: a dry run or an export must not touch the host):
 * make the placeholders of absent protected entries, each from its write
 * grant's descriptor without following any link, and record their
 * identities.  Each is made under a temporary name of this process's
 * (fs_placeholder_temp_name), `made` is told its identity, and only then
 * is it renamed into place: whoever learns of it from `made` (moat's
 * guard) can always find and remove exactly it.  Returns 0, or -1 with
 * err (what was made is removed). */
typedef void (*fs_placeholder_made_fn)(void *ctx, size_t index, dev_t dev, ino_t ino);
int fs_placeholders_make(struct fs_plan *fp, fs_placeholder_made_fn made, void *ctx, struct moat_error *err);
/* The temporary name object `index`'s placeholder is made under by process
 * `pid` (in the same directory), with the plan's random tag: a name
 * another user could foresee, they could make first in a directory they
 * may write (a shared project), failing the run, and moat's clean-up
 * removed what they made there. */
void fs_placeholder_temp_name(const struct fs_plan *fp, char *buf, size_t len, pid_t pid, size_t index);
/* What the clean-up after the run leaves on the host, one call per path:
 * `kept_as` is the new name (in the same directory) of what was moved
 * aside, "" for what was removed, NULL for what is left in place. */
typedef void (*fs_leftover_fn)(void *ctx, const char *path, const char *kept_as);

/* After the run: remove each placeholder this run made if it is still the
 * same, empty object, and any temporary name of `pid`'s left behind.
 * Never fails.  Returns how many placeholders this run made are still
 * there because they could not be removed (the command made something in
 * one, or changed its mode: possible without a mount namespace), each
 * given to `each` (when not NULL) with kept_as NULL.  A placeholder is
 * tried once: a second call does not count it again. */
size_t fs_placeholders_remove(struct fs_plan *fp, pid_t pid, fs_leftover_fn each, void *ctx);

/* After the run: how many pinned entries of the write grants (protected
 * entries, placeholders, the directories between) are no longer what their
 * name leads to -- the host removed, renamed or replaced them during the
 * run (a host-side `git config` rewrites .git/config by a rename).  The
 * kernel then detached the pin, and the command could write that name from
 * then on.  The first one's path goes to `first`; `*why` is 0 when it was
 * found changed or gone, else the errno of a lookup that could not tell
 * (EACCES: the command chmod'ed a directory on the way, which its pin does
 * not forbid, and what it holds now -- a watched entry made there among it
 * -- is hidden from this uid). */
size_t fs_plan_changed_pins(const struct fs_plan *fp, char *first, size_t len, int *why);

/* After the run: how many watched entries (absent, with nothing to stand
 * in for them: .git/commondir) exist now -- made during the run, by the
 * command or the host -- and each file or link of them moved aside (kept,
 * at NAME.moat-set-aside-TAG beside it, where nothing reads it; removed
 * where the file system cannot rename without replacing), from the
 * directory that holds its name now; `*n_left` of them, directories and
 * what could not be moved, are left in place.  A watched entry is looked
 * up by its name below its grant, no link followed: a program the
 * repository's config names in a directory not made yet is watched too.
 * Each is given to `each` (when not NULL): moved aside, removed or left. */
size_t fs_plan_made_watched(const struct fs_plan *fp, fs_leftover_fn each, void *ctx, size_t *n_left);

#endif
