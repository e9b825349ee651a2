/* Hard-link farms inside write grants: resolve/linkfarm.h. */
#include "resolve/linkfarm.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/cleanup.h"
#include "util/err.h"
#include "util/mem.h"
#include "util/openat2.h"
#include "util/path.h"

static const struct link_farm farms[] = {
    /* .pnpm/node_modules, pnpm's hoisted names, holds only links. */
    {"node_modules/.pnpm", NULL, {"node_modules"}, 1,
     "pnpm's content-addressed store (package-import-method hardlink), and every project installed from it",
     "reinstall it with copies: rm -rf node_modules && pnpm install --package-import-method=copy (or "
     "package-import-method=copy in .npmrc; clone-or-copy where the file system can clone)"},
    /* The packages themselves (bun's, pnpm's with node-linker=hoisted);
     * .pnpm is the farm above, .bin holds links, .cache what tools write.
     * Any package manager's node_modules, npm's too: two files of links
     * needed, since a package may link its own files to one another
     * (pnpm's npm package links its binary to @pnpm/exe's), while a
     * farm's every file is a link. */
    {"node_modules", NULL, {".pnpm", ".bin", ".cache"}, 2,
     "the package manager's cache it was installed from (bun's hardlink backend, its default on Linux: "
     "~/.bun/install/cache; pnpm's store with node-linker=hoisted), and every project installed from it",
     "reinstall it with copies: rm -rf node_modules && bun install --backend=copyfile (pnpm: "
     "--package-import-method=copy)"},
    {".venv/lib", NULL, {NULL}, 1,
     "uv's cache (link-mode hardlink, uv's default on Linux), and every environment installed from it",
     "reinstall it with copies: UV_LINK_MODE=copy uv sync --reinstall (or link-mode = \"copy\" in uv.toml)"},
    /* The packs say the most: a clone used since has new loose objects
     * of its own, but its packs are still the source's. */
    {".git/objects", "pack", {NULL}, 1,
     "the repository it was cloned from or into (git clone of a local path links .git/objects)",
     "clone it again with git clone --no-hardlinks, or break the links in place (git repack -a -d rewrites the "
     "packs; find DIR -type f -links +1 lists the rest)"},
};

/* Entries that say nothing of the farm: its `skip`; Python's byte code,
 * written by whoever imports, never linked. */
static bool passed_over(const struct link_farm *f, const char *name, unsigned depth)
{
	for (size_t i = 0; depth == 0 && i < sizeof(f->skip) / sizeof(f->skip[0]) && f->skip[i]; i++)
		if (strcmp(name, f->skip[i]) == 0)
			return true;
	return strcmp(name, "__pycache__") == 0;
}

/* `rel`/`name`, where `rel` "." is the top itself. */
static char *rel_join(const char *rel, const char *name)
{
	return strcmp(rel, ".") == 0 ? moat_xstrdup(name) : path_join(rel, name);
}

size_t link_farm_count(void)
{
	return sizeof(farms) / sizeof(farms[0]);
}

const struct link_farm *link_farm_get(size_t kind)
{
	return kind < link_farm_count() ? &farms[kind] : NULL;
}

/* Does `top` lie in a directory named `dir` ("/x/node_modules/a",
 * "/x/.venv/lib/python3.12": "/DIR/" in it, or at its end)? */
static bool within_farm(const char *dir, const char *top)
{
	size_t n = strlen(dir);

	for (const char *at = strstr(top, dir); at; at = strstr(at + 1, dir))
		if (at > top && at[-1] == '/' && (at[n] == '/' || at[n] == '\0'))
			return true;
	return false;
}

const char *link_farm_dir_below(size_t kind, const char *top, bool bare)
{
	const char *dir = farms[kind].dir, *slash = strchr(dir, '/');
	const char *base = strrchr(top, '/');
	size_t first = slash ? (size_t)(slash - dir) : strlen(dir);

	/* A grant inside the farm (--write node_modules/a, a package of
	 * bun's; node_modules/.pnpm): its own files are the farm's. */
	if (within_farm(dir, top))
		return ".";
	if (bare)
		return strcmp(dir, ".git/objects") == 0 ? "objects" : NULL;
	base = base ? base + 1 : top;
	if (strlen(base) == first && strncmp(base, dir, first) == 0)
		return slash ? slash + 1 : ".";
	return dir;
}

struct sample {
	const struct link_farm *farm;
	unsigned files, dirs; /* left to stat, to list */
	unsigned n_linked;    /* files seen with another link, each its own */
	char *file;           /* the first of them: relative to the top */
	nlink_t nlink;
	dev_t dev;
	ino_t ino;
	int failed; /* out of descriptors or memory, or a listing cut short:
		     * the errno */
};

/* Out of descriptors or memory, a directory not opened says nothing of the
 * farm: the sample stops, and the plan fails naming the cause, rather
 * than take the farm for absent and claim fs.write.  true when `e` is such
 * an errno (recorded). */
