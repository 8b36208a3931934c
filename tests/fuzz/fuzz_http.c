/*
 * fuzz_http.c - fuzz target: what a client controls in a request.
 *
 * libmicrohttpd parses the request line and headers; what pmutop does with
 * the results is its own: the query parameters (seconds, event, period),
 * the Host header check against DNS rebinding, HTML escaping of text put
 * into the index page, and the --http address. The input is split at NUL
 * bytes into those strings.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "fuzz.h"
#include "pmutop/frontend/http_server.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf = malloc(size + 6), *part[6], err[512], *esc;
	struct http_profile_req rq;
	struct sockaddr_storage ss;
	socklen_t sslen;
	size_t i, k = 0;

	if (!buf)
		return 0;
	memcpy(buf, data, size);
	memset(buf + size, 0, 6);
	part[k++] = buf;
	for (i = 0; i < size && k < 6; i++)
		if (buf[i] == '\0')
			part[k++] = buf + i + 1;
	while (k < 6)
		part[k++] = buf + size; /* "" */
	(void)http_parse_profile_query(part[0][0] ? part[0] : NULL, part[1][0] ? part[1] : NULL,
				       part[2][0] ? part[2] : NULL, 300, &rq, err, sizeof(err));
	(void)http_check_host(part[3], "fuzzhost", part[4], err, sizeof(err));
	(void)http_check_host(part[0], NULL, NULL, err, sizeof(err));
	esc = http_html_escape(part[5]);
	if (esc && strchr(esc, '<'))
		abort(); /* escaping failed */
	free(esc);
	/* Numeric forms only: a name would ask the resolver. */
	if (strspn(part[4], "0123456789.:[]abcdefABCDEF") == strlen(part[4]))
		(void)http_parse_listen(part[4], &ss, &sslen, err, sizeof(err));
	free(buf);
	return 0;
}
