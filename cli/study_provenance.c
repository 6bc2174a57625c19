/* study_provenance.c — the provenance of a study's CSV, kept beside it in
 * FILE.provenance.json (see study_provenance.h, docs/cli.md "Provenance").
 *
 * The CSV stays tidy (one kind of row, no comment lines a CSV reader would
 * trip on); the sidecar says what wrote it. A study is resumable, so one CSV
 * may be written by several invocations: each appends its block (version,
 * commit, command line, input checksums, rows it added) to "invocations",
 * oldest first. */
#include "cli/study_provenance.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/version.h"
#include "sim/base/datadir.h"
#include "sim/base/jsonio.h"

/* The catalogs and tables every study reads, by the name datadir finds. */
static const char *const TABLES[] = {"regions.csv", "wan_measured.csv", "models.csv",
                                     "gpus.csv"};
enum { NTABLES = sizeof TABLES / sizeof *TABLES, MAX_INPUTS = 64 };

void study_provenance_path(const char *csv, char *out, size_t cap)
{
    snprintf(out, cap, "%s.provenance.json", csv);
}

/* The earlier invocations' blocks, or a new array when there is no sidecar. */
static json_t *earlier(const char *path, gt_err *e)
{
    struct stat st;
    if (stat(path, &st) && errno == ENOENT)
        return json_array();
    jdoc d;
    if (jdoc_load(&d, path, e))
        return NULL;
    json_t *inv = json_is_object(d.root) ? json_object_get(d.root, "invocations") : NULL;
    if (!json_is_array(inv)) {
        jdoc_free(&d);
        gt_fail(e, "%s: not a study provenance file (expected an object with an "
                   "\"invocations\" array); move it away or use another -o", path);
        return NULL;
    }
    json_incref(inv);
    jdoc_free(&d);
    return inv;
}

int study_provenance_check(const char *csv, gt_err *e)
{
    char path[4200];
    study_provenance_path(csv, path, sizeof path);
    json_t *inv = earlier(path, e);
    json_decref(inv);
    return inv ? 0 : -1;
}

/* Model arguments that are files, the --profile file, and the tables. */
static int inputs_of(const char *models, const char *profile, char (*buf)[4096],
                     const char **in)
{
    int n = 0;
    if (profile)
        in[n++] = profile;
    for (const char *p = models ? models : ""; *p && n < MAX_INPUTS - NTABLES;) {
        size_t len = strcspn(p, ",");
        snprintf(buf[n], sizeof buf[n], "%.*s", (int)len, p);
        in[n] = buf[n];
        n++;
        p += len + (p[len] == ',');
    }
    for (int t = 0; t < NTABLES; t++)
        if (!datadir_find(TABLES[t], buf[n], sizeof buf[n])) {
            in[n] = buf[n];
            n++;
        }
    return n;
}

int study_provenance_write(const char *csv, const char *models, const char *profile,
                           const study_summary *sum, gt_err *e)
{
    char path[4200];
    study_provenance_path(csv, path, sizeof path);
    json_t *inv = earlier(path, e);
    if (!inv)
        return -1;
    if (json_array_size(inv) > 0 && sum->ran == 0) { /* nothing new to account for */
        json_decref(inv);
        return 0;
    }
    static char buf[MAX_INPUTS][4096]; /* rank 0 calls this once, at the end */
    const char *in[MAX_INPUTS];
    int n = inputs_of(models, profile, buf, in);
    json_t *block = cli_provenance(in, n);
    json_object_set_new(block, "rows_added", json_integer(sum->ran));
    json_object_set_new(block, "complete", json_boolean(sum->complete));
    json_array_append_new(inv, block);
    json_t *root = json_object();
    json_object_set_new(root, "csv", json_string(csv));
    json_object_set_new(root, "rows", json_integer(sum->skipped + sum->ran));
    json_object_set_new(root, "invocations", inv);
    int rc = json_write_atomic(root, path, e);
    json_decref(root);
    return rc;
}
