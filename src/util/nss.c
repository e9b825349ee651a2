#include "util/nss.h"

#include <nss.h>
#include <pthread.h>
#include <sys/auxv.h>

static void confine_once(void)
{
	/* No program interpreter (AT_BASE 0): a static program, whose libc
	 * must not load modules. */
	if (getauxval(AT_BASE) != 0)
		return;
	(void)__nss_configure_lookup("hosts", "files dns");
	(void)__nss_configure_lookup("passwd", "files");
	(void)__nss_configure_lookup("group", "files");
}

void nss_confine(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	(void)pthread_once(&once, confine_once);
}
