/* Denied files with another hard link.
 *
 * Denies hold names: a Landlock rule on a directory covers every name below
 * it, the view masks a name.  A denied file with a second name inside a
 * grant (`ln ~/.ssh/id_rsa proj/key`, or `cp -al` of a profile, made before
 * the run by the user or a tool of theirs) is read through that name, the
 * kernel asks nothing of the first.  No call maps an inode to its names, so
 * moat cannot tell where the other name lies; what it can tell is that one
 * exists: every file below a denied directory is one stat away, and a file
 * whose link count is higher than the number of its names moat saw inside
 * the denied paths has a name elsewhere.
 *
 * The walk is bounded (LINK_SCAN_ENTRIES entries, LINK_SCAN_DEPTH levels):
 * a browser profile holds tens of thousands of files, each stat ~1.2 us
 * here, and moat starts before every command.  It is breadth first over
 * all the denied directories together, so that the bound cuts the deepest
 * levels (caches, a profile's storage), not the credential directories nor
 * the top of a profile.  What the bound leaves out is not judged either
 * way: the first directory left out under each deny is recorded
 * (fs_obj.link_unchecked) and said in fs.secrets's mechanism, so that the
 * claim says how far it was checked.  docs/filesystem.md, section 3. */
#ifndef MOAT_RESOLVE_LINKSCAN_H
#define MOAT_RESOLVE_LINKSCAN_H

#include "resolve/fsplan.h"

#define LINK_SCAN_ENTRIES 1024
#define LINK_SCAN_DEPTH 32
#define LINK_SCAN_OPEN 512 /* directories queued at once, each a descriptor */

/* Sets fs_obj.linked_secret on each present deny with a file that has a
 * name outside the denied paths, and fs_obj.link_unchecked on each denied
 * directory the bound left partly unwalked.  Uses the denies' descriptors,
 * never their names: a rename after planning changes nothing here.  -1
 * (err set) when moat ran out of descriptors or memory on the way: what
 * was not walked is not known. */
int fs_find_linked_denies(struct fs_plan *fp, struct moat_error *err);

#endif
