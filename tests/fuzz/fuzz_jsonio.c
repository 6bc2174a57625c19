/* fuzz_jsonio.c — the JSON layer every reader shares (sim/base/jsonio.c): parsing,
 * the error locator that walks raw text along a path, and the typed getters.
 *
 * Input: the first line is a path such as "links[3].gbps", the rest is the
 * document. Properties: no crash, leak or UB; a located position lies inside
 * the text; errors name the file. */
#include "fuzz_common.h"
#include "sim/base/jsonio.h"

#define NAME "fuzz.json"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *nl = memchr(data, '\n', size);
    if (!nl)
        return 0;
    size_t plen = (size_t)(nl - (const char *)data);
    if (plen >= 200)
        return 0;
    char path[200];
    memcpy(path, data, plen);
    path[plen] = '\0';
    if (strlen(path) != plen)
        return 0;
    const char *text = nl + 1;
    size_t len = size - plen - 1;
    jdoc d;
    gt_err e;
    if (jdoc_parse(&d, NAME, text, len, &e)) {
        FUZZ_REQUIRE(fuzz_names(&e, NAME), "error does not name the file: %s", e.msg);
        return 0;
    }
    int line, col;
    jdoc_locate(&d, path, &line, &col);
    if (line) {
        int nlines = 1;
        for (size_t i = 0; i < len; i++)
            nlines += text[i] == '\n';
        FUZZ_REQUIRE(line >= 1 && line <= nlines && col >= 1 && (size_t)col <= len,
                     "located %s at %d:%d outside the text", path, line, col);
    }
    jdoc_fail(&d, &e, path, "test %d", 1);
    FUZZ_REQUIRE(fuzz_names(&e, NAME), "jdoc_fail does not name the file: %s", e.msg);
    static const char *const allowed[] = {"name", "sites", "links", NULL};
    jdoc_keys(&d, d.root, "", allowed, &e);
    double x;
    long l;
    char s[64];
    jdoc_num(&d, d.root, "", path, 0, -1, 1, 0, &x, &e);
    jdoc_int(&d, d.root, "", path, 1, 0, 10, 0, &l, &e);
    jdoc_str(&d, d.root, "", path, 1, NULL, s, sizeof s, &e);
    jdoc_free(&d);
    return 0;
}
