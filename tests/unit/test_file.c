/* Unit tests of util/file.c: a file read without following a link at its
 * name, and replaced atomically -- its mode kept, nothing left beside it,
 * and never over a change another program made after it was read. */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tap.h"
#include "util/file.h"

static char dir[] = "/tmp/moat-test-file.XXXXXX";

static void put(const char *name, const char *text, mode_t mode)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	if (f) {
		fputs(text, f);
		fclose(f);
	}
	chmod(path, mode);
}

static char *get(int dfd, const char *name, struct stat *st)
{
	struct moat_error err = {0};
	char *text = NULL;
	size_t len;

	if (file_read_at(dfd, name, name, 1 << 20, false, &text, &len, st, &err) < 0)
		return NULL;
	return text;
}

static int entries(void)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	while (d && (e = readdir(d)))
		n += e->d_name[0] != '.' || (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0);
	if (d)
		closedir(d);
	return n;
}

int main(void)
{
	struct moat_error err = {0};
	struct stat st, now;
	char *text;
	int dfd;

	if (!mkdtemp(dir)) {
		ok(0, "mkdtemp");
		return tap_done();
	}
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	put("a.json", "{\"old\": 1}\n", 0640);
	text = get(dfd, "a.json", &st);
	is_str(text, "{\"old\": 1}\n", "read whole");
	free(text);
	ok(file_replace_at(dfd, "a.json", "a.json", "{\"new\": 2}\n", 11, st.st_mode, &st, false, &err) == 0,
	   "replaced while unchanged (%s)", err.message);
	text = get(dfd, "a.json", &now);
	is_str(text, "{\"new\": 2}\n", "  the new bytes");
	free(text);
	ok((now.st_mode & 07777) == 0640 && now.st_ino != st.st_ino, "  a new file, with the old one's mode");
	ok(entries() == 1, "  nothing left beside it");

	/* Another program writes it after moat read it. */
	put("a.json", "{\"theirs\": 3, \"longer\": true}\n", 0640);
	memset(&err, 0, sizeof(err));
	ok(file_replace_at(dfd, "a.json", "a.json", "{\"mine\": 4}\n", 12, now.st_mode, &now, false, &err) < 0 &&
	       strstr(err.message, "changed by another program"),
	   "refused over another program's change (%s)", err.message);
	text = get(dfd, "a.json", &now);
	is_str(text, "{\"theirs\": 3, \"longer\": true}\n", "  their bytes kept");
	free(text);
	ok(entries() == 1, "  and nothing left beside it");

	memset(&err, 0, sizeof(err));
	ok(file_replace_at(dfd, "a.json", "a.json", "x", 1, 0600, NULL, false, &err) < 0,
	   "a file that was not read is not replaced unless asked");
	ok(file_replace_at(dfd, "a.json.moat-backup", "b", "x", 1, 0600, NULL, true, &err) == 0 &&
	       file_replace_at(dfd, "a.json.moat-backup", "b", "y", 1, 0600, NULL, true, &err) == 0,
	   "  a backup is made and replaced");
	ok(file_replace_at(dfd, "new.toml", "new.toml", "n = 1\n", 6, 0600, NULL, false, &err) == 0,
	   "a new file where there was none");

	if (symlinkat("a.json", dfd, "link.json") == 0) {
		memset(&err, 0, sizeof(err));
		ok(!get(dfd, "link.json", &now), "a symlink at the name is not followed");
	}
	unlinkat(dfd, "a.json", 0);
	unlinkat(dfd, "a.json.moat-backup", 0);
	unlinkat(dfd, "new.toml", 0);
	unlinkat(dfd, "link.json", 0);
	close(dfd);
	rmdir(dir);
	return tap_done();
}