static bool out_of_resources(struct sample *s, int e)
{
	if (!moat_errno_out_of_resources(e))
		return false;
	s->failed = e;
	return true;
}

static bool sample_dir(struct sample *s, int fd, const char *rel, unsigned depth);

/* One entry of a listed directory: a regular file stat'ed, a directory
 * sampled in turn.  Counts what it takes in *files, *dirs (this
 * directory's share). */
static bool sample_entry(struct sample *s, int dfd, const char *rel, const char *name, unsigned char type,
			 unsigned depth, unsigned *files, unsigned *dirs)
{
	struct stat st;

	if (type == DT_UNKNOWN) {
		if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0)
			return out_of_resources(s, errno);
		type = S_ISREG(st.st_mode) ? DT_REG : S_ISDIR(st.st_mode) ? DT_DIR : DT_UNKNOWN;
	}
	if (type == DT_REG && *files < LINK_FARM_PER_DIR && s->files) {
		++*files;
		s->files--;
		if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0)
			return out_of_resources(s, errno); /* else gone since the listing */
		if (!S_ISREG(st.st_mode) || st.st_nlink < 2 ||
		    (s->n_linked && st.st_dev == s->dev && st.st_ino == s->ino))
			return false;
		if (!s->n_linked++) {
			s->file = rel_join(rel, name);
			s->nlink = st.st_nlink;
			s->dev = st.st_dev;
			s->ino = st.st_ino;
		}
		return s->n_linked >= s->farm->linked_files;
	}
	if (type == DT_DIR && *dirs < LINK_FARM_PER_DIR && s->dirs && depth + 1 < LINK_FARM_DEPTH) {
		cleanup_free char *sub_rel = rel_join(rel, name);
		int sub = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

		++*dirs;
		if (sub < 0)
			return out_of_resources(s, errno);
		return sample_dir(s, sub, sub_rel, depth + 1);
	}
	return false;
}

/* Samples the directory open at `fd` (taken), `rel` below the top: up to
 * LINK_FARM_PER_DIR of its files and of its subdirectories, in the
 * listing's order, within what is left of the farm's bound.  Read with
 * getdents64 into a buffer on the stack, a few names at a time: a
 * directory stream would cost three more calls a directory, at every
 * start, and the sample wants the first names only.  A directory this
 * uid cannot list says nothing (nor can the command list it). */
static bool sample_dir(struct sample *s, int fd, const char *rel, unsigned depth)
{
	cleanup_close int dfd = fd;
	const char *first = depth == 0 ? s->farm->first : NULL;
	unsigned files = 0, dirs = 0;
	/* getdents64(2) fills it with struct dirent64 records, 8-aligned. */
	_Alignas(struct dirent64) char buf[2048];
	ssize_t got;

	if (!s->dirs)
		return false;
	s->dirs--;
	if (first && sample_entry(s, dfd, rel, first, DT_DIR, depth, &files, &dirs))
		return true;
	for (;;) {
		got = getdents64(dfd, buf, sizeof(buf));
		if (got == 0)
			break;
		/* A listing cut short (ENOMEM, EIO) is not its end: the
		 * names past it unsampled, the farm unknown.  EACCES: this
		 * uid cannot list it, nor can the command. */
		if (got < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EACCES || errno == ENOENT)
				break;
			s->failed = errno;
			return true;
		}
		for (ssize_t at = 0; at < got;) {
			const struct dirent64 *e = (const struct dirent64 *)(const void *)(buf + at);

			at += e->d_reclen;
			if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") ||
			    passed_over(s->farm, e->d_name, depth) || (first && !strcmp(e->d_name, first)))
				continue;
			if (sample_entry(s, dfd, rel, e->d_name, e->d_type, depth, &files, &dirs))
				return true;
			if (!s->files || (files >= LINK_FARM_PER_DIR && (dirs >= LINK_FARM_PER_DIR || !s->dirs)))
				return false; /* nothing more this directory could give */
		}
	}
	return false;
}

int link_farm_sample(int top_fd, size_t kind, const char *rel, char **file, nlink_t *nlink)
{
	struct sample s = {.farm = &farms[kind], .files = LINK_FARM_FILES, .dirs = LINK_FARM_DIRS};
	int fd = moat_openat2(top_fd, rel, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC,
			      MOAT_RESOLVE_NO_SYMLINKS | MOAT_RESOLVE_NO_MAGICLINKS);

	if (fd < 0 && errno == ENOSYS) /* before Linux 5.6: the last name not followed */
		fd = openat(top_fd, rel, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 && out_of_resources(&s, errno))
		return -1;
	if (fd < 0 || !sample_dir(&s, fd, rel, 0) || s.failed) {
		free(s.file);
		errno = s.failed;
		return s.failed ? -1 : 0;
	}
	*file = s.file;
	*nlink = s.nlink;
	return 1;
}
