/*
 * json.h - JSON string literals from untrusted C strings.
 *
 * Names in a profile come from the target (symbols, perf maps, thread
 * names) and may hold any byte: quotes, control bytes, invalid UTF-8, or
 * "</script>" from a hostile process. Every writer of JSON (--stacks
 * --json, the flame graph page) goes through here so that the output is
 * always valid JSON and, in the HTML-safe form, can sit inside a <script>
 * element without ending it.
 */
#ifndef PMUTOP_JSON_H
#define PMUTOP_JSON_H

#include <stdio.h>

/*
 * Write s as a JSON string literal, quotes included (RFC 8259): '"', '\\'
 * and control bytes are escaped, bytes that are not valid UTF-8 (stray
 * continuation bytes, truncated or overlong sequences, surrogates) become
 * U+FFFD each. NULL is written as "".
 */
void json_write_string(FILE *out, const char *s);

/*
 * The same, also escaping '<', '>', '&', '\'' and U+2028/U+2029 as \uXXXX,
 * so that the literal is inert inside an HTML <script> element (no
 * "</script>", no "<!--") and in any JavaScript parser.
 */
void json_write_string_html(FILE *out, const char *s);

#endif
